// Decoder-only, pre-LayerNorm Transformer in the shape of nanoGPT's model.py.
// Legend: B batch, T time, C channels (d_model), V vocab, H heads, D head size (C / H).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace parrot {

enum class Positions {
    NoPE,       // causal mask only (Kazemnejad et al., 2023)
    HardAlibi,  // copy paper, section 3: head i < num_masked_heads sees keys with 0 <= q - k <= i
};

struct TransformerOptions {
    int64_t vocabSize = 30;
    int64_t dModel = 128;
    int64_t heads = 8;
    int64_t layers = 2;
    int64_t mlpRatio = 4;
    Positions positions = Positions::HardAlibi;
    int64_t numMaskedHeads = 4;
    bool tieEmbeddings = false;
};

// Which keys each head may see: (H, T, T) bool, true where query q may attend to key k.
torch::Tensor attentionMask(const TransformerOptions& o, int64_t T, torch::Device device);

class CausalSelfAttentionImpl : public torch::nn::Module {
public:
    explicit CausalSelfAttentionImpl(const TransformerOptions& o);
    // x: (B, T, C), allowed: (H, T, T) -> (B, T, C); weights, when given, receives (B, H, T, T).
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& allowed, torch::Tensor* weights = nullptr);

    torch::nn::Linear c_attn{nullptr};  // fused q, k, v projection, C -> 3C
    torch::nn::Linear c_proj{nullptr};  // C -> C, back into the residual stream

private:
    int64_t m_heads;
};
TORCH_MODULE(CausalSelfAttention);

class MlpImpl : public torch::nn::Module {
public:
    explicit MlpImpl(const TransformerOptions& o);
    torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)
    torch::nn::Linear c_fc{nullptr};
    torch::nn::Linear c_proj{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
public:
    explicit BlockImpl(const TransformerOptions& o);
    torch::Tensor forward(torch::Tensor x, const torch::Tensor& allowed, torch::Tensor* weights = nullptr);
    torch::nn::LayerNorm ln_1{nullptr};
    CausalSelfAttention attn{nullptr};
    torch::nn::LayerNorm ln_2{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

class TransformerImpl : public torch::nn::Module {
public:
    explicit TransformerImpl(const TransformerOptions& o);
    // idx: (B, T) int64 -> logits (B, T, V). When attention is given, it receives one
    // (B, H, T, T) tensor of softmax weights per layer; otherwise nothing is kept.
    torch::Tensor forward(const torch::Tensor& idx, std::vector<torch::Tensor>* attention = nullptr);

    const TransformerOptions& options() const { return m_options; }

    torch::nn::Embedding wte{nullptr};
    torch::nn::ModuleList h{nullptr};
    torch::nn::LayerNorm ln_f{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    TransformerOptions m_options;
};
TORCH_MODULE(Transformer);

}  // namespace parrot
