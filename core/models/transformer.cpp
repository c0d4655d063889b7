#include "core/models/transformer.h"

#include "core/kernels/fastpaths.h"
#include "core/models/dense.h"
#include "core/torchcompat.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace parrot {

Positions positionsFromName(const std::string& name)
{
    if (name == "nope") return Positions::NoPE;
    if (name == "learned") return Positions::Learned;
    if (name == "rope") return Positions::Rope;
    if (name == "alibi") return Positions::Alibi;
    if (name == "hard_alibi") return Positions::HardAlibi;
    throw std::invalid_argument("unknown positions: " + name);
}

torch::Tensor alibiSlopes(int64_t heads)
{
    auto h = torch::arange(1, heads + 1, torch::kFloat);
    return torch::pow(2.0, -8.0 * h / double(heads));
}

torch::Tensor attentionBias(const TransformerOptions& o, int64_t T, torch::Device device)
{
    return attentionBiasRows(o, 0, T, T, device);
}

torch::Tensor attentionBiasRows(const TransformerOptions& o, int64_t offset, int64_t queries, int64_t keys, torch::Device device)
{
    const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
    auto q = torch::arange(offset, offset + queries, longs), k = torch::arange(keys, longs);
    auto dist = q.unsqueeze(1) - k.unsqueeze(0);  // (queries, keys): q - k
    auto allowed = dist.ge(0).unsqueeze(0).expand({o.heads, queries, keys});
    if (o.positions == Positions::HardAlibi && o.numMaskedHeads > 0) {
        // head i < m sees only the last i+1 tokens, itself included; the rest see everything before
        auto window = torch::full({o.heads, 1, 1}, keys + offset + queries, longs);
        window.slice(0, 0, o.numMaskedHeads).copy_(torch::arange(o.numMaskedHeads, longs).view({-1, 1, 1}));
        allowed = allowed & dist.unsqueeze(0).le(window);
    }
    auto bias = torch::zeros({o.heads, queries, keys}, torch::TensorOptions().dtype(torch::kFloat).device(device));
    if (o.positions == Positions::Alibi)
        bias = -alibiSlopes(o.heads).to(device).view({-1, 1, 1}) * dist.unsqueeze(0).clamp_min(0).to(torch::kFloat);
    return bias.masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity());
}

torch::Tensor applyRotary(const torch::Tensor& x, int64_t rotaryDims, int64_t offset, double base)
{
    if (rotaryDims <= 0) return x;
    const int64_t T = x.size(-2), half = rotaryDims / 2;
    auto fopts = torch::TensorOptions().dtype(x.scalar_type()).device(x.device());
    auto invFreq = 1.0 / torch::pow(base, torch::arange(0, rotaryDims, 2, fopts) / double(rotaryDims));  // (R/2)
    auto t = torch::arange(offset, offset + T, fopts);
    auto freqs = torch::outer(t, invFreq);          // (T, R/2)
    auto emb = torch::cat({freqs, freqs}, -1);      // (T, R)
    auto cos = emb.cos(), sin = emb.sin();
    auto rot = x.narrow(-1, 0, rotaryDims);
    auto pass = x.narrow(-1, rotaryDims, x.size(-1) - rotaryDims);
    auto rotated = torch::cat({-rot.narrow(-1, half, half), rot.narrow(-1, 0, half)}, -1);  // rotate_half
    return torch::cat({rot * cos + rotated * sin, pass}, -1);
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const TransformerOptions& o)
    : m_heads(o.heads), m_rotaryDims(0), m_rotaryBase(o.rotaryBase)
{
    // Zoology's recipe for recall (Arora et al. 2023): a short convolution before attention hands each
    // position its few previous tokens, so one attention layer can find "the token after the key"
    // without first learning a previous-token head. Initialised as torch's Conv1d, as Mamba's conv1d.
    if (o.shortConv > 0)
        conv1d = register_module("conv1d", torch::nn::Conv1d(torch::nn::Conv1dOptions(o.dModel, o.dModel, o.shortConv).groups(o.dModel)));
    c_attn = register_module("c_attn", storedLinear(torch::nn::LinearOptions(o.dModel, 3 * o.dModel)));
    c_proj = register_module("c_proj", storedLinear(torch::nn::LinearOptions(o.dModel, o.dModel)));
    const int64_t D = o.dModel / o.heads;
    if (o.positions == Positions::Rope) m_rotaryDims = (int64_t(o.rotaryFraction * double(D)) / 2) * 2;
    if (o.repeatPassDims) {
        // cat(q, q[r:]) . cat(k, k[r:]) = q . k + q[r:] . k[r:], r = int(D * rotary_pct) as in GPT-NeoX
        const int64_t r = std::min(D, int64_t(double(D) * o.rotaryFraction));
        m_scoreScale = torch::ones({D});
        m_scoreScale.slice(0, r, D).fill_(2.0);
    }
    m_pattern.heads = o.heads;
    m_pattern.scale = 1.0 / std::sqrt(double(D));
    m_pattern.window.assign(size_t(o.heads), std::numeric_limits<int64_t>::max());
    if (o.positions == Positions::HardAlibi)
        for (int64_t h = 0; h < std::min(o.numMaskedHeads, o.heads); ++h) m_pattern.window[size_t(h)] = h;
    if (o.positions == Positions::Alibi) {
        const auto slopes = alibiSlopes(o.heads);
        for (int64_t h = 0; h < o.heads; ++h) m_pattern.slopes.push_back(slopes[h].item<double>());
    }
}

bool attentionFuses(const TransformerOptions& o, const torch::Tensor& x)
{
    return fastPaths() && o.positions != Positions::Rope && !o.repeatPassDims && attentionFusedApplies(x);
}

torch::Tensor layerBias(const TransformerOptions& o, const torch::Tensor& x, bool probes)
{
    return !probes && attentionFuses(o, x) ? torch::Tensor() : attentionBias(o, x.size(1), x.device());
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& bias, torch::Tensor* weights)
{
    return dense(c_proj, mix(x, bias, weights));
}

torch::Tensor CausalSelfAttentionImpl::shortConv(const torch::Tensor& x, const torch::Tensor& before)
{
    if (!conv1d) return x;
    const int64_t T = x.size(1), W = conv1d->weight.size(-1);
    auto padded = before.defined() ? torch::cat({before, x}, 1) : torch::constant_pad_nd(x, {0, 0, W - 1, 0});  // (B, W - 1 + T, C)
    return conv1d(padded.transpose(1, 2)).transpose(1, 2).narrow(1, 0, T);                                      // (B, T, C)
}

namespace {
thread_local const HeadAblation* t_ablation = nullptr;
}  // namespace

HeadAblationScope::HeadAblationScope(const HeadAblation& ablation) : m_previous(t_ablation)
{
    t_ablation = ablation.isEmpty() ? nullptr : &ablation;
}
HeadAblationScope::~HeadAblationScope() { t_ablation = m_previous; }
const HeadAblation* HeadAblationScope::current() { return t_ablation; }
const HeadAblation* HeadAblationScope::exchange(const HeadAblation* ablation)
{
    const HeadAblation* previous = t_ablation;
    t_ablation = ablation && !ablation->isEmpty() ? ablation : nullptr;
    return previous;
}

torch::Tensor CausalSelfAttentionImpl::ablated(const torch::Tensor& y) const { return headsSwitchedOff(y, m_layer, m_heads); }

torch::Tensor headsSwitchedOff(const torch::Tensor& y, int layerIndex, int64_t headCount)
{
    const HeadAblation* a = t_ablation;
    if (!a || layerIndex < 0) return y;
    std::vector<int64_t> off;
    for (const auto& [layer, head] : a->heads)
        if (layer == layerIndex && head >= 0 && head < headCount) off.push_back(head);
    if (off.empty()) return y;
    const int64_t B = y.size(0), T = y.size(1), H = headCount, D = y.size(2) / H;
    auto keep = torch::ones({H}, y.options());
    for (int64_t h : off) keep[h] = 0.0;
    const auto heads = y.reshape({B, T, H, D});
    auto out = heads * keep.view({1, 1, H, 1});
    if (a->method == HeadAblation::Method::Mean) out = out + heads.mean(1, true) * (1.0 - keep).view({1, 1, H, 1});
    return out.reshape({B, T, H * D});
}

torch::Tensor CausalSelfAttentionImpl::mix(const torch::Tensor& input, const torch::Tensor& bias, torch::Tensor* weights)
{
    if (t_ablation && m_layer >= 0) return ablated(mixed(input, bias, weights));
    return mixed(input, bias, weights);
}

torch::Tensor CausalSelfAttentionImpl::mixed(const torch::Tensor& input, const torch::Tensor& bias, torch::Tensor* weights)
{
    const auto x = shortConv(input);
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = m_heads, D = C / H;
    if (!bias.defined()) return attentionFused(dense(c_attn, x), m_pattern);
    auto qkv = dense(c_attn, x).view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});  // (3, B, H, T, D)
    auto q = applyRotary(qkv[0], m_rotaryDims, 0, m_rotaryBase), k = applyRotary(qkv[1], m_rotaryDims, 0, m_rotaryBase), v = qkv[2];
    if (m_scoreScale.defined()) q = q * m_scoreScale.to(q.device());
    if (!weights) return compat::attention(q, k, v, bias).transpose(1, 2).reshape({B, T, C});  // (B, T, C)
    // Explicit attention where the probes need the weights.
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(D)) + bias.unsqueeze(0);  // (B, H, T, T)
    auto att = torch::softmax(scores, -1);
    *weights = att.detach();
    return torch::matmul(att, v).transpose(1, 2).reshape({B, T, C});  // (B, T, C)
}

torch::Tensor CausalSelfAttentionImpl::mixCached(const torch::Tensor& input, torch::Tensor& K, torch::Tensor& V, torch::Tensor& convState,
                                                int64_t offset, const torch::Tensor& bias)
{
    torch::Tensor x = input;
    if (conv1d) {
        const int64_t W = conv1d->weight.size(-1);
        if (!convState.defined()) convState = torch::zeros({input.size(0), W - 1, input.size(2)}, input.options());
        x = shortConv(input, convState);
        convState = torch::cat({convState, input}, 1).narrow(1, input.size(1), W - 1).contiguous();  // the last W - 1 inputs
    }
    const int64_t B = x.size(0), S = x.size(1), C = x.size(2), H = m_heads, D = C / H;
    auto qkv = dense(c_attn, x).view({B, S, 3, H, D}).permute({2, 0, 3, 1, 4});  // (3, B, H, S, D)
    auto q = applyRotary(qkv[0], m_rotaryDims, offset, m_rotaryBase), k = applyRotary(qkv[1], m_rotaryDims, offset, m_rotaryBase);
    if (m_scoreScale.defined()) q = q * m_scoreScale.to(q.device());
    K = K.defined() && K.size(2) > 0 ? torch::cat({K, k}, 2) : k.contiguous();  // (B, H, offset + S, D)
    V = V.defined() && V.size(2) > 0 ? torch::cat({V, qkv[2]}, 2) : qkv[2].contiguous();
    const auto y = compat::attention(q, K, V, bias).transpose(1, 2).reshape({B, S, C});  // bias (H, S, offset + S)
    // Zeroing holds token by token; a mean over the input is generated by whole forwards (eval/generate.cpp).
    return t_ablation && m_layer >= 0 && t_ablation->method == HeadAblation::Method::Zero ? ablated(y) : y;
}

MlpImpl::MlpImpl(int64_t dModel, int64_t hidden)
{
    c_fc = register_module("c_fc", storedLinear(torch::nn::LinearOptions(dModel, hidden)));
    c_proj = register_module("c_proj", storedLinear(torch::nn::LinearOptions(hidden, dModel)));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) { return dense(c_proj, torch::gelu(dense(c_fc, x))); }

BlockImpl::BlockImpl(const TransformerOptions& o) : parallelResidual(o.parallelResidual)
{
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel}).eps(o.layerNormEps)));
    attn = register_module("attn", CausalSelfAttention(o));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel}).eps(o.layerNormEps)));
    mlp = register_module("mlp", Mlp(o.dModel, o.mlpRatio * o.dModel));
}

torch::Tensor BlockImpl::forward(torch::Tensor x, const torch::Tensor& bias, torch::Tensor* weights)
{
    if (parallelResidual) return x + attn(ln_1(x), bias, weights) + mlp(ln_2(x));
    x = x + attn(ln_1(x), bias, weights);
    return x + mlp(ln_2(x));
}

torch::Tensor BlockImpl::forwardAt(const torch::Tensor& x, const torch::Tensor& bias, const torch::Tensor& rows)
{
    const int64_t C = x.size(-1);
    auto pick = [&](const torch::Tensor& t) { return t.reshape({-1, C}).index_select(0, rows); };
    auto xr = pick(x);                                          // (R, C)
    auto a = dense(attn->c_proj, pick(attn->mix(ln_1(x), bias)));     // (R, C)
    if (parallelResidual) return xr + a + mlp(ln_2(xr));
    xr = xr + a;
    return xr + mlp(ln_2(xr));
}

torch::Tensor BlockImpl::decode(const torch::Tensor& x, torch::Tensor& K, torch::Tensor& V, torch::Tensor& convState, int64_t offset,
                                const torch::Tensor& bias)
{
    const auto a = dense(attn->c_proj, attn->mixCached(ln_1(x), K, V, convState, offset, bias));
    if (parallelResidual) return x + a + mlp(ln_2(x));
    const auto y = x + a;
    return y + mlp(ln_2(y));
}

void gpt2Init(torch::nn::Module& m, int64_t layers)
{
    torch::NoGradGuard noGrad;
    auto endsWith = [](const std::string& s, const std::string& tail) {
        return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (auto& p : m.named_parameters()) {
        if (isSixteenBit(p.value())) continue;  // built only to be loaded into
        const std::string& name = p.key();
        if (endsWith(name, ".bias")) p.value().zero_();
        else if (name.find("ln_") != std::string::npos || name.find("norm") != std::string::npos) p.value().fill_(1.0);
        else if (endsWith(name, "c_proj.weight") || endsWith(name, "out_proj.weight"))
            p.value().normal_(0.0, 0.02 / std::sqrt(2.0 * double(layers)));
        else p.value().normal_(0.0, 0.02);
    }
}

TransformerImpl::TransformerImpl(const TransformerOptions& o) : m_options(o)
{
    wte = register_module("wte", storedEmbedding(o.vocabSize, o.dModel));
    if (o.positions == Positions::Learned) wpe = register_module("wpe", torch::nn::Embedding(o.maxPositions, o.dModel));
    h = register_module("h", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.layers; ++i) {
        h->push_back(Block(o));
        h->at<BlockImpl>(size_t(i)).attn->setLayer(int(i));
    }
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.dModel}).eps(o.layerNormEps)));
    lm_head = registerLmHead(*this, o.dModel, o.vocabSize, o.tieEmbeddings);
    gpt2Init(*this, o.layers);
}

torch::Tensor TransformerImpl::embed(const torch::Tensor& idx) { return dense(wte, idx); }

torch::Tensor TransformerImpl::head(const torch::Tensor& x) { return lmLogits(x, lm_head, wte->weight); }

torch::Tensor TransformerImpl::blocks(const torch::Tensor& input, const torch::Tensor& bias, Probes* probes, int64_t skipLast)
{
    const int64_t T = input.size(1);
    auto x = input;  // (B, T, C)
    if (wpe) {
        TORCH_CHECK(T <= m_options.maxPositions, "learned positions cover ", m_options.maxPositions,
                    " tokens; this input has ", T, " (raise model.max_positions)");
        x = x + wpe(torch::arange(T, input.options().dtype(torch::kLong)));
    }
    const int64_t run = int64_t(h->size()) - skipLast;
    for (int64_t layer = 0; layer < run; ++layer) {
        torch::Tensor w;
        x = h->at<BlockImpl>(size_t(layer)).forward(x, bias, probes ? &w : nullptr);
        if (probes) {
            probes->attention.push_back(w);
            probes->attentionLayer.push_back(int(layer));
        }
    }
    return x;
}

torch::Tensor TransformerImpl::hidden(const torch::Tensor& input, Probes* probes)
{
    return ln_f(blocks(input, layerBias(m_options, input, probes != nullptr), probes, 0));
}

torch::Tensor TransformerImpl::forwardAt(const torch::Tensor& idx, const torch::Tensor& rows)
{
    if (h->size() == 0) return SequenceModelImpl::forwardAt(idx, rows);
    const auto input = embed(idx);
    const auto bias = layerBias(m_options, input, false);
    const auto x = blocks(input, bias, nullptr, 1);
    return head(ln_f(h->at<BlockImpl>(h->size() - 1).forwardAt(x, bias, rows)));  // (R, V)
}

namespace {
struct KvCache : DecodeState {
    std::vector<torch::Tensor> k, v;  // per layer: (B, H, length, D)
    std::vector<torch::Tensor> conv;  // per layer: the last short_conv - 1 inputs (B, W - 1, C), with a short convolution
};
}  // namespace

std::unique_ptr<DecodeState> TransformerImpl::startDecoding(int64_t, torch::TensorOptions)
{
    auto cache = std::make_unique<KvCache>();
    cache->k.resize(h->size());
    cache->v.resize(h->size());
    cache->conv.resize(h->size());
    return cache;
}

torch::Tensor TransformerImpl::decode(const torch::Tensor& idx, DecodeState& state)
{
    auto& cache = static_cast<KvCache&>(state);
    const int64_t S = idx.size(1), offset = cache.length;
    auto x = embed(idx);  // (B, S, C)
    if (wpe) {
        TORCH_CHECK(offset + S <= m_options.maxPositions, "learned positions cover ", m_options.maxPositions, " tokens; generating reached ",
                    offset + S);
        x = x + wpe(torch::arange(offset, offset + S, idx.options().dtype(torch::kLong)));
    }
    const auto bias = attentionBiasRows(m_options, offset, S, offset + S, idx.device());
    for (size_t layer = 0; layer < h->size(); ++layer)
        x = h->at<BlockImpl>(layer).decode(x, cache.k[layer], cache.v[layer], cache.conv[layer], offset, bias);
    cache.length += S;
    if (state.lastOnly && S > 1) x = x.narrow(1, S - 1, 1);
    return head(ln_f(x));  // (B, S, V), or (B, 1, V)
}

StateSize TransformerImpl::stateSize() const
{
    // The KV cache: keys and values of every layer for every token seen; a short convolution keeps
    // its last W - 1 inputs besides.
    const int64_t conv = m_options.shortConv > 0 ? m_options.layers * m_options.dModel * (m_options.shortConv - 1) : 0;
    return {conv, 2 * m_options.layers * m_options.dModel};
}

}  // namespace parrot
