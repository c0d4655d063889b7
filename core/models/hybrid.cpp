#include "core/models/hybrid.h"

namespace parrot {

namespace {

// One residual sub-block: x + Mixer(Norm(x)), the mixer attention or Mamba.
class HybridBlockImpl : public torch::nn::Module {
public:
    HybridBlockImpl(const TransformerOptions* attention, const MambaOptions* mamba)
    {
        const int64_t C = attention ? attention->dModel : mamba->dModel;
        norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
        if (attention) attn = register_module("attn", CausalSelfAttention(*attention));
        else mixer = register_module("mixer", MambaMixer(*mamba));
    }
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias, Probes* probes, int layer)
    {
        if (attn) {
            torch::Tensor w;
            auto y = x + attn(norm(x), bias, probes ? &w : nullptr);
            if (probes) {
                probes->attention.push_back(w);
                probes->attentionLayer.push_back(layer);
            }
            return y;
        }
        return x + mixer->forward(norm(x), probes, layer);
    }
    // A Mamba sub-block's output at some positions (R) only: (B, T, C) -> (R, C).
    torch::Tensor forwardAt(const torch::Tensor& x, const torch::Tensor& rows)
    {
        return x.reshape({-1, x.size(-1)}).index_select(0, rows) + mixer->forwardAt(norm(x), rows);
    }
    torch::nn::LayerNorm norm{nullptr};
    CausalSelfAttention attn{nullptr};
    MambaMixer mixer{nullptr};
};
TORCH_MODULE(HybridBlock);

}  // namespace

HybridLMImpl::HybridLMImpl(const HybridOptions& o) : m_o(o)
{
    m_attention.vocabSize = o.vocabSize;
    m_attention.dModel = o.dModel;
    m_attention.heads = o.heads;
    m_attention.layers = o.layers;
    m_attention.positions = o.mambaFormer ? Positions::NoPE : Positions::Learned;
    m_attention.numMaskedHeads = 0;
    m_attention.shortConv = o.shortConv;
    MambaOptions mamba = o.mamba;
    mamba.dModel = o.dModel;

    wte = register_module("wte", torch::nn::Embedding(o.vocabSize, o.dModel));
    if (!o.mambaFormer) wpe = register_module("wpe", torch::nn::Embedding(o.maxPositions, o.dModel));
    layers = register_module("layers", torch::nn::ModuleList());
    if (o.mambaFormer) m_isAttention.push_back(false);
    for (int64_t i = 0; i < o.layers; ++i) {
        m_isAttention.push_back(true);
        m_isAttention.push_back(false);
    }
    for (bool a : m_isAttention) layers->push_back(HybridBlock(a ? &m_attention : nullptr, a ? nullptr : &mamba));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel})));
    lm_head = registerLmHead(*this, o.dModel, o.vocabSize, o.tieEmbeddings);

    // GPT-2 init for the attention side; the Mamba mixers keep their own (mamba_simple.py).
    torch::NoGradGuard noGrad;
    wte->weight.normal_(0.0, 0.02);
    if (wpe) wpe->weight.normal_(0.0, 0.02);
    if (lm_head) lm_head->weight.normal_(0.0, 0.02);
    for (const auto& block : *layers) {
        auto* b = block->as<HybridBlockImpl>();
        if (b->attn) gpt2Init(*b->attn, int64_t(m_isAttention.size()));
    }
}

torch::Tensor HybridLMImpl::embed(const torch::Tensor& idx) { return wte(idx); }

torch::Tensor HybridLMImpl::head(const torch::Tensor& x) { return lmLogits(x, lm_head, wte->weight); }

torch::Tensor HybridLMImpl::positioned(const torch::Tensor& input)
{
    if (!wpe) return input;
    const int64_t T = input.size(1);
    TORCH_CHECK(T <= m_o.maxPositions, "learned positions cover ", m_o.maxPositions, " tokens; this input has ", T,
                " (raise model.max_positions)");
    return input + wpe(torch::arange(T, input.options().dtype(torch::kLong)));
}

torch::Tensor HybridLMImpl::hidden(const torch::Tensor& input, Probes* probes)
{
    const auto bias = layerBias(m_attention, input, probes != nullptr);
    auto x = positioned(input);
    int layer = 0;
    for (const auto& block : *layers) x = block->as<HybridBlockImpl>()->forward(x, bias, probes, layer++);
    return ln_f(x);
}

torch::Tensor HybridLMImpl::forwardAt(const torch::Tensor& idx, const torch::Tensor& rows)
{
    // The last sub-block is a Mamba one in both layouts: everything before it in full, it at the rows.
    if (layers->size() == 0 || m_isAttention.back()) return SequenceModelImpl::forwardAt(idx, rows);
    const auto input = embed(idx);
    const auto bias = layerBias(m_attention, input, false);
    auto x = positioned(input);
    const size_t last = layers->size() - 1;
    for (size_t i = 0; i < last; ++i) x = layers->at<HybridBlockImpl>(i).forward(x, bias, nullptr, int(i));
    return head(ln_f(layers->at<HybridBlockImpl>(last).forwardAt(x, rows)));  // (R, V)
}

StateSize HybridLMImpl::stateSize() const
{
    long long mambaLayers = 0, attentionLayers = 0;
    for (bool a : m_isAttention) (a ? attentionLayers : mambaLayers) += 1;
    MambaOptions m = m_o.mamba;
    m.dModel = m_o.dModel;
    const long long conv = m_o.shortConv > 0 ? attentionLayers * m_o.dModel * (m_o.shortConv - 1) : 0;
    return {mambaLayers * m.dInner() * (m.dState + m.dConv - 1) + conv, 2 * attentionLayers * m_o.dModel};
}

}  // namespace parrot
