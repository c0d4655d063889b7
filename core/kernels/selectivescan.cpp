#include "selectivescan.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace parrot {

using torch::Tensor;
namespace F = torch::nn::functional;

Tensor selectiveScanReference(const ScanInputs& in, Tensor* states)
{
    const int64_t Bn = in.u.size(0), D = in.u.size(1), T = in.u.size(2), N = in.A.size(1);
    Tensor delta = in.delta;
    if (in.deltaBias.defined()) delta = delta + in.deltaBias.view({1, D, 1});
    if (in.deltaSoftplus) delta = F::softplus(delta);
    Tensor x = torch::zeros({Bn, D, N}, in.u.options());
    std::vector<Tensor> ys, xs;
    for (int64_t t = 0; t < T; ++t) {
        Tensor dt = delta.select(2, t).unsqueeze(-1);                    // (B, D, 1)
        Tensor dA = torch::exp(dt * in.A.unsqueeze(0));                  // (B, D, N)
        Tensor dBu = dt * in.B.select(2, t).unsqueeze(1) * in.u.select(2, t).unsqueeze(-1);  // (B, D, N)
        x = dA * x + dBu;
        ys.push_back((x * in.C.select(2, t).unsqueeze(1)).sum(-1));      // (B, D)
        if (states) xs.push_back(x);
    }
    Tensor y = torch::stack(ys, 2) + in.u * in.D.view({1, D, 1});       // (B, D, T)
    if (states) *states = torch::stack(xs, 2);                          // (B, D, T, N)
    if (in.z.defined()) y = y * F::silu(in.z);
    return y;
}

namespace {

constexpr int64_t kMaxState = 256;

template <class S> inline S softplus(S v) { return v > S(20) ? v : std::log1p(std::exp(v)); }

// exp for the scan's inner loops. float: a branch-free Cephes-style polynomial (relative error
// ~2e-7, well inside the 1e-4 the tests ask) that the compiler vectorises, where std::exp is a
// scalar call; double (used by the finite-difference check) keeps std::exp.
inline float scanExp(float x)
{
    x = std::min(std::max(x, -87.0f), 88.0f);
    const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    const float t = x * 1.44269504088896341f + magic;
    const float n = t - magic;
    x = x - n * 0.693359375f + n * 2.12194440e-4f;  // x - n ln 2, in two parts for precision
    float y = 1.9875691500e-4f;
    y = y * x + 1.3981999507e-3f;
    y = y * x + 8.3334519073e-3f;
    y = y * x + 4.1665795894e-2f;
    y = y * x + 1.6666665459e-1f;
    y = y * x + 5.0000001201e-1f;
    y = y * x * x + x + 1.0f;
    const int32_t k = std::bit_cast<int32_t>(t) - 0x4B400000;  // the integer n
    return y * std::bit_cast<float>((k + 127) << 23);
}
inline double scanExp(double x) { return std::exp(x); }
template <class S> inline S sigmoid(S v) { return S(1) / (S(1) + std::exp(-v)); }

// Contiguous views the kernels index by hand. B and C are moved to (B, T, N) so that the
// inner loop over the state runs along memory.
struct Packed {
    Tensor u, delta, A, Bt, Ct, D, z, bias;
    int64_t Bn, Dn, T, N;
    bool hasZ, hasBias, softplus;

    explicit Packed(const ScanInputs& in)
    {
        u = in.u.contiguous();
        delta = in.delta.contiguous();
        A = in.A.contiguous();
        Bt = in.B.transpose(1, 2).contiguous();
        Ct = in.C.transpose(1, 2).contiguous();
        D = in.D.contiguous();
        hasZ = in.z.defined();
        hasBias = in.deltaBias.defined();
        z = hasZ ? in.z.contiguous() : Tensor();
        bias = hasBias ? in.deltaBias.contiguous() : Tensor();
        softplus = in.deltaSoftplus;
        Bn = u.size(0);
        Dn = u.size(1);
        T = u.size(2);
        N = A.size(1);
        TORCH_CHECK(N <= kMaxState, "selective scan: d_state ", N, " exceeds ", kMaxState);
    }
};

template <class S> void scanForward(const Packed& p, Tensor& out)
{
    const S* u = p.u.data_ptr<S>();
    const S* dl = p.delta.data_ptr<S>();
    const S* A = p.A.data_ptr<S>();
    const S* Bt = p.Bt.data_ptr<S>();
    const S* Ct = p.Ct.data_ptr<S>();
    const S* Dk = p.D.data_ptr<S>();
    const S* z = p.hasZ ? p.z.data_ptr<S>() : nullptr;
    const S* bias = p.hasBias ? p.bias.data_ptr<S>() : nullptr;
    S* o = out.data_ptr<S>();
    const int64_t Dn = p.Dn, T = p.T, N = p.N;
    at::parallel_for(0, p.Bn * Dn, 1, [&](int64_t begin, int64_t end) {
        S x[kMaxState];
        for (int64_t bd = begin; bd < end; ++bd) {
            const int64_t b = bd / Dn, d = bd % Dn;
            const S* Ad = A + d * N;
            const int64_t row = bd * T;
            std::fill(x, x + N, S(0));
            for (int64_t t = 0; t < T; ++t) {
                S dt = dl[row + t] + (bias ? bias[d] : S(0));
                if (p.softplus) dt = softplus(dt);
                const S ut = u[row + t];
                const S* Bv = Bt + (b * T + t) * N;
                const S* Cv = Ct + (b * T + t) * N;
                const S dtu = dt * ut;
#pragma omp simd
                for (int64_t n = 0; n < N; ++n) x[n] = scanExp(dt * Ad[n]) * x[n] + dtu * Bv[n];
                S y = 0;
#pragma omp simd reduction(+ : y)
                for (int64_t n = 0; n < N; ++n) y += Cv[n] * x[n];
                y += Dk[d] * ut;
                if (z) {
                    const S zt = z[row + t];
                    y *= zt * sigmoid(zt);
                }
                o[row + t] = y;
            }
        }
    });
}

// Backward, parallel over the batch: each thread owns whole batch rows, so dB and dC (shared
// by all channels of a row) need no atomics; dA, dD and the bias gradient are summed per row
// and reduced afterwards. The states of one channel are recomputed into a (T+1) x N buffer.
template <class S> std::vector<Tensor> scanBackward(const Packed& p, const Tensor& gradOut)
{
    const int64_t Bn = p.Bn, Dn = p.Dn, T = p.T, N = p.N;
    const auto opts = p.u.options();
    Tensor du = torch::zeros_like(p.u), ddelta = torch::zeros_like(p.delta);
    Tensor dBt = torch::zeros({Bn, T, N}, opts), dCt = torch::zeros({Bn, T, N}, opts);
    Tensor dArow = torch::zeros({Bn, Dn, N}, opts), dDrow = torch::zeros({Bn, Dn}, opts);
    Tensor dbiasRow = torch::zeros({Bn, Dn}, opts);
    Tensor dz = p.hasZ ? torch::zeros_like(p.z) : Tensor();
    Tensor g = gradOut.contiguous();

    const S* u = p.u.data_ptr<S>();
    const S* dl = p.delta.data_ptr<S>();
    const S* A = p.A.data_ptr<S>();
    const S* Bt = p.Bt.data_ptr<S>();
    const S* Ct = p.Ct.data_ptr<S>();
    const S* Dk = p.D.data_ptr<S>();
    const S* z = p.hasZ ? p.z.data_ptr<S>() : nullptr;
    const S* bias = p.hasBias ? p.bias.data_ptr<S>() : nullptr;
    const S* go = g.data_ptr<S>();
    S* gu = du.data_ptr<S>();
    S* gdl = ddelta.data_ptr<S>();
    S* gB = dBt.data_ptr<S>();
    S* gC = dCt.data_ptr<S>();
    S* gA = dArow.data_ptr<S>();
    S* gD = dDrow.data_ptr<S>();
    S* gbias = dbiasRow.data_ptr<S>();
    S* gz = p.hasZ ? dz.data_ptr<S>() : nullptr;

    at::parallel_for(0, Bn, 1, [&](int64_t begin, int64_t end) {
        std::vector<S> xs(static_cast<size_t>((T + 1) * N)), as(static_cast<size_t>(T * N));
        std::vector<S> dts(static_cast<size_t>(T)), ys(static_cast<size_t>(T));
        S h[kMaxState];
        for (int64_t b = begin; b < end; ++b) {
            for (int64_t d = 0; d < Dn; ++d) {
                const int64_t row = (b * Dn + d) * T;
                const S* Ad = A + d * N;
                // Forward again, keeping x_t (xs[t + 1]), delta_t and y_t before the gate.
                std::fill(xs.begin(), xs.begin() + N, S(0));
                for (int64_t t = 0; t < T; ++t) {
                    S dt = dl[row + t] + (bias ? bias[d] : S(0));
                    if (p.softplus) dt = softplus(dt);
                    dts[t] = dt;
                    const S ut = u[row + t];
                    const S* Bv = Bt + (b * T + t) * N;
                    const S* Cv = Ct + (b * T + t) * N;
                    const S* xp = &xs[size_t(t * N)];
                    S* xn = &xs[size_t((t + 1) * N)];
                    S* at = &as[size_t(t * N)];
                    const S dtu = dt * ut;
#pragma omp simd
                    for (int64_t n = 0; n < N; ++n) {
                        at[n] = scanExp(dt * Ad[n]);
                        xn[n] = at[n] * xp[n] + dtu * Bv[n];
                    }
                    S y = 0;
#pragma omp simd reduction(+ : y)
                    for (int64_t n = 0; n < N; ++n) y += Cv[n] * xn[n];
                    ys[t] = y + Dk[d] * ut;
                }
                // Reverse sweep; h carries dL/dx_t from t + 1.
                std::fill(h, h + N, S(0));
                S dDacc = 0, dbiasAcc = 0;
                S* gAd = gA + (b * Dn + d) * N;
                for (int64_t t = T - 1; t >= 0; --t) {
                    S dy = go[row + t];
                    if (z) {
                        const S zt = z[row + t], sg = sigmoid(zt);
                        gz[row + t] = dy * ys[t] * sg * (S(1) + zt * (S(1) - sg));
                        dy *= zt * sg;
                    }
                    const S dt = dts[t], ut = u[row + t];
                    const S* Bv = Bt + (b * T + t) * N;
                    const S* Cv = Ct + (b * T + t) * N;
                    S* gBv = gB + (b * T + t) * N;
                    S* gCv = gC + (b * T + t) * N;
                    const S* xp = &xs[size_t(t * N)];
                    const S* xn = &xs[size_t((t + 1) * N)];
                    const S* at = &as[size_t(t * N)];
                    S ddt = 0, dut = dy * Dk[d];
                    dDacc += dy * ut;
#pragma omp simd reduction(+ : ddt, dut)
                    for (int64_t n = 0; n < N; ++n) {
                        const S dx = h[n] + dy * Cv[n];
                        const S axp = at[n] * xp[n];
                        gCv[n] += dy * xn[n];
                        ddt += dx * (Ad[n] * axp + Bv[n] * ut);
                        gAd[n] += dx * dt * axp;
                        gBv[n] += dx * dt * ut;
                        dut += dx * dt * Bv[n];
                        h[n] = dx * at[n];
                    }
                    gu[row + t] = dut;
                    if (p.softplus) ddt *= sigmoid(dl[row + t] + (bias ? bias[d] : S(0)));
                    gdl[row + t] = ddt;
                    dbiasAcc += ddt;
                }
                gD[b * Dn + d] = dDacc;
                gbias[b * Dn + d] = dbiasAcc;
            }
        }
    });
    return {du, ddelta, dArow.sum(0), dBt.transpose(1, 2).contiguous(), dCt.transpose(1, 2).contiguous(),
            dDrow.sum(0), dz, p.hasBias ? dbiasRow.sum(0) : Tensor()};
}

struct SelectiveScanFunction : public torch::autograd::Function<SelectiveScanFunction> {
    // An absent gate or bias arrives as an empty tensor: autograd functions take no undefined inputs.
    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor u, Tensor delta, Tensor A, Tensor B,
                          Tensor C, Tensor D, Tensor z, Tensor deltaBias, bool softplus)
    {
        ScanInputs in{u, delta, A, B, C, D, z.numel() ? z : Tensor(), deltaBias.numel() ? deltaBias : Tensor(), softplus};
        const Packed p(in);
        Tensor out = torch::empty_like(p.u);
        AT_DISPATCH_FLOATING_TYPES(p.u.scalar_type(), "selective_scan_fwd", [&] { scanForward<scalar_t>(p, out); });
        ctx->save_for_backward({u, delta, A, B, C, D, z, deltaBias});
        ctx->saved_data["softplus"] = softplus;
        return out;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads)
    {
        const auto s = ctx->get_saved_variables();
        ScanInputs in{s[0], s[1], s[2], s[3], s[4], s[5], s[6].numel() ? s[6] : Tensor(), s[7].numel() ? s[7] : Tensor(),
                      ctx->saved_data["softplus"].toBool()};
        const Packed p(in);
        std::vector<Tensor> g;
        AT_DISPATCH_FLOATING_TYPES(p.u.scalar_type(), "selective_scan_bwd", [&] { g = scanBackward<scalar_t>(p, grads[0]); });
        return {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], Tensor()};
    }
};

}  // namespace

Tensor selectiveScanFused(const ScanInputs& in)
{
    TORCH_CHECK(in.u.device().is_cpu(), "selectiveScanFused: CPU tensors expected");
    TORCH_CHECK(in.u.dim() == 3 && in.A.dim() == 2 && in.B.dim() == 3 && in.C.dim() == 3,
                "selectiveScanFused: expected u (B, D, T), A (D, N), B and C (B, N, T)");
    const Tensor none = torch::empty({0}, in.u.options());
    return SelectiveScanFunction::apply(in.u, in.delta, in.A, in.B, in.C, in.D, in.z.defined() ? in.z : none,
                                        in.deltaBias.defined() ? in.deltaBias : none, in.deltaSoftplus);
}

Tensor selectiveScan(const ScanInputs& in)
{
    const auto type = in.u.scalar_type();
    if (in.u.device().is_cpu() && (type == torch::kFloat || type == torch::kDouble) && in.A.size(1) <= kMaxState)
        return selectiveScanFused(in);
    return selectiveScanReference(in);
}

}  // namespace parrot
