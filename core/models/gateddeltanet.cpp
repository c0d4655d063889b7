#include "core/models/gateddeltanet.h"

#include "core/kernels/deltarule.h"
#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/models/dense.h"
#include "core/models/mamba2.h"
#include "core/models/recurrentdecode.h"
#include "core/models/s4d.h"
#include "core/models/stateshrink.h"
#include "core/models/transformer.h"

#include <cmath>

namespace parrot {

namespace F = torch::nn::functional;
using torch::Tensor;

namespace {

constexpr double kOutputNormEps = 1e-5;  // o_norm's, fla's GatedDeltaNet default
constexpr double kL2NormEps = 1e-6;      // fla's l2norm: x / sqrt(sum x^2 + eps)

Tensor l2Normalised(const Tensor& x) { return x * torch::rsqrt(x.pow(2).sum(-1, true) + kL2NormEps); }

// (B, H, S, S) unit lower-triangular systems (I + A) X = R, A strictly lower (its diagonal unread).
Tensor solveUnitLower(const Tensor& A, const Tensor& R) { return torch::linalg_solve_triangular(A, R, false, true, true); }

// A causal depthwise convolution with no bias, then SiLU: (B, T, D) -> (B, T, D); fused where the
// fast paths are on (core/kernels/selectivescan.h).
Tensor shortConv(torch::nn::Conv1d& conv, const Tensor& x)
{
    if (fastPaths()) return causalConvSilu(x, conv->weight, {});
    return F::silu(conv->forward(x.transpose(1, 2)).narrow(2, 0, x.size(1))).transpose(1, 2);
}

// One token through a short convolution's cache (B, D, K): the input appended, the oldest dropped.
Tensor shortConvStep(torch::nn::Conv1d& conv, Tensor& cache, const Tensor& x)
{
    const int64_t K = cache.size(2);
    cache = torch::cat({cache.narrow(2, 1, K - 1), x.unsqueeze(2)}, 2);
    return F::silu((cache * conv->weight.squeeze(1)).sum(-1));
}

// The convolution's last K inputs after a prompt, zeros before it: (B, D, K).
Tensor lastInputs(const Tensor& cache, const Tensor& prompt)
{
    const Tensor seen = torch::cat({cache, prompt.transpose(1, 2)}, 2);
    return seen.narrow(2, seen.size(2) - cache.size(2), cache.size(2)).contiguous();
}

}  // namespace

std::pair<Tensor, Tensor> deltaRuleRecurrent(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                             const Tensor& logDecay, const Tensor& h0, Tensor* stateNorms, int bits)
{
    const int64_t Bn = q.size(0), T = q.size(1), H = q.size(2), K = q.size(3), V = v.size(3);
    Tensor h = h0.defined() ? h0 : torch::zeros({Bn, H, K, V}, v.options());
    std::vector<Tensor> out, norms;
    out.reserve(size_t(T));
    for (int64_t t = 0; t < T; ++t) {
        if (logDecay.defined()) h = h * torch::exp(logDecay.select(1, t)).unsqueeze(-1).unsqueeze(-1);
        const Tensor kt = k.select(1, t).unsqueeze(-1);                                          // (B, H, K, 1)
        const Tensor written = (v.select(1, t) - (h * kt).sum(-2)) * beta.select(1, t).unsqueeze(-1);  // (B, H, V)
        h = h + kt * written.unsqueeze(-2);
        if (bits > 0) h = quantisedState(h.transpose(-1, -2), bits).transpose(-1, -2);  // per value column
        out.push_back((h * q.select(1, t).unsqueeze(-1)).sum(-2));  // (B, H, V)
        if (stateNorms) norms.push_back(h.flatten(2).norm(2, -1));
    }
    if (stateNorms) *stateNorms = torch::stack(norms, 1);
    return {torch::stack(out, 1), h};
}

std::pair<Tensor, Tensor> deltaRuleChunked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                           const Tensor& logDecay, int64_t chunk, const Tensor& h0)
{
    const int64_t Bn = q.size(0), T = q.size(1), H = q.size(2), K = q.size(3), V = v.size(3);
    const int64_t Q = std::max<int64_t>(1, std::min(chunk, T)), pad = (Q - T % Q) % Q, c = (T + pad) / Q;
    // padding with b = 0 and k = 0 writes nothing and, with log decay 0, decays nothing
    const auto chunked = [&](const Tensor& t) {  // (B, T, H, ...) -> (B, H, c, Q, ...)
        Tensor x = t.transpose(1, 2);
        if (pad > 0) {
            std::vector<int64_t> shape = x.sizes().vec();
            shape[2] = pad;
            x = torch::cat({x, torch::zeros(shape, x.options())}, 2);
        }
        std::vector<int64_t> shape{Bn, H, c, Q};
        for (int64_t d = 3; d < x.dim(); ++d) shape.push_back(x.size(d));
        return x.reshape(shape);
    };
    const Tensor qc = chunked(q), kc = chunked(k), vc = chunked(v), bc = chunked(beta);
    const Tensor gc = logDecay.defined() ? chunked(logDecay) : torch::zeros({Bn, H, c, Q}, q.options());
    const Tensor segments = decaySegments(gc);        // (B, H, c, Q, Q): log decay from j to i
    const Tensor Gamma = torch::exp(segments);        // zero above the diagonal
    const Tensor fromStart = torch::exp(gc.cumsum(-1)).unsqueeze(-1);                 // (B, H, c, Q, 1)
    const Tensor toEnd = torch::exp(segments.select(-2, Q - 1)).unsqueeze(-1);         // (B, H, c, Q, 1)
    const Tensor chunkDecay = fromStart.select(3, Q - 1);                              // (B, H, c, 1)
    const Tensor kb = kc * bc.unsqueeze(-1);
    // within a chunk every write at once: (I + A) u = b v - (b k, decayed from the chunk's start) S
    const Tensor A = (torch::matmul(kb, kc.transpose(-1, -2)) * Gamma).tril(-1);
    const Tensor W = solveUnitLower(A, vc * bc.unsqueeze(-1));  // (B, H, c, Q, V)
    const Tensor Y = solveUnitLower(A, kb * fromStart);          // (B, H, c, Q, K)
    const Tensor QK = torch::matmul(qc, kc.transpose(-1, -2)) * Gamma;
    Tensor S = h0.defined() ? h0 : torch::zeros({Bn, H, K, V}, v.options());
    std::vector<Tensor> out;
    out.reserve(size_t(c));
    for (int64_t i = 0; i < c; ++i) {
        const Tensor u = W.select(2, i) - torch::matmul(Y.select(2, i), S);  // (B, H, Q, V): what each token writes
        out.push_back(torch::matmul(qc.select(2, i) * fromStart.select(2, i), S) + torch::matmul(QK.select(2, i), u));
        S = chunkDecay.select(2, i).unsqueeze(-1) * S + torch::matmul((kc.select(2, i) * toEnd.select(2, i)).transpose(-1, -2), u);
    }
    const Tensor o = torch::stack(out, 2).reshape({Bn, H, c * Q, V}).narrow(2, 0, T).transpose(1, 2);
    return {o, S};
}

Tensor deltaRuleMatrix(const Tensor& q, const Tensor& k, const Tensor& beta, const Tensor& logDecay)
{
    const Tensor qh = q.transpose(1, 2), kh = k.transpose(1, 2), bh = beta.transpose(1, 2);  // (B, H, T, .)
    const Tensor g = logDecay.defined() ? logDecay.transpose(1, 2) : torch::zeros_like(bh);
    const Tensor Gamma = torch::exp(decaySegments(g));
    const Tensor A = (torch::matmul(kh * bh.unsqueeze(-1), kh.transpose(-1, -2)) * Gamma).tril(-1);
    return torch::matmul(torch::matmul(qh, kh.transpose(-1, -2)) * Gamma, solveUnitLower(A, torch::diag_embed(bh)));
}

GatedDeltaNetMixerImpl::GatedDeltaNetMixerImpl(const GatedDeltaNetOptions& o) : m_o(o)
{
    const int64_t C = o.dModel, H = o.heads(), Dk = o.keyDim(), Dv = o.valueDim();
    const auto linear = [C](int64_t out) { return storedLinear(torch::nn::LinearOptions(C, out).bias(false)); };
    const auto conv = [&o](int64_t channels) {
        return torch::nn::Conv1d(torch::nn::Conv1dOptions(channels, channels, o.dConv).groups(channels).padding(o.dConv - 1).bias(false));
    };
    q_proj = register_module("q_proj", linear(Dk));
    k_proj = register_module("k_proj", linear(Dk));
    v_proj = register_module("v_proj", linear(Dv));
    if (o.forgetGate) a_proj = register_module("a_proj", linear(H));
    b_proj = register_module("b_proj", linear(H));
    if (o.forgetGate) {
        A_log = register_parameter("A_log", torch::empty({H}));
        dt_bias = register_parameter("dt_bias", torch::empty({H}));
    }
    q_conv1d = register_module("q_conv1d", conv(Dk));
    k_conv1d = register_module("k_conv1d", conv(Dk));
    v_conv1d = register_module("v_conv1d", conv(Dv));
    g_proj = register_module("g_proj", linear(Dv));
    auto normModule = register_module("o_norm", std::make_shared<torch::nn::Module>("o_norm"));
    o_norm = normModule->register_parameter("weight", torch::ones({o.headVDim()}));
    o_proj = register_module("o_proj", storedLinear(torch::nn::LinearOptions(Dv, C).bias(false)));
    torch::NoGradGuard noGrad;
    // fla's _init_weights: every linear and convolution N(0, 0.02); A uniform in (0, 16) (floored so
    // that A_log stays finite); softplus(dt_bias) log-uniform in [dt_min, dt_max], floored at 1e-4
    for (auto* l : {&q_proj, &k_proj, &v_proj, &a_proj, &b_proj, &g_proj, &o_proj})
        if (!l->is_empty()) (*l)->weight.normal_(0.0, 0.02);
    for (auto* c : {&q_conv1d, &k_conv1d, &v_conv1d}) (*c)->weight.normal_(0.0, 0.02);
    if (o.forgetGate) {
        A_log.copy_(torch::log(torch::empty({H}).uniform_(0, 16).clamp_min(1e-4)));
        const Tensor dt = torch::exp(torch::rand({H}) * (std::log(o.dtMax) - std::log(o.dtMin)) + std::log(o.dtMin)).clamp_min(1e-4);
        dt_bias.copy_(dt + torch::log(-torch::expm1(-dt)));
    }
}

GatedDeltaNetMixerImpl::Inputs GatedDeltaNetMixerImpl::inputs(const Tensor& x)
{
    const int64_t Bn = x.size(0), T = x.size(1), H = m_o.heads(), K = m_o.headDim, V = m_o.headVDim();
    Inputs in;
    Tensor b, a;
    if (fastPaths() && !isSixteenBit(q_proj->weight)) {
        // the six projections of x as one product (two of them a column per head, too thin alone)
        std::vector<Tensor> weights{q_proj->weight, k_proj->weight, v_proj->weight, g_proj->weight, b_proj->weight};
        if (m_o.forgetGate) weights.push_back(a_proj->weight);
        const Tensor all = denseLinear(x, torch::cat(weights, 0));
        int64_t at = 0;
        const auto next = [&](int64_t n) {
            const Tensor t = all.narrow(-1, at, n);
            at += n;
            return t;
        };
        in.qIn = next(m_o.keyDim());
        in.kIn = next(m_o.keyDim());
        in.vIn = next(m_o.valueDim());
        in.gate = next(m_o.valueDim()).reshape({Bn, T, H, V});
        b = next(H);
        if (m_o.forgetGate) a = next(H);
    } else {
        in.qIn = dense(q_proj, x);
        in.kIn = dense(k_proj, x);
        in.vIn = dense(v_proj, x);
        in.gate = dense(g_proj, x).reshape({Bn, T, H, V});
        b = dense(b_proj, x);
        if (m_o.forgetGate) a = dense(a_proj, x);
    }
    in.q = l2Normalised(shortConv(q_conv1d, in.qIn).reshape({Bn, T, H, K})) * (1.0 / std::sqrt(double(K)));
    in.k = l2Normalised(shortConv(k_conv1d, in.kIn).reshape({Bn, T, H, K}));
    in.v = shortConv(v_conv1d, in.vIn).reshape({Bn, T, H, V});
    in.beta = torch::sigmoid(b);
    if (m_o.forgetGate) in.logDecay = -torch::exp(A_log) * F::softplus(a + dt_bias);
    return in;
}

// fla's FusedRMSNormGated (swish): rmsnorm(o) * weight * silu(gate) over each head's V channels.
Tensor GatedDeltaNetMixerImpl::output(const Tensor& o, const Inputs& in, int layer)
{
    const Tensor n = o * torch::rsqrt(o.pow(2).mean(-1, true) + kOutputNormEps) * o_norm * F::silu(in.gate);
    return dense(o_proj, headsSwitchedOff(n.flatten(-2), layer, m_o.heads()));
}

Tensor GatedDeltaNetMixerImpl::shrunkRule(const Inputs& in)
{
    const Tensor k = keptStateDims(in.k, 3);
    const Tensor o = shrinkQuantises() ? deltaRuleRecurrent(in.q, k, in.v, in.beta, in.logDecay, {}, nullptr, shrinkBits()).first
                     : fastPaths() && deltaRuleFusedTakes(k) ? deltaRuleFused(in.q, k, in.v, in.beta, in.logDecay)
                                                             : deltaRuleChunked(in.q, k, in.v, in.beta, in.logDecay, m_o.chunkSize).first;
    const int64_t columns = m_o.valueDim(), kept = keptChannels(columns);
    if (kept == columns) return o;
    const Tensor flat = o.flatten(2);  // (B, T, H V)
    return torch::cat({flat.narrow(2, 0, kept), torch::zeros_like(flat.narrow(2, kept, columns - kept))}, 2).view(o.sizes());
}

Tensor GatedDeltaNetMixerImpl::forward(const Tensor& x, Probes* probes, int layer)
{
    const Inputs in = inputs(x);
    if (!probes && StateShrinkScope::current()) return output(shrunkRule(in), in, layer);
    if (probes) {
        // each head's map from values to outputs, as the share of each output's |M| row
        torch::NoGradGuard noGrad;
        const Tensor M = deltaRuleMatrix(in.q, in.k, in.beta, in.logDecay).abs();
        probes->attention.push_back(M / M.sum(-1, true).clamp_min(1e-30));
        probes->attentionLayer.push_back(layer);
        if (!probes->mapsOnly) {
            // the norm of each head's head_dim x head_v_dim state after each token
            Tensor norms;
            deltaRuleRecurrent(in.q, in.k, in.v, in.beta, in.logDecay, {}, &norms);
            probes->stateNorm.push_back(norms);
            probes->stateLayer.push_back(layer);
        }
    }
    // training's path: the fused rule where it runs (CPU float32), else in chunks
    if (!probes && fastPaths() && deltaRuleFusedTakes(in.q))
        return output(deltaRuleFused(in.q, in.k, in.v, in.beta, in.logDecay), in, layer);
    return output(deltaRuleChunked(in.q, in.k, in.v, in.beta, in.logDecay, m_o.chunkSize).first, in, layer);
}

Tensor GatedDeltaNetMixerImpl::forwardRecurrent(const Tensor& x)
{
    const Inputs in = inputs(x);
    return output(deltaRuleRecurrent(in.q, in.k, in.v, in.beta, in.logDecay).first, in);
}

Tensor GatedDeltaNetMixerImpl::prefill(const Tensor& x, GatedDeltaNetCache& cache)
{
    const Inputs in = inputs(x);
    auto [o, state] = deltaRuleChunked(in.q, in.k, in.v, in.beta, in.logDecay, m_o.chunkSize, cache.state);
    cache.state = state;
    cache.convQ = lastInputs(cache.convQ, in.qIn);
    cache.convK = lastInputs(cache.convK, in.kIn);
    cache.convV = lastInputs(cache.convV, in.vIn);
    return output(o, in);
}

Tensor GatedDeltaNetMixerImpl::step(const Tensor& x, GatedDeltaNetCache& cache)
{
    const int64_t Bn = x.size(0), H = m_o.heads(), K = m_o.headDim, V = m_o.headVDim();
    Inputs in;
    in.q = l2Normalised(shortConvStep(q_conv1d, cache.convQ, dense(q_proj, x)).reshape({Bn, H, K})) * (1.0 / std::sqrt(double(K)));
    in.k = l2Normalised(shortConvStep(k_conv1d, cache.convK, dense(k_proj, x)).reshape({Bn, H, K}));
    in.v = shortConvStep(v_conv1d, cache.convV, dense(v_proj, x)).reshape({Bn, H, V});
    in.beta = torch::sigmoid(dense(b_proj, x));  // (B, H)
    in.gate = dense(g_proj, x).reshape({Bn, H, V});
    Tensor h = cache.state;
    if (m_o.forgetGate) h = h * torch::exp(-torch::exp(A_log) * F::softplus(dense(a_proj, x) + dt_bias)).unsqueeze(-1).unsqueeze(-1);
    const Tensor kt = in.k.unsqueeze(-1);  // (B, H, K, 1)
    h = h + kt * ((in.v - (h * kt).sum(-2)) * in.beta.unsqueeze(-1)).unsqueeze(-2);
    cache.state = h;
    return output((h * in.q.unsqueeze(-1)).sum(-2), in);  // (B, H, V) -> (B, C)
}

GatedDeltaNetCache GatedDeltaNetMixerImpl::emptyCache(int64_t batch, torch::TensorOptions opts) const
{
    const int64_t K = m_o.dConv;
    return {torch::zeros({batch, m_o.keyDim(), K}, opts), torch::zeros({batch, m_o.keyDim(), K}, opts),
            torch::zeros({batch, m_o.valueDim(), K}, opts), torch::zeros({batch, m_o.heads(), m_o.headDim, m_o.headVDim()}, opts)};
}

GatedDeltaNetBlockImpl::GatedDeltaNetBlockImpl(const GatedDeltaNetLMOptions& o)
{
    attn_norm = register_module("attn_norm", RMSNorm(o.mixer.dModel, kSsmNormEps));
    attn = register_module("attn", GatedDeltaNetMixer(o.mixer));
}

GatedDeltaNetLMImpl::GatedDeltaNetLMImpl(const GatedDeltaNetLMOptions& o) : m_o(o)
{
    BackboneNames names;
    names.backbone = "model";
    names.embedding = "embeddings";
    names.norm = "norm";
    const SsmBackbone skeleton = registerSsmBackbone(*this, o.vocabSize, o.mixer.dModel, o.tieEmbeddings, o.layers, kSsmNormEps,
                                                     [&o] { return GatedDeltaNetBlock(o).ptr(); }, names);
    embeddings = skeleton.embedding;
    layers = skeleton.layers;
    norm = skeleton.norm_f;
    lm_head = skeleton.lm_head;
}

Tensor GatedDeltaNetLMImpl::embed(const Tensor& idx) { return dense(embeddings, idx); }

Tensor GatedDeltaNetLMImpl::head(const Tensor& x) { return lmLogits(x, lm_head, embeddings->weight); }

Tensor GatedDeltaNetLMImpl::hidden(const Tensor& input, Probes* probes)
{
    Tensor x = input;
    int layer = 0;
    for (const auto& block : *layers) {
        auto* b = block->as<GatedDeltaNetBlockImpl>();
        x = x + b->attn->forward(ssmNorm(b->attn_norm, x), probes, layer++);
    }
    return ssmNorm(norm, x);
}

StateSize GatedDeltaNetLMImpl::stateSize() const
{
    const long long perLayer = layers->size() > 0 ? layers->at<GatedDeltaNetBlockImpl>(0).attn->stateFloats() : 0;
    return {m_o.layers * perLayer, 0};
}

namespace {
struct GatedDeltaNetDecode : DecodeState {
    std::vector<GatedDeltaNetCache> caches;  // per layer, made on the first call
};
}  // namespace

std::unique_ptr<DecodeState> GatedDeltaNetLMImpl::startDecoding(int64_t, torch::TensorOptions)
{
    return std::make_unique<GatedDeltaNetDecode>();
}

const std::vector<GatedDeltaNetCache>& GatedDeltaNetLMImpl::caches(const DecodeState& state)
{
    return static_cast<const GatedDeltaNetDecode&>(state).caches;
}

Tensor GatedDeltaNetLMImpl::decode(const Tensor& idx, DecodeState& state)
{
    auto& s = static_cast<GatedDeltaNetDecode&>(state);
    const Tensor x = decodeThroughCaches<GatedDeltaNetBlockImpl>(
        layers, s.caches, s, idx, embeddings, [](GatedDeltaNetBlockImpl* b) -> RMSNorm& { return b->attn_norm; },
        [](GatedDeltaNetBlockImpl* b) -> GatedDeltaNetMixer& { return b->attn; });
    return lmLogits(norm(x), lm_head, embeddings->weight);
}

}  // namespace parrot
