#include "selectivescan.h"

#include "scankernel.h"

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

// The scan's core, y_t = C_t . x_t + D u_t with x_t = exp(dt_t A) x_{t-1} + dt_t B_t u_t, in
// the layouts the kernels want: u, dt: (B, T, D); A: (N, D); B, C: (B, T, N). The gate, the
// delta bias and the softplus stay outside as ordinary differentiable torch ops.
struct Core {
    Tensor u, dt, A, B, C, D;  // float: D padded to a multiple of 8 lanes
    int64_t Bn, T, Dn, Dpad, N;

    Core(const Tensor& u_, const Tensor& dt_, const Tensor& A_, const Tensor& B_, const Tensor& C_, const Tensor& D_)
    {
        Bn = u_.size(0);
        Dn = u_.size(1);
        T = u_.size(2);
        N = A_.size(1);
        const bool vector = u_.scalar_type() == torch::kFloat;
        Dpad = vector ? (Dn + scan::kLanes - 1) / scan::kLanes * scan::kLanes : Dn;
        namespace F = torch::nn::functional;
        auto padLast = [&](const Tensor& t) { return Dpad == Dn ? t : F::pad(t, F::PadFuncOptions({0, Dpad - Dn})); };
        u = padLast(u_.transpose(1, 2)).contiguous();
        dt = padLast(dt_.transpose(1, 2)).contiguous();
        A = padLast(A_.t()).contiguous();
        B = B_.transpose(1, 2).contiguous();
        C = C_.transpose(1, 2).contiguous();
        D = padLast(D_).contiguous();
    }
    // From tensors already packed (saved by the forward): no copies.
    Core(std::vector<Tensor> packed, int64_t channels) : Dn(channels)
    {
        u = packed[0];
        dt = packed[1];
        A = packed[2];
        B = packed[3];
        C = packed[4];
        D = packed[5];
        Bn = u.size(0);
        T = u.size(1);
        Dpad = u.size(2);
        N = A.size(0);
    }
    // (B, T, Dpad) -> (B, D, T) as a view: the Mamba mixer transposes it straight back.
    Tensor unpad(const Tensor& btd) const { return btd.narrow(2, 0, Dn).transpose(1, 2); }
};

// The same loops in scalar code for float64, which the finite-difference test uses.
template <class S> void coreForwardScalar(const Core& c, Tensor& y)
{
    const S *u = c.u.data_ptr<S>(), *dt = c.dt.data_ptr<S>(), *A = c.A.data_ptr<S>(), *Bm = c.B.data_ptr<S>(),
            *Cm = c.C.data_ptr<S>(), *D = c.D.data_ptr<S>();
    S* o = y.data_ptr<S>();
    const int64_t T = c.T, Dn = c.Dpad, N = c.N;
    at::parallel_for(0, c.Bn * Dn, 1, [&](int64_t begin, int64_t end) {
        S x[kMaxState];
        for (int64_t bd = begin; bd < end; ++bd) {
            const int64_t b = bd / Dn, d = bd % Dn;
            std::fill(x, x + N, S(0));
            for (int64_t t = 0; t < T; ++t) {
                const int64_t at = (b * T + t) * Dn + d;
                S yt = D[d] * u[at];
                for (int64_t n = 0; n < N; ++n) {
                    x[n] = std::exp(dt[at] * A[n * Dn + d]) * x[n] + dt[at] * Bm[(b * T + t) * N + n] * u[at];
                    yt += Cm[(b * T + t) * N + n] * x[n];
                }
                o[at] = yt;
            }
        }
    });
}

template <class S> void coreBackwardScalar(const Core& c, const Tensor& gy, std::vector<Tensor>& g)
{
    const S *u = c.u.data_ptr<S>(), *dt = c.dt.data_ptr<S>(), *A = c.A.data_ptr<S>(), *Bm = c.B.data_ptr<S>(),
            *Cm = c.C.data_ptr<S>(), *D = c.D.data_ptr<S>(), *dy = gy.data_ptr<S>();
    S *du = g[0].data_ptr<S>(), *ddt = g[1].data_ptr<S>(), *dA = g[2].data_ptr<S>(), *dB = g[3].data_ptr<S>(),
      *dC = g[4].data_ptr<S>(), *dD = g[5].data_ptr<S>();
    const int64_t T = c.T, Dn = c.Dpad, N = c.N;
    at::parallel_for(0, c.Bn, 1, [&](int64_t begin, int64_t end) {
        std::vector<S> xs(static_cast<size_t>((T + 1) * N));
        S h[kMaxState];
        for (int64_t b = begin; b < end; ++b)
            for (int64_t d = 0; d < Dn; ++d) {
                std::fill(xs.begin(), xs.begin() + N, S(0));
                for (int64_t t = 0; t < T; ++t) {
                    const int64_t at = (b * T + t) * Dn + d;
                    for (int64_t n = 0; n < N; ++n)
                        xs[size_t((t + 1) * N + n)] = std::exp(dt[at] * A[n * Dn + d]) * xs[size_t(t * N + n)]
                                                      + dt[at] * Bm[(b * T + t) * N + n] * u[at];
                }
                std::fill(h, h + N, S(0));
                for (int64_t t = T - 1; t >= 0; --t) {
                    const int64_t at = (b * T + t) * Dn + d, bt = (b * T + t) * N;
                    S ddtv = 0, duv = dy[at] * D[d];
                    dD[b * Dn + d] += dy[at] * u[at];
                    for (int64_t n = 0; n < N; ++n) {
                        const S a = std::exp(dt[at] * A[n * Dn + d]);
                        const S dx = h[n] + dy[at] * Cm[bt + n];
                        const S axp = a * xs[size_t(t * N + n)];
                        dC[bt + n] += dy[at] * xs[size_t((t + 1) * N + n)];
                        ddtv += dx * (A[n * Dn + d] * axp + Bm[bt + n] * u[at]);
                        dA[(b * N + n) * Dn + d] += dx * dt[at] * axp;
                        dB[bt + n] += dx * dt[at] * u[at];
                        duv += dx * dt[at] * Bm[bt + n];
                        h[n] = dx * a;
                    }
                    du[at] = duv;
                    ddt[at] = ddtv;
                }
            }
    });
}

scan::Forward forwardArgs(const Core& c, Tensor& y)
{
    return {c.u.data_ptr<float>(), c.dt.data_ptr<float>(), c.A.data_ptr<float>(), c.B.data_ptr<float>(),
            c.C.data_ptr<float>(), c.D.data_ptr<float>(), y.data_ptr<float>(), c.Bn, c.T, c.Dpad, c.N};
}

struct ScanCoreFunction : public torch::autograd::Function<ScanCoreFunction> {
    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor u, Tensor dt, Tensor A, Tensor B, Tensor C, Tensor D)
    {
        const Core c(u, dt, A, B, C, D);
        ctx->save_for_backward({c.u, c.dt, c.A, c.B, c.C, c.D});
        ctx->saved_data["channels"] = c.Dn;
        Tensor y = torch::empty({c.Bn, c.T, c.Dpad}, c.u.options());
        if (c.u.scalar_type() == torch::kFloat) {
            const scan::Forward f = forwardArgs(c, y);
            const bool avx2 = scan::haveAvx2();
            const int64_t blocks = c.Dpad / scan::kLanes;
            at::parallel_for(0, c.Bn * blocks, 1, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                    const int64_t b = i / blocks, blk = i % blocks;
                    (avx2 ? scan::forwardAvx2 : scan::forwardGeneric)(f, b, blk, blk + 1);
                }
            });
        } else {
            coreForwardScalar<double>(c, y);
        }
        return c.unpad(y);
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads)
    {
        const Core c(ctx->get_saved_variables(), ctx->saved_data["channels"].toInt());
        namespace F = torch::nn::functional;
        Tensor gy = grads[0].transpose(1, 2);
        if (c.Dpad != c.Dn) gy = F::pad(gy, F::PadFuncOptions({0, c.Dpad - c.Dn}));
        gy = gy.contiguous();
        const auto o = c.u.options();
        // The vector kernels write every element; the scalar one accumulates into zeros.
        auto make = [&](std::vector<int64_t> shape) {
            return c.u.scalar_type() == torch::kFloat ? torch::empty(shape, o) : torch::zeros(shape, o);
        };
        std::vector<Tensor> g{make({c.Bn, c.T, c.Dpad}), make({c.Bn, c.T, c.Dpad}), make({c.Bn, c.N, c.Dpad}),
                              make({c.Bn, c.T, c.N}), make({c.Bn, c.T, c.N}), make({c.Bn, c.Dpad})};
        if (c.u.scalar_type() == torch::kFloat) {
            const scan::Backward b{c.u.data_ptr<float>(), c.dt.data_ptr<float>(), c.A.data_ptr<float>(),
                                   c.B.data_ptr<float>(), c.C.data_ptr<float>(), c.D.data_ptr<float>(),
                                   gy.data_ptr<float>(), g[0].data_ptr<float>(), g[1].data_ptr<float>(),
                                   g[2].data_ptr<float>(), g[3].data_ptr<float>(), g[4].data_ptr<float>(),
                                   g[5].data_ptr<float>(), c.Bn, c.T, c.Dpad, c.N};
            const bool avx2 = scan::haveAvx2();
            at::parallel_for(0, c.Bn, 1, [&](int64_t begin, int64_t end) {
                (avx2 ? scan::backwardAvx2 : scan::backwardGeneric)(b, begin, end);
            });
        } else {
            coreBackwardScalar<double>(c, gy, g);
        }
        return {c.unpad(g[0]), c.unpad(g[1]), g[2].sum(0).narrow(1, 0, c.Dn).t().contiguous(),
                g[3].transpose(1, 2).contiguous(), g[4].transpose(1, 2).contiguous(), g[5].sum(0).narrow(0, 0, c.Dn)};
    }
};

}  // namespace

Tensor selectiveScanFused(const ScanInputs& in)
{
    TORCH_CHECK(in.u.device().is_cpu(), "selectiveScanFused: CPU tensors expected");
    TORCH_CHECK(in.u.dim() == 3 && in.A.dim() == 2 && in.B.dim() == 3 && in.C.dim() == 3,
                "selectiveScanFused: expected u (B, D, T), A (D, N), B and C (B, N, T)");
    TORCH_CHECK(in.A.size(1) <= kMaxState, "selective scan: d_state ", in.A.size(1), " exceeds ", kMaxState);
    const int64_t D = in.u.size(1);
    Tensor dt = in.deltaBias.defined() ? in.delta + in.deltaBias.view({1, D, 1}) : in.delta;
    if (in.deltaSoftplus) dt = F::softplus(dt);
    Tensor y = ScanCoreFunction::apply(in.u, dt, in.A, in.B, in.C, in.D);
    return in.z.defined() ? y * F::silu(in.z) : y;
}

Tensor selectiveScan(const ScanInputs& in)
{
    const auto type = in.u.scalar_type();
    if (in.u.device().is_cpu() && (type == torch::kFloat || type == torch::kDouble) && in.A.size(1) <= kMaxState)
        return selectiveScanFused(in);
    return selectiveScanReference(in);
}

}  // namespace parrot
