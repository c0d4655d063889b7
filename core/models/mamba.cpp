#include "core/models/mamba.h"

#include "base/error.h"
#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/models/dense.h"
#include "core/models/stateshrink.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <mutex>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace parrot {

namespace F = torch::nn::functional;

namespace {

// Flush-to-zero and denormals-are-zero on this thread while it lives (x86), as they were after.
class FlushDenormals {
public:
#if defined(__SSE__)
    FlushDenormals() : m_saved(_mm_getcsr()) { _mm_setcsr(m_saved | 0x8040); }
    ~FlushDenormals() { _mm_setcsr(m_saved); }

private:
    unsigned m_saved;
#endif
};

// One channel's |alpha| rows added into `rows` (T x T), by the recurrence implicitAttentionMean
// describes: delta (T), A (N), B and C (N x T), h (N x T) and acc (T) scratch. Built for AVX2 and
// for the baseline, chosen when the program starts by what the CPU has.
__attribute__((target_clones("avx2", "default"))) void implicitRows(const float* delta, const float* A, const float* B,
                                                                      const float* C, int64_t T, int64_t N, float* h, float* acc,
                                                                      float* rows)
{
    for (int64_t t = 0; t < T; ++t) {
        std::fill(acc, acc + t + 1, 0.f);
        for (int64_t n = 0; n < N; ++n) {
            float* hn = h + n * T;
            const float decay = std::exp(A[n] * delta[t]), c = C[n * T + t];
            for (int64_t s = 0; s < t; ++s) {
                hn[s] *= decay;
                acc[s] += c * hn[s];
            }
            hn[t] = delta[t] * B[n * T + t];
            acc[t] += c * hn[t];
        }
        float* row = rows + t * T;
        for (int64_t s = 0; s <= t; ++s) row[s] += std::abs(acc[s]);
    }
}

// Mimetic initialisation (Trockman et al. 2024, "Mimetic Initialization Helps State Space Models
// Learn to Recall"). Unrolled, the scan is attention-like: y_t = sum_s alpha[t,s] u_s with
// alpha[t,s] = C_t . (prod_{r=s+1..t} exp(delta_r A)) delta_s B_s (see implicitAttention). Their
// initialisation makes that look like linear attention from the first step. This implements
// the two ingredients that idea rests on; the paper's exact constants were not available to
// check against (only its abstract was), so the values below are this app's choice:
//   1. state transitions close to 1: A_n = -kMimeticDecay for every n, so exp(delta A) stays
//      above 0.999 at mamba_ssm's largest initial step (0.1), and nothing is forgotten over the
//      sequences trained here (the default S4D-real A_n = -(n + 1) forgets within tens of steps);
//   2. query and key tied: x_proj's rows that make C start equal to the rows that make B
//      (W_C = W_B), so C_t . B_s = u_t' W' W u_s is largest when token t resembles token s, as
//      in mimetic attention's W_Q W_K' ~ I (Trockman and Kolter 2023), up to the rank d_state.
// Nothing else is changed (not the convolution, not delta, nothing for Mamba 2): the rest of the
// mixer keeps mamba_ssm's initialisation.
constexpr double kMimeticDecay = 0.01;

void initMimetic(MambaMixerImpl& m, const MambaOptions& o)
{
    const int64_t N = o.dState, R = o.dtRank();
    m.A_log.fill_(std::log(kMimeticDecay));
    auto w = m.x_proj->weight;  // (R + 2N, Di): rows [R, R+N) make B, [R+N, R+2N) make C
    w.narrow(0, R + N, N).copy_(w.narrow(0, R, N));
}

}  // namespace

void initMambaMixer(MambaMixerImpl& m, const MambaOptions& o)
{
    torch::NoGradGuard noGrad;
    const int64_t Di = o.dInner(), N = o.dState, R = o.dtRank();
    // dt_proj.weight: uniform with std ~ R^-1/2, so delta starts near its bias whatever R is.
    const double std = 1.0 / std::sqrt(double(R));
    m.dt_proj->weight.uniform_(-std, std);
    // dt_proj.bias: softplus(bias) = dt, log-uniform in [dt_min, dt_max], so channels start with
    // memories from ~10 to ~1000 steps; the inverse of softplus is dt + log(-expm1(-dt)).
    auto dt = torch::exp(torch::rand({Di}) * (std::log(o.dtMax) - std::log(o.dtMin)) + std::log(o.dtMin)).clamp_min(1e-4);
    m.dt_proj->bias.copy_(dt + torch::log(-torch::expm1(-dt)));
    // S4D-real: A_n = -(n + 1), the same for every channel.
    m.A_log.copy_(torch::log(torch::arange(1, N + 1, torch::kFloat)).repeat({Di, 1}));
    // D = 1: the block starts as a skip of its (convolved) input.
    m.D.fill_(1.0);
    if (o.mimetic) initMimetic(m, o);
}

MambaMixerImpl::MambaMixerImpl(const MambaOptions& o) : m_o(o)
{
    const int64_t C = o.dModel, Di = o.dInner(), N = o.dState, R = o.dtRank();
    in_proj = register_module("in_proj", storedLinear(torch::nn::LinearOptions(C, 2 * Di).bias(o.projBias)));
    conv1d = register_module("conv1d", torch::nn::Conv1d(torch::nn::Conv1dOptions(Di, Di, o.dConv).groups(Di).padding(o.dConv - 1).bias(o.convBias)));
    if (o.selective) {
        x_proj = register_module("x_proj", torch::nn::Linear(torch::nn::LinearOptions(Di, R + 2 * N).bias(false)));
        dt_proj = register_module("dt_proj", torch::nn::Linear(R, Di));
        A_log = register_parameter("A_log", torch::empty({Di, N}));
        D = register_parameter("D", torch::empty({Di}));
        initMambaMixer(*this, o);
        storeWeight(x_proj->weight);
        storeWeight(dt_proj->weight);
    } else {
        s4 = register_module("s4", S4DKernel(Di, N, o.dtMin, o.dtMax));
        D = register_parameter("D", torch::ones({Di}));
    }
    out_proj = register_module("out_proj", storedLinear(torch::nn::LinearOptions(Di, C).bias(o.projBias)));
}

namespace {

// One step's new state (B, Di, N) under the thread's StateShrink: the dropped channels' state
// zeroed, or every entry quantised.
torch::Tensor shrunkStep(torch::Tensor h)
{
    const int64_t kept = keptChannels(h.size(1));
    if (kept < h.size(1)) h = torch::cat({h.narrow(1, 0, kept), torch::zeros_like(h.narrow(1, kept, h.size(1) - kept))}, 1);
    return shrinkQuantises() ? quantisedState(h, shrinkBits()) : h;
}

}  // namespace

torch::Tensor MambaMixerImpl::convBias() const
{
    return conv1d->bias.defined() ? conv1d->bias : torch::zeros({m_o.dInner()}, conv1d->weight.options());
}

torch::Tensor MambaMixerImpl::forward(const torch::Tensor& hidden, Probes* probes, int layer)
{
    if (!probes && m_o.selective && fastPaths() && !shrinkQuantises()) return forwardFast(hidden);
    // The explicit twin (and the probes' path): the projections' outputs transposed to
    // (B, channels, T) for conv1d and the scan, as mamba_simple.py does.
    const int64_t T = hidden.size(1), Di = m_o.dInner(), N = m_o.dState, R = m_o.dtRank();
    auto xz = dense(in_proj, hidden).transpose(1, 2);       // (B, 2Di, T)
    auto x = xz.narrow(1, 0, Di), z = xz.narrow(1, Di, Di);  // (B, Di, T) each
    x = F::silu(conv1d(x).narrow(2, 0, T));                  // causal: drop the right padding
    torch::Tensor y;
    if (m_o.selective) {
        auto xdbl = dense(x_proj, x.transpose(1, 2));         // (B, T, R + 2N)
        auto dt = denseT(xdbl.narrow(2, 0, R), dt_proj->weight).transpose(1, 2);  // (B, Di, T), bias in the scan
        auto Bm = keptStateDims(xdbl.narrow(2, R, N).transpose(1, 2), 1);  // (B, N, T)
        auto Cm = keptStateDims(xdbl.narrow(2, R + N, N).transpose(1, 2), 1);  // (B, N, T)
        ScanInputs in{x, dt, -torch::exp(A_log), Bm, Cm, D, z, dt_proj->bias, true};
        if (probes && probes->mapsOnly) {
            y = selectiveScan(in);
            const int64_t rows = probes->implicitRows > 0 ? std::min(probes->implicitRows, hidden.size(0)) : hidden.size(0);
            const auto delta = F::softplus(dt.narrow(0, 0, rows) + dt_proj->bias.view({1, Di, 1}));  // (rows, Di, T)
            probes->implicitAttention.push_back(
                implicitAttentionMean(delta, in.A, Bm.narrow(0, 0, rows), Cm.narrow(0, 0, rows), probes->keepGoing).detach());
            probes->implicitLayer.push_back(layer);
        } else if (probes) {
            torch::Tensor states;
            y = selectiveScanReference(in, &states);          // (B, Di, T, N)
            probes->stateNorm.push_back(states.norm(2, -1).transpose(1, 2).detach());
            probes->stateLayer.push_back(layer);
            const auto delta = F::softplus(dt + dt_proj->bias.view({1, Di, 1}));  // (B, Di, T)
            probes->delta.push_back(delta.transpose(1, 2).detach());
            probes->deltaLayer.push_back(layer);
            probes->implicitAttention.push_back(implicitAttentionMean(delta, in.A, Bm, Cm, probes->keepGoing).detach());
            probes->implicitLayer.push_back(layer);
        } else if (shrinkQuantises()) {
            y = quantisedSelectiveScan(in, shrinkBits());
        } else {
            y = withoutDroppedStates(selectiveScan(in), in);
        }
    } else {
        torch::Tensor states;
        const bool keepStates = probes && !probes->mapsOnly;
        y = (s4(x, keepStates ? &states : nullptr) + x * D.view({1, Di, 1})) * F::silu(z);
        if (keepStates) {
            probes->stateNorm.push_back(states.norm(2, -1).transpose(1, 2).detach());
            probes->stateLayer.push_back(layer);
        }
    }
    return dense(out_proj, y.transpose(1, 2));  // (B, T, C)
}

ScanInputs MambaMixerImpl::channelLastScan(const torch::Tensor& x, const torch::Tensor& z)
{
    const int64_t N = m_o.dState, R = m_o.dtRank();
    auto u = causalConvSilu(x, conv1d->weight, convBias());      // (B, T, Di), fused conv + SiLU
    auto xdbl = dense(x_proj, u);                                  // (B, T, R + 2N)
    auto dt = denseLinear(xdbl.narrow(2, 0, R), dt_proj->weight);  // (B, T, Di), bias in the scan
    // (B, Di, T) views of channel-last tensors: the scan reads them in place and returns its
    // result over (B, T, Di) memory.
    return {u.transpose(1, 2), dt.transpose(1, 2), -torch::exp(A_log), keptStateDims(xdbl.narrow(2, R, N).transpose(1, 2), 1),
            keptStateDims(xdbl.narrow(2, R + N, N).transpose(1, 2), 1), D, z.defined() ? z.transpose(1, 2) : z, dt_proj->bias, true};
}

torch::Tensor MambaMixerImpl::forwardFast(const torch::Tensor& hidden)
{
    // in_proj's halves as two contiguous (B, T, Di) tensors from one node: no (B, T, 2 Di)
    // gradient of zeros for the halves to be added into, no full-size weight gradient per half.
    auto xz = isSixteenBit(in_proj->weight)  // x, z: (B, T, Di)
                  ? std::vector<torch::Tensor>{denseLinear(hidden, in_proj->weight.narrow(0, 0, m_o.dInner())),
                                               denseLinear(hidden, in_proj->weight.narrow(0, m_o.dInner(), m_o.dInner()))}
                  : splitLinear(hidden, in_proj->weight, m_o.dInner());
    if (in_proj->bias.defined()) {
        xz[0] = xz[0] + in_proj->bias.narrow(0, 0, m_o.dInner());
        xz[1] = xz[1] + in_proj->bias.narrow(0, m_o.dInner(), m_o.dInner());
    }
    const ScanInputs in = channelLastScan(xz[0], xz[1]);
    return dense(out_proj, withoutDroppedStates(selectiveScan(in), in).transpose(1, 2));  // (B, T, C), no copy
}

torch::Tensor MambaMixerImpl::forwardAt(const torch::Tensor& hidden, const torch::Tensor& rows)
{
    auto pick = [&](const torch::Tensor& t) { return t.reshape({-1, t.size(-1)}).index_select(0, rows); };
    if (!m_o.selective || !fastPaths() || shrinkQuantises()) return pick(forward(hidden));
    // The scan without its gate (y = C.x + D u at every step), then the gate at the rows.
    const int64_t Di = m_o.dInner();
    const auto bias = [&](int64_t from) { return in_proj->bias.defined() ? in_proj->bias.narrow(0, from, Di) : torch::Tensor(); };
    auto x = denseLinear(hidden, in_proj->weight.narrow(0, 0, Di), bias(0));                 // (B, T, Di)
    const ScanInputs in = channelLastScan(x, torch::Tensor());
    auto y = pick(withoutDroppedStates(selectiveScan(in), in).transpose(1, 2));      // (R, Di)
    auto z = denseLinear(pick(hidden), in_proj->weight.narrow(0, Di, Di), bias(Di));       // (R, Di)
    return dense(out_proj, y * F::silu(z));                                                 // (R, C)
}

torch::Tensor unrollScan(const torch::Tensor& delta, const torch::Tensor& A, const torch::Tensor& Bm, const torch::Tensor& Cm)
{
    const int64_t T = delta.size(2), N = A.size(1);
    // cum[b,d,t] = delta_1 + ... + delta_t; the decay from s to t is exp(A (cum_t - cum_s)).
    const auto cum = delta.cumsum(2);                                                // (B, Di, T)
    const auto gap = cum.unsqueeze(3) - cum.unsqueeze(2);                            // (B, Di, T, T): cum_t - cum_s
    const auto causal = torch::ones({T, T}, torch::TensorOptions().dtype(torch::kBool).device(delta.device())).tril();
    auto alpha = torch::zeros_like(gap);
    for (int64_t n = 0; n < N; ++n) {  // one state dimension at a time: Di x T x T, not Di x N x T x T
        const auto a = A.select(1, n).view({1, -1, 1, 1});                           // (1, Di, 1, 1)
        const auto decay = torch::exp((a * gap).masked_fill(causal.logical_not(), -INFINITY));
        const auto c = Cm.select(1, n).view({Cm.size(0), 1, T, 1});                 // C_t[n]
        const auto b = (delta * Bm.select(1, n).unsqueeze(1)).unsqueeze(2);          // delta_s B_s[n]: (B, Di, 1, T)
        alpha = alpha + c * decay * b;
    }
    return alpha;
}

torch::Tensor implicitAttentionMean(const torch::Tensor& delta, const torch::Tensor& A, const torch::Tensor& Bm, const torch::Tensor& Cm,
                                    const std::function<bool()>& keepGoing)
{
    // unrollScan's alpha needs Di x T x T floats and Di x N x T x T exponentials: 2 GB and 2e9
    // exponentials per block of mamba-130m at 300 tokens. Here each channel runs the scan's own
    // recurrence over its keys: h[n][s] = e^{A[n] (cum_t - cum_s)} delta_s B_s[n] is h of the
    // step before times e^{A[n] delta_t} (N exponentials per step), and row t of alpha is
    // sum_n C_t[n] h[n][s]. The N x T state stays in cache; only |alpha| summed over the
    // channels is kept, one T x T sum per thread. Values that decay below float's normal range
    // are flushed to zero (denormals would slow the loop tenfold and add nothing).
    const auto device = delta.device();
    const auto dl = delta.to(torch::kCPU, torch::kFloat).contiguous();
    const auto a = A.to(torch::kCPU, torch::kFloat).contiguous();
    const auto bm = Bm.to(torch::kCPU, torch::kFloat).contiguous();
    const auto cm = Cm.to(torch::kCPU, torch::kFloat).contiguous();
    const int64_t Bt = dl.size(0), Di = dl.size(1), T = dl.size(2), N = a.size(1);
    auto sum = torch::zeros({Bt, T, T}, torch::kFloat);
    std::atomic<bool> stop{false};
    std::mutex merge;
    for (int64_t b = 0; b < Bt; ++b) {
        const float* dp = dl.data_ptr<float>() + b * Di * T;
        const float* bp = bm.data_ptr<float>() + b * N * T;
        const float* cp = cm.data_ptr<float>() + b * N * T;
        const float* ap = a.data_ptr<float>();
        float* out = sum.data_ptr<float>() + b * T * T;
        at::parallel_for(0, Di, 8, [&](int64_t begin, int64_t end) {
            FlushDenormals quiet;
            std::vector<float> h(static_cast<size_t>(N * T)), acc(static_cast<size_t>(T)), local(static_cast<size_t>(T * T), 0.f);
            for (int64_t d = begin; d < end && !stop; ++d) {
                if (keepGoing && !keepGoing()) {
                    stop = true;
                    break;
                }
                implicitRows(dp + d * T, ap + d * N, bp, cp, T, N, h.data(), acc.data(), local.data());
            }
            const std::lock_guard lock(merge);
            for (int64_t i = 0; i < T * T; ++i) out[i] += local[size_t(i)];
        });
        if (stop) throw Error("cancelled");
    }
    return (sum / double(Di)).to(device);
}

MambaImplicitAttention MambaMixerImpl::implicitAttention(const torch::Tensor& hidden)
{
    TORCH_CHECK(m_o.selective, "implicit attention: an S4-Mamba mixer has no selective scan");
    const int64_t T = hidden.size(1), Di = m_o.dInner(), N = m_o.dState, R = m_o.dtRank();
    auto xz = dense(in_proj, hidden).transpose(1, 2);
    auto u = F::silu(conv1d(xz.narrow(1, 0, Di)).narrow(2, 0, T));
    auto xdbl = dense(x_proj, u.transpose(1, 2));
    auto dt = F::softplus(denseT(xdbl.narrow(2, 0, R), dt_proj->weight).transpose(1, 2) + dt_proj->bias.view({1, Di, 1}));
    auto Bm = xdbl.narrow(2, R, N).transpose(1, 2), Cm = xdbl.narrow(2, R + N, N).transpose(1, 2);
    return {unrollScan(dt, -torch::exp(A_log), Bm, Cm), u, xz.narrow(1, Di, Di)};
}

torch::Tensor MambaMixerImpl::prefill(const torch::Tensor& hidden, MambaCache& cache)
{
    TORCH_CHECK(m_o.selective, "prefill: a selective mixer only");
    const int64_t Di = m_o.dInner(), K = m_o.dConv, S = hidden.size(1);
    const auto xz = dense(in_proj, hidden);                                 // (B, S, 2Di)
    const auto x = xz.narrow(2, 0, Di).contiguous(), z = xz.narrow(2, Di, Di).contiguous();
    // the convolution's window: the last K inputs, zeros before the prompt
    cache.conv = torch::cat({cache.conv, x.transpose(1, 2)}, 2).narrow(2, S, K).contiguous();
    const ScanInputs in = channelLastScan(x, z);
    const auto y = selectiveScan(in);                                       // (B, Di, S)
    // The state after the prompt, x_S = sum_t exp(A (cum_S - cum_t)) delta_t B_t u_t, by chunks of
    // the prompt (a (B, Di, chunk, N) block at a time); every exponent is <= 0.
    const auto delta = F::softplus(in.delta + in.deltaBias.view({1, Di, 1}));  // (B, Di, S)
    const auto A = in.A.view({1, Di, 1, -1});                               // (1, Di, 1, N)
    auto state = cache.ssm;
    for (int64_t a = 0; a < S; a += 256) {
        const int64_t n = std::min<int64_t>(256, S - a);
        const auto d = delta.narrow(2, a, n);                               // (B, Di, n)
        const auto cum = d.cumsum(2);
        const auto total = cum.narrow(2, n - 1, 1);                         // (B, Di, 1)
        const auto w = torch::exp(A * (total - cum).unsqueeze(3));          // (B, Di, n, N)
        const auto dBu = (d * in.u.narrow(2, a, n)).unsqueeze(3) * in.B.narrow(2, a, n).transpose(1, 2).unsqueeze(1);
        state = state * torch::exp(A.squeeze(2) * total) + (w * dBu).sum(2);
    }
    cache.ssm = state;
    return dense(out_proj, y.transpose(1, 2));                              // (B, S, C)
}

MambaCache MambaMixerImpl::emptyCache(int64_t batch, torch::TensorOptions opts) const
{
    return {torch::zeros({batch, m_o.dInner(), m_o.dConv}, opts), torch::zeros({batch, m_o.dInner(), m_o.dState}, opts)};
}

torch::Tensor MambaMixerImpl::step(const torch::Tensor& hidden, MambaCache& cache)
{
    const int64_t Di = m_o.dInner(), N = m_o.dState, R = m_o.dtRank();
    auto xz = dense(in_proj, hidden);                        // (B, 2Di)
    auto x = xz.narrow(1, 0, Di), z = xz.narrow(1, Di, Di);
    cache.conv = torch::cat({cache.conv.narrow(2, 1, m_o.dConv - 1), x.unsqueeze(2)}, 2);  // (B, Di, K)
    x = F::silu((cache.conv * conv1d->weight.squeeze(1).unsqueeze(0)).sum(-1) + convBias());  // (B, Di)
    torch::Tensor y;
    if (m_o.selective) {
        auto xdbl = dense(x_proj, x);                        // (B, R + 2N)
        auto dt = F::softplus(dense(dt_proj, xdbl.narrow(1, 0, R)));  // (B, Di)
        auto Bm = keptStateDims(xdbl.narrow(1, R, N), 1), Cm = keptStateDims(xdbl.narrow(1, R + N, N), 1);  // (B, N)
        auto dA = torch::exp(dt.unsqueeze(-1) * -torch::exp(A_log));    // (B, Di, N)
        cache.ssm = shrunkStep(cache.ssm * dA + dt.unsqueeze(-1) * Bm.unsqueeze(1) * x.unsqueeze(-1));
        y = (cache.ssm * Cm.unsqueeze(1)).sum(-1);           // (B, Di)
    } else {
        auto dt = torch::exp(s4->log_dt).unsqueeze(-1);       // (Di, 1)
        auto dA = torch::exp(dt * -torch::exp(s4->A_log));    // (Di, N)
        cache.ssm = shrunkStep(cache.ssm * dA + keptStateDims(dt * s4->B, 1).unsqueeze(0) * x.unsqueeze(-1));
        y = (cache.ssm * s4->C.unsqueeze(0)).sum(-1);
    }
    y = (y + x * D) * F::silu(z);
    return dense(out_proj, y);
}

namespace {

// mamba_ssm's GatedMLP: fc1 to value and gate, SiLU gate, fc2 back.
class GatedMlpImpl : public torch::nn::Module {
public:
    GatedMlpImpl(int64_t dModel, int64_t hidden) : m_hidden(hidden)
    {
        fc1 = register_module("fc1", storedLinear(torch::nn::LinearOptions(dModel, 2 * hidden).bias(false)));
        fc2 = register_module("fc2", storedLinear(torch::nn::LinearOptions(hidden, dModel).bias(false)));
    }
    torch::Tensor forward(const torch::Tensor& x)
    {
        auto h = dense(fc1, x);
        return dense(fc2, h.narrow(-1, 0, m_hidden) * F::silu(h.narrow(-1, m_hidden, m_hidden)));
    }
    torch::nn::Linear fc1{nullptr}, fc2{nullptr};

private:
    int64_t m_hidden;
};
TORCH_MODULE(GatedMlp);

}  // namespace

MambaBlockImpl::MambaBlockImpl(const MambaLMOptions& o)
{
    norm = register_module("norm", RMSNorm(o.mixer.dModel, kSsmNormEps));
    mixer = register_module("mixer", MambaMixer(o.mixer));
    if (o.mlpRatio > 0) {
        norm2 = register_module("norm2", RMSNorm(o.mixer.dModel, kSsmNormEps));
        mlp = register_module("mlp", torch::nn::Sequential(GatedMlp(o.mixer.dModel, o.mlpRatio * o.mixer.dModel)));
    }
}

torch::Tensor MambaBlockImpl::forward(torch::Tensor x, Probes* probes, int layer)
{
    x = x + mixer->forward(ssmNorm(norm, x), probes, layer);
    if (mlp) x = x + mlp->forward(ssmNorm(norm2, x));
    return x;
}

torch::Tensor MambaBlockImpl::forwardAt(const torch::Tensor& x, const torch::Tensor& rows)
{
    auto xr = x.reshape({-1, x.size(-1)}).index_select(0, rows) + mixer->forwardAt(ssmNorm(norm, x), rows);  // (R, C)
    if (mlp) xr = xr + mlp->forward(ssmNorm(norm2, xr));
    return xr;
}

torch::Tensor MambaBlockImpl::prefill(torch::Tensor x, MambaCache& cache)
{
    x = x + mixer->prefill(norm(x), cache);
    if (mlp) x = x + mlp->forward(norm2(x));
    return x;
}

torch::Tensor MambaBlockImpl::step(torch::Tensor x, MambaCache& cache)
{
    x = x + mixer->step(norm(x), cache);
    if (mlp) x = x + mlp->forward(norm2(x));
    return x;
}

MambaLMImpl::MambaLMImpl(const MambaLMOptions& o) : m_o(o)
{
    const SsmBackbone skeleton = registerSsmBackbone(*this, o.vocabSize, o.mixer.dModel, o.tieEmbeddings, o.layers, kSsmNormEps,
                                                     [&o] { return MambaBlock(o).ptr(); });
    m_backbone = skeleton.backbone;
    embedding = skeleton.embedding;
    layers = skeleton.layers;
    norm_f = skeleton.norm_f;
    lm_head = skeleton.lm_head;
    if (WeightStorage::current() != torch::kFloat) return;  // 16-bit weights are built only to be loaded into
    torch::NoGradGuard noGrad;
    // mamba_ssm (_init_weights, rescale_prenorm_residual) divides every projection that writes into
    // the residual stream, out_proj and the MLP's fc2, by sqrt(residuals per layer * layers):
    // GPT-2's reason, each residual branch adds variance. One residual per layer without an MLP, two with.
    const double residuals = double(o.mlpRatio > 0 ? 2 : 1) * double(o.layers);
    for (const auto& block : *layers) {
        auto* b = block->as<MambaBlockImpl>();
        b->mixer->out_proj->weight.div_(std::sqrt(residuals));
        if (b->mlp) b->mlp[0]->as<GatedMlpImpl>()->fc2->weight.div_(std::sqrt(residuals));
    }
}

torch::Tensor MambaLMImpl::embed(const torch::Tensor& idx) { return dense(embedding, idx); }

torch::Tensor MambaLMImpl::head(const torch::Tensor& x) { return lmLogits(x, lm_head, embedding->weight); }

torch::Tensor MambaLMImpl::hidden(const torch::Tensor& input, Probes* probes)
{
    auto x = input;  // (B, T, C)
    int layer = 0;
    for (const auto& block : *layers) x = block->as<MambaBlockImpl>()->forward(x, probes, layer++);
    return ssmNorm(norm_f, x);
}

torch::Tensor MambaLMImpl::forwardAt(const torch::Tensor& idx, const torch::Tensor& rows)
{
    if (layers->size() == 0) return SequenceModelImpl::forwardAt(idx, rows);
    auto x = embed(idx);
    const size_t last = layers->size() - 1;
    for (size_t i = 0; i < last; ++i) x = layers->at<MambaBlockImpl>(i).forward(x, nullptr, int(i));
    return head(ssmNorm(norm_f, layers->at<MambaBlockImpl>(last).forwardAt(x, rows)));  // (R, V)
}

torch::Tensor MambaLMImpl::step(const torch::Tensor& idx, std::vector<MambaCache>& caches)
{
    auto x = dense(embedding, idx);  // (B, C)
    if (caches.empty())
        for (const auto& block : *layers)
            caches.push_back(block->as<MambaBlockImpl>()->mixer->emptyCache(idx.size(0), x.options()));
    size_t i = 0;
    for (const auto& block : *layers) x = block->as<MambaBlockImpl>()->step(x, caches[i++]);
    return lmLogits(norm_f(x), lm_head, embedding->weight);  // (B, V)
}

namespace {
struct MambaDecode : DecodeState {
    std::vector<MambaCache> caches;  // per layer, made by step() on the first token
};
}  // namespace

std::unique_ptr<DecodeState> MambaLMImpl::startDecoding(int64_t, torch::TensorOptions) { return std::make_unique<MambaDecode>(); }

torch::Tensor MambaLMImpl::decode(const torch::Tensor& idx, DecodeState& state)
{
    auto& s = static_cast<MambaDecode&>(state);
    if (s.caches.empty() && idx.size(1) > 1 && m_o.mixer.selective && fastPaths() && !StateShrinkScope::current()) {
        // The prompt at once: the projections as matrix products, the fused scan, the final
        // state in closed form; then one step a token. (Each step reads every weight once.)
        auto x = dense(embedding, idx);  // (B, S, C)
        for (const auto& block : *layers) {
            auto* b = block->as<MambaBlockImpl>();
            s.caches.push_back(b->mixer->emptyCache(idx.size(0), x.options()));
            x = b->prefill(x, s.caches.back());
        }
        s.length += idx.size(1);
        if (s.lastOnly && x.size(1) > 1) x = x.narrow(1, x.size(1) - 1, 1);
        return lmLogits(norm_f(x), lm_head, embedding->weight);  // (B, S, V), or (B, 1, V)
    }
    std::vector<torch::Tensor> logits;
    for (int64_t t = 0; t < idx.size(1); ++t) logits.push_back(step(idx.select(1, t), s.caches));  // (B, V) each
    s.length += idx.size(1);
    return torch::stack(logits, 1);  // (B, S, V)
}

StateSize MambaLMImpl::stateSize() const
{
    return {m_o.layers * m_o.mixer.dInner() * (m_o.mixer.dState + m_o.mixer.dConv - 1), 0};
}

}  // namespace parrot
