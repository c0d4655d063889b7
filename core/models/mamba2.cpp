#include "core/models/mamba2.h"

#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/models/dense.h"
#include "core/models/recurrentdecode.h"
#include "core/models/s4d.h"
#include "core/models/stateshrink.h"
#include "core/models/transformer.h"

#include <cmath>
#include <limits>

namespace parrot {

namespace F = torch::nn::functional;
using torch::Tensor;

Tensor decaySegments(const Tensor& a)
{
    const int64_t Q = a.size(-1);
    const auto opts = torch::TensorOptions().dtype(torch::kBool).device(a.device());
    const Tensor strict = torch::ones({Q, Q}, opts).tril(-1), lower = torch::ones({Q, Q}, opts).tril(0);
    std::vector<int64_t> shape = a.sizes().vec();
    shape.push_back(Q);
    const Tensor x = a.unsqueeze(-1).expand(shape).masked_fill(strict.logical_not(), 0);  // x[..., k, j] = a_k for k > j
    return x.cumsum(-2).masked_fill(lower.logical_not(), -std::numeric_limits<double>::infinity());
}

namespace {

// (B, T, G, N) -> (B, T, H, N): head h reads group h / (H / G).
Tensor toHeads(const Tensor& t, int64_t heads) { return t.repeat_interleave(heads / t.size(2), 2); }

}  // namespace

Tensor ssdMatrix(const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm)
{
    const Tensor a = (dt * A).permute({0, 2, 1});                     // (B, H, T)
    const Tensor L = torch::exp(decaySegments(a));                        // (B, H, T, T)
    const Tensor CB = torch::einsum("bthn,bshn->bhts", {Cm, Bm});        // (B, H, T, T)
    return L * CB * dt.permute({0, 2, 1}).unsqueeze(2);                 // dt_s along the keys
}

std::pair<Tensor, Tensor> ssdScan(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
                                  int64_t chunk, const Tensor& h0)
{
    const int64_t Bn = x.size(0), T = x.size(1), H = x.size(2), P = x.size(3), N = Bm.size(3);
    const int64_t Q = std::max<int64_t>(1, std::min(chunk, T)), pad = (Q - T % Q) % Q, c = (T + pad) / Q;
    // padding with dt = 0 adds nothing and decays nothing: the last state is the one after token T
    const auto padT = [pad](const Tensor& t) {
        if (pad == 0) return t;
        std::vector<int64_t> shape = t.sizes().vec();
        shape[1] = pad;
        return torch::cat({t, torch::zeros(shape, t.options())}, 1);
    };
    const Tensor xc = padT(x).view({Bn, c, Q, H, P}), dtc = padT(dt).view({Bn, c, Q, H});
    const Tensor Bc = padT(Bm).view({Bn, c, Q, H, N}), Cc = padT(Cm).view({Bn, c, Q, H, N});
    const Tensor a = (dtc * A).permute({0, 3, 1, 2});  // (B, H, c, Q): each step's log decay
    const Tensor aSum = a.cumsum(-1);
    const Tensor xdt = xc * dtc.unsqueeze(-1);          // (B, c, Q, H, P)
    // within a chunk: the quadratic form, y_l = sum_{s<=l} (C_l . B_s) exp(a_{s+1} + ... + a_l) dt_s x_s
    const Tensor W = torch::einsum("bclhn,bcshn->bhcls", {Cc, Bc}) * torch::exp(decaySegments(a));
    Tensor y = torch::einsum("bhcls,bcshp->bclhp", {W, xdt});
    // each chunk's own contribution to the state at its end
    const Tensor toEnd = torch::exp(aSum.narrow(-1, Q - 1, 1) - aSum).permute({0, 2, 3, 1}).unsqueeze(-1);  // (B, c, Q, H, 1)
    const Tensor S = torch::einsum("bcshn,bcshp->bchpn", {Bc * toEnd, xdt});                            // (B, c, H, P, N)
    // from chunk to chunk: the state entering each, then what it gives each position of it
    const Tensor chunkDecay = torch::exp(aSum.select(-1, Q - 1));  // (B, H, c)
    Tensor state = h0.defined() ? h0 : torch::zeros({Bn, H, P, N}, x.options());
    std::vector<Tensor> entering;
    entering.reserve(size_t(c));
    for (int64_t i = 0; i < c; ++i) {
        entering.push_back(state);
        state = chunkDecay.select(2, i).unsqueeze(-1).unsqueeze(-1) * state + S.select(1, i);
    }
    const Tensor in = torch::stack(entering, 1);                                   // (B, c, H, P, N)
    const Tensor fromStart = torch::exp(aSum).permute({0, 2, 3, 1}).unsqueeze(-1);  // (B, c, Q, H, 1)
    y = y + torch::einsum("bclhn,bchpn->bclhp", {Cc, in}) * fromStart;
    return {y.reshape({Bn, c * Q, H, P}).narrow(1, 0, T), state};
}

std::pair<Tensor, Tensor> ssdRecurrent(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
                                       const Tensor& h0, Tensor* stateNorms)
{
    const int64_t Bn = x.size(0), T = x.size(1), H = x.size(2), P = x.size(3), N = Bm.size(3);
    Tensor h = h0.defined() ? h0 : torch::zeros({Bn, H, P, N}, x.options());
    const Tensor decay = torch::exp(dt * A).unsqueeze(-1).unsqueeze(-1);  // (B, T, H, 1, 1)
    const Tensor dtx = (dt.unsqueeze(-1) * x).unsqueeze(-1);             // (B, T, H, P, 1)
    std::vector<Tensor> ys, norms;
    ys.reserve(size_t(T));
    for (int64_t t = 0; t < T; ++t) {
        h = h * decay.select(1, t) + dtx.select(1, t) * Bm.select(1, t).unsqueeze(2);
        ys.push_back((h * Cm.select(1, t).unsqueeze(2)).sum(-1));  // (B, H, P)
        if (stateNorms) norms.push_back(h.flatten(2).norm(2, -1));
    }
    if (stateNorms) *stateNorms = torch::stack(norms, 1);
    return {torch::stack(ys, 1), h};
}

GatedRMSNormImpl::GatedRMSNormImpl(int64_t dim, int64_t groups, double eps) : m_groups(groups), m_eps(eps)
{
    weight = register_parameter("weight", torch::ones({dim}));
}

Tensor GatedRMSNormImpl::forward(const Tensor& y, const Tensor& z) { return normalise(y * F::silu(z)); }

Tensor GatedRMSNormImpl::normalise(const Tensor& g)
{
    std::vector<int64_t> grouped = g.sizes().vec();
    grouped.back() = m_groups;
    grouped.push_back(g.size(-1) / m_groups);
    const Tensor v = g.reshape(grouped);
    return (v * torch::rsqrt(v.pow(2).mean(-1, true) + m_eps)).reshape(g.sizes()) * weight;
}

Mamba2MixerImpl::Mamba2MixerImpl(const Mamba2Options& o) : m_o(o)
{
    const int64_t C = o.dModel, Di = o.dInner(), H = o.heads(), N = o.dState, G = o.nGroups, Ch = o.convChannels();
    in_proj = register_module("in_proj", storedLinear(torch::nn::LinearOptions(C, 2 * Di + 2 * G * N + H).bias(false)));
    conv1d = register_module("conv1d", torch::nn::Conv1d(torch::nn::Conv1dOptions(Ch, Ch, o.dConv).groups(Ch).padding(o.dConv - 1)));
    dt_bias = register_parameter("dt_bias", torch::empty({H}));
    A_log = register_parameter("A_log", torch::empty({H}));
    D = register_parameter("D", torch::ones({H}));
    norm = register_module("norm", GatedRMSNorm(Di, G));
    out_proj = register_module("out_proj", storedLinear(torch::nn::LinearOptions(Di, C).bias(false)));
    torch::NoGradGuard noGrad;
    // mamba_ssm's Mamba2: softplus(dt_bias) log-uniform in [dt_min, dt_max] (floored at 1e-4),
    // through softplus's inverse dt + log(-expm1(-dt)); A uniform in [1, 16]; D = 1
    const Tensor dt = torch::exp(torch::rand({H}) * (std::log(o.dtMax) - std::log(o.dtMin)) + std::log(o.dtMin)).clamp_min(1e-4);
    dt_bias.copy_(dt + torch::log(-torch::expm1(-dt)));
    A_log.copy_(torch::log(torch::empty({H}).uniform_(1, 16)));
}

Mamba2MixerImpl::Inputs Mamba2MixerImpl::inputs(const Tensor& u)
{
    const int64_t Bn = u.size(0), T = u.size(1), Di = m_o.dInner(), H = m_o.heads(), N = m_o.dState, G = m_o.nGroups,
                  Ch = m_o.convChannels();
    const Tensor zxbcdt = dense(in_proj, u);  // (B, T, 2 Di + 2 G N + H): [z, x, B, C, dt]
    Inputs in;
    in.z = zxbcdt.narrow(-1, 0, Di);
    in.convIn = zxbcdt.narrow(-1, Di, Ch);
    const Tensor xBC = F::silu(conv1d->forward(in.convIn.transpose(1, 2)).narrow(2, 0, T)).transpose(1, 2);  // causal
    in.x = xBC.narrow(-1, 0, Di).reshape({Bn, T, H, m_o.headDim});
    in.Bm = toHeads(xBC.narrow(-1, Di, G * N).reshape({Bn, T, G, N}), H);
    in.Cm = toHeads(xBC.narrow(-1, Di + G * N, G * N).reshape({Bn, T, G, N}), H);
    in.dt = F::softplus(zxbcdt.narrow(-1, Di + Ch, H) + dt_bias);
    return in;
}

Tensor Mamba2MixerImpl::output(const Tensor& y, const Inputs& in, int layer)
{
    const Tensor skipped = y + in.x * D.view({1, 1, -1, 1});
    return dense(out_proj, headsSwitchedOff(norm(skipped.reshape({y.size(0), y.size(1), m_o.dInner()}), in.z), layer, m_o.heads()));
}

Tensor ssdScanFused(const Tensor& x, const Tensor& dtRaw, const Tensor& dtBias, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
                    int64_t groups, const Tensor& D, const Tensor& z)
{
    const int64_t Bn = x.size(0), T = x.size(1), Di = x.size(2), H = dtRaw.size(2), P = Di / H, N = Bm.size(2) / groups;
    const auto perChannel = [H, P](const Tensor& t) { return t.unsqueeze(-1).expand({H, P}).reshape({H * P}); };  // (H) -> (H P)
    const Tensor delta = dtRaw.unsqueeze(-1).expand({Bn, T, H, P}).reshape({Bn, T, Di});
    const Tensor Ad = perChannel(A).unsqueeze(-1).expand({Di, N}), skip = perChannel(D), bias = perChannel(dtBias);
    const int64_t Dg = Di / groups;  // a group's channels
    std::vector<Tensor> ys;
    for (int64_t g = 0; g < groups; ++g) {
        const auto channels = [&](const Tensor& t) { return t.narrow(-1, g * Dg, Dg).transpose(1, 2); };  // (B, Dg, T)
        const ScanInputs in{channels(x), channels(delta), Ad.narrow(0, g * Dg, Dg), Bm.narrow(-1, g * N, N).transpose(1, 2),
                            Cm.narrow(-1, g * N, N).transpose(1, 2), skip.narrow(0, g * Dg, Dg), z.defined() ? channels(z) : z,
                            bias.narrow(0, g * Dg, Dg), true};
        ys.push_back(shrunkScan(in).transpose(1, 2));  // (B, T, Dg)
    }
    return groups == 1 ? ys.front() : torch::cat(ys, -1);
}

Tensor Mamba2MixerImpl::forwardFused(const Tensor& u, int layer)
{
    const int64_t Di = m_o.dInner(), H = m_o.heads(), N = m_o.dState, G = m_o.nGroups, Ch = m_o.convChannels();
    const Tensor zxbcdt = dense(in_proj, u);                                                      // (B, T, 2 Di + 2 G N + H)
    const Tensor xBC = causalConvSilu(zxbcdt.narrow(-1, Di, Ch), conv1d->weight, conv1d->bias);  // (B, T, Ch)
    const Tensor y = ssdScanFused(xBC.narrow(-1, 0, Di), zxbcdt.narrow(-1, Di + Ch, H), dt_bias, -torch::exp(A_log),
                                  xBC.narrow(-1, Di, G * N), xBC.narrow(-1, Di + G * N, G * N), G, D, zxbcdt.narrow(-1, 0, Di));
    return dense(out_proj, headsSwitchedOff(norm->normalise(y), layer, H));
}

Tensor Mamba2MixerImpl::forward(const Tensor& x, Probes* probes, int layer)
{
    if (!probes && (fastPaths() || StateShrinkScope::current())) return forwardFused(x, layer);
    const Inputs in = inputs(x);
    const Tensor A = -torch::exp(A_log);
    if (probes) {
        // each head's map from inputs to outputs, as the share of each output's |M| row
        const Tensor M = ssdMatrix(in.dt, A, in.Bm, in.Cm).abs().detach();
        probes->attention.push_back(M / M.sum(-1, true).clamp_min(1e-30));
        probes->attentionLayer.push_back(layer);
        if (!probes->mapsOnly) {
            // each head's step size, and the norm of its head_dim x d_state state after each token
            probes->delta.push_back(in.dt.detach());
            probes->deltaLayer.push_back(layer);
            torch::NoGradGuard noGrad;
            Tensor norms;
            ssdRecurrent(in.x, in.dt, A, in.Bm, in.Cm, {}, &norms);
            probes->stateNorm.push_back(norms);  // (B, T, H)
            probes->stateLayer.push_back(layer);
        }
    }
    return output(ssdScan(in.x, in.dt, A, in.Bm, in.Cm, m_o.chunkSize).first, in, layer);
}

Tensor Mamba2MixerImpl::forwardRecurrent(const Tensor& x)
{
    const Inputs in = inputs(x);
    return output(ssdRecurrent(in.x, in.dt, -torch::exp(A_log), in.Bm, in.Cm).first, in);
}

Tensor Mamba2MixerImpl::prefill(const Tensor& x, Mamba2Cache& cache)
{
    const Inputs in = inputs(x);
    auto [y, state] = ssdScan(in.x, in.dt, -torch::exp(A_log), in.Bm, in.Cm, m_o.chunkSize, cache.ssm);
    cache.ssm = state;
    // the convolution's last K inputs, zeros before the prompt
    const int64_t K = m_o.dConv;
    const Tensor seen = torch::cat({cache.conv, in.convIn.transpose(1, 2)}, 2);
    cache.conv = seen.narrow(2, seen.size(2) - K, K).contiguous();
    return output(y, in);
}

Tensor Mamba2MixerImpl::step(const Tensor& x, Mamba2Cache& cache)
{
    const int64_t Bn = x.size(0), Di = m_o.dInner(), H = m_o.heads(), P = m_o.headDim, N = m_o.dState, G = m_o.nGroups,
                  Ch = m_o.convChannels(), K = m_o.dConv;
    const Tensor zxbcdt = dense(in_proj, x);  // (B, 2 Di + 2 G N + H)
    const Tensor z = zxbcdt.narrow(-1, 0, Di);
    cache.conv = torch::cat({cache.conv.narrow(2, 1, K - 1), zxbcdt.narrow(-1, Di, Ch).unsqueeze(2)}, 2);
    Tensor xBC = (cache.conv * conv1d->weight.squeeze(1)).sum(-1);
    if (conv1d->bias.defined()) xBC = xBC + conv1d->bias;
    xBC = F::silu(xBC);
    const Tensor xs = xBC.narrow(-1, 0, Di).reshape({Bn, H, P});
    const Tensor Bm = xBC.narrow(-1, Di, G * N).reshape({Bn, G, N}).repeat_interleave(H / G, 1);  // (B, H, N)
    const Tensor Cm = xBC.narrow(-1, Di + G * N, G * N).reshape({Bn, G, N}).repeat_interleave(H / G, 1);
    const Tensor dt = F::softplus(zxbcdt.narrow(-1, Di + Ch, H) + dt_bias);  // (B, H)
    const Tensor decay = torch::exp(dt * -torch::exp(A_log)).unsqueeze(-1).unsqueeze(-1);
    cache.ssm = cache.ssm * decay + (dt.unsqueeze(-1) * xs).unsqueeze(-1) * Bm.unsqueeze(2);  // (B, H, P, N)
    const Tensor y = (cache.ssm * Cm.unsqueeze(2)).sum(-1) + xs * D.view({1, -1, 1});      // (B, H, P)
    return dense(out_proj, norm(y.reshape({Bn, Di}), z));
}

Mamba2Cache Mamba2MixerImpl::emptyCache(int64_t batch, torch::TensorOptions opts) const
{
    return {torch::zeros({batch, m_o.convChannels(), m_o.dConv}, opts), torch::zeros({batch, m_o.heads(), m_o.headDim, m_o.dState}, opts)};
}

Mamba2BlockImpl::Mamba2BlockImpl(const Mamba2LMOptions& o)
{
    norm = register_module("norm", RMSNorm(o.mixer.dModel, kSsmNormEps));
    mixer = register_module("mixer", Mamba2Mixer(o.mixer));
}

Mamba2LMImpl::Mamba2LMImpl(const Mamba2LMOptions& o) : m_o(o)
{
    const SsmBackbone skeleton = registerSsmBackbone(*this, o.vocabSize, o.mixer.dModel, o.tieEmbeddings, o.layers, kSsmNormEps,
                                                     [&o] { return Mamba2Block(o).ptr(); });
    m_backbone = skeleton.backbone;
    embedding = skeleton.embedding;
    layers = skeleton.layers;
    norm_f = skeleton.norm_f;
    lm_head = skeleton.lm_head;
    if (WeightStorage::current() != torch::kFloat) return;  // 16-bit weights are built only to be loaded into
    torch::NoGradGuard noGrad;
    // mamba_ssm's _init_weights: out_proj, which writes into the residual stream, divided by
    // sqrt(layers) (one residual per layer without an MLP)
    for (const auto& block : *layers) block->as<Mamba2BlockImpl>()->mixer->out_proj->weight.div_(std::sqrt(double(o.layers)));
}

Tensor Mamba2LMImpl::embed(const Tensor& idx) { return dense(embedding, idx); }

Tensor Mamba2LMImpl::head(const Tensor& x) { return lmLogits(x, lm_head, embedding->weight); }

Tensor Mamba2LMImpl::hidden(const Tensor& input, Probes* probes)
{
    Tensor x = input;  // (B, T, C)
    int layer = 0;
    for (const auto& block : *layers) {
        auto* b = block->as<Mamba2BlockImpl>();
        x = x + b->mixer->forward(ssmNorm(b->norm, x), probes, layer++);
    }
    return ssmNorm(norm_f, x);
}

StateSize Mamba2LMImpl::stateSize() const
{
    const long long perLayer = layers->size() > 0 ? layers->at<Mamba2BlockImpl>(0).mixer->stateFloats() : 0;
    return {m_o.layers * perLayer, 0};
}

namespace {
struct Mamba2Decode : DecodeState {
    std::vector<Mamba2Cache> caches;  // per layer, made on the first call
};
}  // namespace

std::unique_ptr<DecodeState> Mamba2LMImpl::startDecoding(int64_t, torch::TensorOptions) { return std::make_unique<Mamba2Decode>(); }

const std::vector<Mamba2Cache>& Mamba2LMImpl::caches(const DecodeState& state) { return static_cast<const Mamba2Decode&>(state).caches; }

Tensor Mamba2LMImpl::decode(const Tensor& idx, DecodeState& state)
{
    auto& s = static_cast<Mamba2Decode&>(state);
    const Tensor x = decodeThroughCaches<Mamba2BlockImpl>(layers, s.caches, s, idx, embedding, [](Mamba2BlockImpl* b) -> RMSNorm& { return b->norm; },
                                                          [](Mamba2BlockImpl* b) -> Mamba2Mixer& { return b->mixer; });
    return lmLogits(norm_f(x), lm_head, embedding->weight);
}

}  // namespace parrot
