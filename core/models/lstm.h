// LSTM language model: the copy paper's GSSM baseline. Its state is (h, c) per layer.
// Legend: B batch, T time, C hidden = d_model, V vocab, L layers.
#pragma once

#include "core/models/sequencemodel.h"

namespace parrot {

struct LstmOptions {
    int64_t vocabSize = 30;
    int64_t dModel = 128;
    int64_t layers = 2;
    bool tieEmbeddings = false;
};

class LstmLMImpl : public SequenceModelImpl {
public:
    explicit LstmLMImpl(const LstmOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    StateSize stateSize() const override { return {2 * m_o.dModel * m_o.layers, 0}; }
    // One token: idx (B) -> logits (B, V); `state` (h, c), each (L, B, C), starts undefined.
    torch::Tensor step(const torch::Tensor& idx, std::tuple<torch::Tensor, torch::Tensor>& state);

    torch::nn::Embedding embedding{nullptr};
    torch::nn::LSTM lstm{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    LstmOptions m_o;
};

}  // namespace parrot
