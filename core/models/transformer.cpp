#include "transformer.h"

#include <cmath>

namespace parrot {

torch::Tensor attentionMask(const TransformerOptions& o, int64_t T, torch::Device device)
{
    auto pos = torch::arange(T, torch::TensorOptions().dtype(torch::kLong).device(device));
    auto dist = pos.unsqueeze(1) - pos.unsqueeze(0);  // (T, T): q - k
    auto causal = dist.ge(0);
    if (o.positions == Positions::NoPE || o.numMaskedHeads == 0)
        return causal.unsqueeze(0).expand({o.heads, T, T});
    // Hard-ALiBi: head i < m sees only the last i+1 tokens (itself included).
    auto window = torch::full({o.heads, 1, 1}, T, pos.options());
    window.slice(0, 0, o.numMaskedHeads).copy_(torch::arange(o.numMaskedHeads, pos.options()).view({-1, 1, 1}));
    return causal.unsqueeze(0) & dist.unsqueeze(0).le(window);
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const TransformerOptions& o) : m_heads(o.heads)
{
    c_attn = register_module("c_attn", torch::nn::Linear(o.dModel, 3 * o.dModel));
    c_proj = register_module("c_proj", torch::nn::Linear(o.dModel, o.dModel));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& allowed,
                                               torch::Tensor* weights)
{
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = m_heads, D = C / H;
    auto qkv = c_attn(x).view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});  // (3, B, H, T, D)
    auto q = qkv[0], k = qkv[1], v = qkv[2];
    // Explicit attention (LibTorch 1.13 has no fused SDPA, and the probes need the weights).
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(D));  // (B, H, T, T)
    scores = scores.masked_fill(allowed.logical_not().unsqueeze(0), -std::numeric_limits<float>::infinity());
    auto att = torch::softmax(scores, -1);
    if (weights) *weights = att.detach();
    auto y = torch::matmul(att, v).transpose(1, 2).reshape({B, T, C});  // (B, T, C)
    return c_proj(y);
}

MlpImpl::MlpImpl(const TransformerOptions& o)
{
    c_fc = register_module("c_fc", torch::nn::Linear(o.dModel, o.mlpRatio * o.dModel));
    c_proj = register_module("c_proj", torch::nn::Linear(o.mlpRatio * o.dModel, o.dModel));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x)
{
    return c_proj(torch::gelu(c_fc(x)));
}

BlockImpl::BlockImpl(const TransformerOptions& o)
{
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel})));
    attn = register_module("attn", CausalSelfAttention(o));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel})));
    mlp = register_module("mlp", Mlp(o));
}

torch::Tensor BlockImpl::forward(torch::Tensor x, const torch::Tensor& allowed, torch::Tensor* weights)
{
    x = x + attn(ln_1(x), allowed, weights);
    return x + mlp(ln_2(x));
}

TransformerImpl::TransformerImpl(const TransformerOptions& o) : m_options(o)
{
    wte = register_module("wte", torch::nn::Embedding(o.vocabSize, o.dModel));
    h = register_module("h", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.layers; ++i) h->push_back(Block(o));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel})));
    if (!o.tieEmbeddings)  // tied: the output layer reuses wte.weight and has no parameter of its own
        lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(o.dModel, o.vocabSize).bias(false)));

    // GPT-2 initialisation: N(0, 0.02) everywhere, and the projections that write into the
    // residual stream scaled by 1/sqrt(2 * layers) so its variance does not grow with depth.
    torch::NoGradGuard noGrad;
    for (auto& p : named_parameters()) {
        const std::string& name = p.key();
        if (name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0) {
            p.value().zero_();
        } else if (name.find("ln_") != std::string::npos) {
            p.value().fill_(1.0);
        } else if (name.find("c_proj.weight") != std::string::npos) {
            p.value().normal_(0.0, 0.02 / std::sqrt(2.0 * double(o.layers)));
        } else {
            p.value().normal_(0.0, 0.02);
        }
    }
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& idx, std::vector<torch::Tensor>* attention)
{
    const int64_t T = idx.size(1);
    auto allowed = attentionMask(m_options, T, idx.device());
    auto x = wte(idx);  // (B, T, C)
    if (attention) attention->clear();
    for (const auto& module : *h) {
        torch::Tensor w;
        x = module->as<BlockImpl>()->forward(x, allowed, attention ? &w : nullptr);
        if (attention) attention->push_back(w);
    }
    x = ln_f(x);
    return m_options.tieEmbeddings ? torch::linear(x, wte->weight) : lm_head(x);  // (B, T, V)
}

}  // namespace parrot
