// The hybrids of "Can Mamba Learn How to Learn?" (Park et al., 2024), section 5:
//  - standard: learned absolute positions, then layers of (attention, Mamba): Mamba takes
//    the place of each Transformer block's MLP;
//  - MambaFormer: no positional encoding; one Mamba block first, then layers of (attention, Mamba).
// Every sub-block is residual and pre-norm. Legend: B batch, T time, C d_model, V vocab.
#pragma once

#include "core/models/mamba.h"
#include "core/models/transformer.h"

namespace parrot {

struct HybridOptions {
    int64_t vocabSize = 30;
    int64_t dModel = 128;
    int64_t heads = 8;
    int64_t layers = 2;          // (attention, Mamba) pairs
    int64_t maxPositions = 1024;
    int64_t shortConv = 0;       // width of the causal convolution before each attention sub-block; 0: none
    bool mambaFormer = false;
    bool tieEmbeddings = false;
    MambaOptions mamba;
};

class HybridLMImpl : public SequenceModelImpl {
public:
    explicit HybridLMImpl(const HybridOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    // The last (Mamba) sub-block at the scored rows only.
    torch::Tensor forwardAt(const torch::Tensor& idx, const torch::Tensor& rows) override;
    StateSize stateSize() const override;

    torch::nn::Embedding wte{nullptr};
    torch::nn::Embedding wpe{nullptr};   // standard hybrid only
    torch::nn::ModuleList layers{nullptr};
    torch::nn::LayerNorm ln_f{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    torch::Tensor positioned(const torch::Tensor& input);  // + the learned positions, where there are any
    HybridOptions m_o;
    TransformerOptions m_attention;
    std::vector<bool> m_isAttention;
};

}  // namespace parrot
