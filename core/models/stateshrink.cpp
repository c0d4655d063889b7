#include "core/models/stateshrink.h"

#include "core/kernels/selectivescan.h"

#include <cmath>

namespace parrot {

namespace {
thread_local const StateShrink* t_shrink = nullptr;
}

StateShrinkScope::StateShrinkScope(const StateShrink& shrink) : m_previous(exchange(&shrink)) {}
StateShrinkScope::~StateShrinkScope() { t_shrink = m_previous; }
const StateShrink* StateShrinkScope::current() { return t_shrink; }
const StateShrink* StateShrinkScope::exchange(const StateShrink* shrink)
{
    const StateShrink* previous = t_shrink;
    t_shrink = shrink && !shrink->isEmpty() ? shrink : nullptr;
    return previous;
}

torch::Tensor keptStateDims(const torch::Tensor& t, int64_t dim)
{
    const StateShrink* s = t_shrink;
    if (!s || s->mode != StateShrink::Mode::Dims) return t;
    const int64_t N = t.size(dim);
    std::vector<int64_t> shape(size_t(t.dim()), 1);
    shape[size_t(dim < 0 ? dim + t.dim() : dim)] = N;
    const auto keep = torch::arange(N, torch::TensorOptions().device(t.device())).lt(s->dims).to(t.scalar_type()).view(shape);
    return t * keep;
}

int64_t keptChannels(int64_t channels)
{
    const StateShrink* s = t_shrink;
    if (!s || s->mode != StateShrink::Mode::Channels) return channels;
    return std::clamp<int64_t>(std::llround(s->fraction * double(channels)), 0, channels);
}

bool shrinkQuantises() { return t_shrink && t_shrink->mode == StateShrink::Mode::Bits; }
int shrinkBits() { return shrinkQuantises() ? t_shrink->bits : 32; }

torch::Tensor quantisedState(const torch::Tensor& h, int bits)
{
    const double steps = std::pow(2.0, bits) - 1;  // 2^bits levels: -s, -s + 2s/steps, ..., s
    const auto s = h.abs().amax(-1, true);
    const auto safe = s.clamp_min(1e-30);
    const auto level = torch::round((h / safe + 1) * (steps / 2));
    return torch::where(s > 0, level * (2 / steps) * safe - safe, torch::zeros_like(h));
}

torch::Tensor dropChannelStates(const torch::Tensor& y, const torch::Tensor& zeroState)
{
    const int64_t D = y.size(1), kept = keptChannels(D);
    if (kept == D) return y;
    return torch::cat({y.narrow(1, 0, kept), zeroState.narrow(1, kept, D - kept).to(y.scalar_type())}, 1);
}

// What the scan gives with no state: the skip D u, gated where in.z is defined (B, D, T).
torch::Tensor skipOnly(const ScanInputs& in)
{
    const auto y = in.u * in.D.view({1, -1, 1});
    return in.z.defined() ? y * torch::nn::functional::silu(in.z) : y;
}

torch::Tensor withoutDroppedStates(const torch::Tensor& y, const ScanInputs& in)
{
    return keptChannels(y.size(1)) == y.size(1) ? y : dropChannelStates(y, skipOnly(in));
}

torch::Tensor shrunkScan(const ScanInputs& in)
{
    if (shrinkQuantises()) return quantisedSelectiveScan(in, shrinkBits());
    ScanInputs kept = in;
    kept.B = keptStateDims(in.B, 1);
    kept.C = keptStateDims(in.C, 1);
    return withoutDroppedStates(selectiveScan(kept), kept);
}

torch::Tensor quantisedSelectiveScan(const ScanInputs& in, int bits)
{
    namespace F = torch::nn::functional;
    const int64_t Bn = in.u.size(0), D = in.u.size(1), T = in.u.size(2), N = in.A.size(1);
    torch::Tensor delta = in.delta;
    if (in.deltaBias.defined()) delta = delta + in.deltaBias.view({1, D, 1});
    if (in.deltaSoftplus) delta = F::softplus(delta);
    torch::Tensor h = torch::zeros({Bn, D, N}, in.u.options());
    std::vector<torch::Tensor> ys;
    for (int64_t t = 0; t < T; ++t) {
        const torch::Tensor dt = delta.select(2, t).unsqueeze(-1);  // (B, D, 1)
        h = quantisedState(torch::exp(dt * in.A.unsqueeze(0)) * h + dt * in.B.select(2, t).unsqueeze(1) * in.u.select(2, t).unsqueeze(-1), bits);
        ys.push_back((h * in.C.select(2, t).unsqueeze(1)).sum(-1));  // (B, D)
    }
    torch::Tensor y = torch::stack(ys, 2) + in.u * in.D.view({1, D, 1});
    if (in.z.defined()) y = y * F::silu(in.z);
    return y;
}

}  // namespace parrot
