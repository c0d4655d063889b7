#include "core/kernels/selectivescan.h"

#include "core/kernels/scanchannel.h"
#include "core/kernels/scankernel.h"
#ifdef PARROT_HAVE_CUDA_SCAN
#include "core/kernels/scancuda.h"
#endif

#include <ATen/Parallel.h>

#include <type_traits>

#include <algorithm>
#include <atomic>
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

// useScanKernel's choice: 0 the best, 1 AVX-512, 2 AVX2, 3 baseline.
std::atomic<int> g_kernel{0};

int kernelLevel()
{
    const int chosen = g_kernel.load();
    if (chosen != 0) return chosen;
    return scan::haveAvx512() ? 1 : scan::haveAvx2() ? 2 : 3;
}

// f once on each of Torch's threads (they take their work from a shared scan::Items).
template <class F> void onEveryThread(F f)
{
    at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) f();
    });
}

template <class S> scan::View3<S> view3(const Tensor& t)
{
    return {t.data_ptr<S>(), t.stride(0), t.stride(1), t.stride(2)};
}
template <class S> scan::Out3<S> out3(const Tensor& t)
{
    return {t.data_ptr<S>(), t.stride(0), t.stride(1), t.stride(2)};
}

// A new (B, D, T) tensor laid out as `like` is: channels adjacent in memory (a transposed
// (B, T, D) tensor, as the Mamba mixer's projections give) or time adjacent. Results and
// gradients then go back to the mixer's linear layers without a copy.
Tensor emptyLike(const Tensor& like)
{
    const int64_t B = like.size(0), D = like.size(1), T = like.size(2);
    if (like.stride(1) == 1 && like.stride(2) != 1 && T > 1) return torch::empty({B, T, D}, like.options()).transpose(1, 2);
    return torch::empty({B, D, T}, like.options());
}

// parts (B, G, T, N) summed over G in group order into (B, T, N): the same sums whatever the
// number of threads.
template <class S> Tensor sumGroups(const Tensor& parts)
{
    const int64_t B = parts.size(0), G = parts.size(1), TN = parts.size(2) * parts.size(3);
    if (G == 1) return parts.select(1, 0);
    Tensor sum = torch::empty({B, parts.size(2), parts.size(3)}, parts.options());
    const S* p = parts.data_ptr<S>();
    S* o = sum.data_ptr<S>();
    at::parallel_for(0, B * TN, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / TN, j = i % TN;
            S acc = p[b * G * TN + j];
            for (int64_t g = 1; g < G; ++g) acc += p[(b * G + g) * TN + j];
            o[i] = acc;
        }
    });
    return sum;
}

// Everything between the mixer's projections in one autograd node: delta bias, softplus, the
// scan, the D skip and the gate. Absent z and bias come in as empty tensors (autograd
// functions take no undefined ones).
struct ScanFunction : public torch::autograd::Function<ScanFunction> {
    template <class S> static scan::Args<S> args(const std::vector<Tensor>& v, bool softplus)
    {
        const Tensor &u = v[0], &delta = v[1], &A = v[2], &Bt = v[3], &Ct = v[4], &D = v[5], &z = v[6], &bias = v[7];
        scan::Args<S> a;
        a.u = view3<S>(u);
        a.delta = view3<S>(delta);
        if (z.numel() > 0) a.z = view3<S>(z);
        a.A = A.data_ptr<S>();
        a.Asd = A.stride(0);
        a.Asn = A.stride(1);
        a.B = Bt.data_ptr<S>();
        a.C = Ct.data_ptr<S>();
        a.D = D.data_ptr<S>();
        a.bias = bias.numel() > 0 ? bias.data_ptr<S>() : nullptr;
        a.softplus = softplus;
        a.Bn = u.size(0);
        a.Dn = u.size(1);
        a.T = u.size(2);
        a.N = A.size(1);
        return a;
    }

    // The CUDA kernel's per-thread code on the host: batch rows in parallel (dB and dC are
    // sums over channels), channels in turn.
    template <class S> static void runChannelForward(scan::Args<S>& a)
    {
        at::parallel_for(0, a.Bn * a.Dn, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) scan::forwardChannel<S, kMaxState>(a, i / a.Dn, i % a.Dn);
        });
    }
    template <class S> static void runChannelBackward(scan::Args<S>& a, S* ckpt)
    {
        at::parallel_for(0, a.Bn, 1, [&](int64_t begin, int64_t end) {
            for (int64_t b = begin; b < end; ++b)
                for (int64_t d = 0; d < a.Dn; ++d) scan::backwardChannel<S, kMaxState>(a, b, d, ckpt);
        });
    }

    // The vector kernels over (batch row, channel group) items, forward and backward alike.
    template <class S> static void runVector(scan::Args<S>& a, bool backward)
    {
        using Kernel = void (*)(const scan::Args<S>&, scan::Items&);
        Kernel k = backward ? static_cast<Kernel>(scan::backwardGeneric) : static_cast<Kernel>(scan::forwardGeneric);
        if constexpr (std::is_same_v<S, float>) {
            const int level = kernelLevel();
            if (level == 1) k = backward ? scan::backwardAvx512 : scan::forwardAvx512;
            if (level == 2) k = backward ? scan::backwardAvx2 : scan::forwardAvx2;
        }
        scan::Items items(a.Bn * scan::groupsOf(a.Dn), 1);
        onEveryThread([&] { k(a, items); });
    }

    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor u, Tensor delta, Tensor A, Tensor B, Tensor C,
                          Tensor D, Tensor z, Tensor bias, bool softplus, int64_t path)
    {
        // B and C are small (N per step): one (B, T, N) copy each lets the kernel read a step's
        // N values together. The large (B, D, T) tensors are read in place through their strides.
        const std::vector<Tensor> v{u, delta, A, B.transpose(1, 2).contiguous(), C.transpose(1, 2).contiguous(),
                                    D.contiguous(), z, bias.contiguous()};
        ctx->save_for_backward(v);
        ctx->saved_data["softplus"] = softplus;
        ctx->saved_data["path"] = path;
        Tensor out = u.is_cuda() ? torch::empty({u.size(0), u.size(1), u.size(2)}, u.options()) : emptyLike(u);
        auto run = [&](auto tag) {
            using S = decltype(tag);
            auto a = args<S>(v, softplus);
            a.out = out3<S>(out);
            if (u.is_cuda()) {
#ifdef PARROT_HAVE_CUDA_SCAN
                if constexpr (std::is_same_v<S, float>) {
                    const std::string error = scan::cudaForward(a);
                    TORCH_CHECK(error.empty(), error);
                }
#endif
            } else if (path == int64_t(ScanPath::Channel)) {
                runChannelForward(a);
            } else {
                runVector(a, false);
            }
        };
        if (u.scalar_type() == torch::kFloat)
            run(0.0f);
        else
            run(0.0);
        return out;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads)
    {
        const std::vector<Tensor> v = ctx->get_saved_variables();
        const bool softplus = ctx->saved_data["softplus"].toBool();
        const bool channel = ctx->saved_data["path"].toInt() == int64_t(ScanPath::Channel) || v[0].is_cuda();
        const Tensor& u = v[0];
        const bool gate = v[6].numel() > 0, hasBias = v[7].numel() > 0;
        const int64_t Bn = u.size(0), Dn = u.size(1), T = u.size(2), N = v[2].size(1), G = scan::groupsOf(Dn);
        const auto o = u.options();
        Tensor dout = grads[0];
        // Each gradient laid out as its input is (on the GPU: contiguous).
        auto like = [&](const Tensor& t) { return u.is_cuda() ? torch::empty({Bn, Dn, T}, o) : emptyLike(t); };
        Tensor du = like(u), ddelta = like(v[1]);
        Tensor dz = gate ? like(v[6]) : Tensor();
        // The channel code accumulates dB and dC across channels, so they start at zero.
        auto make = [&](std::vector<int64_t> shape) { return channel ? torch::zeros(shape, o) : torch::empty(shape, o); };
        Tensor dA = torch::empty({Bn, N, Dn}, o), dB = make({Bn, G, T, N}), dC = make({Bn, G, T, N});
        Tensor dD = torch::empty({Bn, Dn}, o), dbias = hasBias ? torch::empty({Bn, Dn}, o) : Tensor();
        auto fill = [&](auto& a, auto tag) {
            using S = decltype(tag);
            a.dout = view3<S>(dout);
            a.du = out3<S>(du);
            a.ddelta = out3<S>(ddelta);
            if (gate) a.dz = out3<S>(dz);
            a.dA = dA.data_ptr<S>();
            a.dB = dB.data_ptr<S>();
            a.dC = dC.data_ptr<S>();
            a.dD = dD.data_ptr<S>();
            a.dbias = hasBias ? dbias.data_ptr<S>() : nullptr;
            if (!channel) return runVector(a, true);
            Tensor ckpt = torch::empty({Bn, Dn, (T + scan::kChunk - 1) / scan::kChunk, N}, o);
            if (v[0].is_cuda()) {
#ifdef PARROT_HAVE_CUDA_SCAN
                if constexpr (std::is_same_v<S, float>) {
                    const std::string error = scan::cudaBackward(a, ckpt.data_ptr<float>());
                    TORCH_CHECK(error.empty(), error);
                }
#endif
            } else {
                runChannelBackward(a, ckpt.data_ptr<S>());
            }
        };
        Tensor dBsum, dCsum;
        if (u.scalar_type() == torch::kFloat) {
            auto a = args<float>(v, softplus);
            fill(a, 0.0f);
        } else {
            auto a = args<double>(v, softplus);
            fill(a, 0.0);
        }
        if (u.is_cuda()) {
            dBsum = dB.sum(1);
            dCsum = dC.sum(1);
        } else if (u.scalar_type() == torch::kFloat) {
            dBsum = sumGroups<float>(dB);
            dCsum = sumGroups<float>(dC);
        } else {
            dBsum = sumGroups<double>(dB);
            dCsum = sumGroups<double>(dC);
        }
        return {du, ddelta, dA.sum(0).t(), dBsum.transpose(1, 2), dCsum.transpose(1, 2), dD.sum(0),
                gate ? dz : Tensor(), hasBias ? dbias.sum(0) : Tensor(), Tensor(), Tensor()};
    }
};

// The convolution and SiLU as one autograd node (an absent bias comes in as an empty tensor).
struct ConvFunction : public torch::autograd::Function<ConvFunction> {
    template <class S> static scan::ConvArgs<S> args(const Tensor& x, const Tensor& wT, const Tensor& bias)
    {
        scan::ConvArgs<S> a;
        a.x = x.data_ptr<S>();
        a.xsb = x.stride(0);
        a.xst = x.stride(1);
        a.w = wT.data_ptr<S>();
        a.bias = bias.numel() > 0 ? bias.data_ptr<S>() : nullptr;
        a.Bn = x.size(0);
        a.T = x.size(1);
        a.Dn = x.size(2);
        a.K = wT.size(0);
        return a;
    }
    template <class S> static void run(const scan::ConvArgs<S>& a, bool backward)
    {
        using Kernel = void (*)(const scan::ConvArgs<S>&, scan::Items&);
        Kernel k = backward ? static_cast<Kernel>(scan::convBackwardGeneric) : static_cast<Kernel>(scan::convForwardGeneric);
        if constexpr (std::is_same_v<S, float>) {
            const int level = kernelLevel();
            if (level == 1) k = backward ? scan::convBackwardAvx512 : scan::convForwardAvx512;
            if (level == 2) k = backward ? scan::convBackwardAvx2 : scan::convForwardAvx2;
        }
        // Forward: rows of (b, t), 16 at a time; backward: batch rows (each owns its dw slice).
        scan::Items items(backward ? a.Bn : a.Bn * a.T, backward ? 1 : 16);
        onEveryThread([&] { k(a, items); });
    }

    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, Tensor weight, Tensor bias)
    {
        const Tensor xc = x.stride(2) == 1 ? x : x.contiguous();
        const int64_t D = x.size(2), K = weight.size(2);
        const Tensor wT = weight.reshape({D, K}).t().contiguous();  // (K, D): a tap's channels adjacent
        const Tensor b = bias.contiguous();
        ctx->save_for_backward({xc, wT, b});
        Tensor out = torch::empty({x.size(0), x.size(1), D}, x.options());
        if (x.scalar_type() == torch::kFloat) {
            auto a = args<float>(xc, wT, b);
            a.out = out.data_ptr<float>();
            run(a, false);
        } else {
            auto a = args<double>(xc, wT, b);
            a.out = out.data_ptr<double>();
            run(a, false);
        }
        return out;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads)
    {
        const auto v = ctx->get_saved_variables();
        const Tensor &x = v[0], &wT = v[1], &bias = v[2];
        const Tensor g = grads[0].stride(2) == 1 ? grads[0] : grads[0].contiguous();
        const int64_t B = x.size(0), T = x.size(1), D = x.size(2), K = wT.size(0);
        const bool hasBias = bias.numel() > 0;
        Tensor dx = torch::empty({B, T, D}, x.options()), dw = torch::empty({B, K, D}, x.options());
        Tensor db = hasBias ? torch::empty({B, D}, x.options()) : Tensor();
        auto fill = [&](auto tag) {
            using S = decltype(tag);
            auto a = args<S>(x, wT, bias);
            a.g = g.data_ptr<S>();
            a.gsb = g.stride(0);
            a.gst = g.stride(1);
            a.dx = dx.data_ptr<S>();
            a.dw = dw.data_ptr<S>();
            a.dbias = hasBias ? db.data_ptr<S>() : nullptr;
            run(a, true);
        };
        if (x.scalar_type() == torch::kFloat)
            fill(0.0f);
        else
            fill(0.0);
        return {dx, dw.sum(0).t().reshape({D, 1, K}), hasBias ? db.sum(0) : Tensor()};
    }
};

// The RMS norm as one autograd node; dw summed over the row blocks in order.
struct NormFunction : public torch::autograd::Function<NormFunction> {
    template <class S> static void run(const scan::NormArgs<S>& a, bool backward)
    {
        using Kernel = void (*)(const scan::NormArgs<S>&, scan::Items&);
        Kernel k = backward ? static_cast<Kernel>(scan::normBackwardGeneric) : static_cast<Kernel>(scan::normForwardGeneric);
        if constexpr (std::is_same_v<S, float>) {
            const int level = kernelLevel();
            if (level == 1) k = backward ? scan::normBackwardAvx512 : scan::normForwardAvx512;
            if (level == 2) k = backward ? scan::normBackwardAvx2 : scan::normForwardAvx2;
        }
        scan::Items items((a.rows + scan::kNormRows - 1) / scan::kNormRows, 1);
        onEveryThread([&] { k(a, items); });
    }
    template <class S> static scan::NormArgs<S> args(const Tensor& x, const Tensor& w, double eps)
    {
        scan::NormArgs<S> a;
        a.x = x.data_ptr<S>();
        a.w = w.data_ptr<S>();
        a.C = x.size(-1);
        a.rows = a.C ? x.numel() / a.C : 0;
        a.eps = eps;
        return a;
    }

    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, Tensor weight, double eps)
    {
        const Tensor xc = x.contiguous(), w = weight.contiguous();
        Tensor out = torch::empty_like(xc), r = torch::empty({xc.numel() / std::max<int64_t>(1, xc.size(-1))}, xc.options());
        auto go = [&](auto tag) {
            using S = decltype(tag);
            auto a = args<S>(xc, w, eps);
            a.out = out.data_ptr<S>();
            a.r = r.data_ptr<S>();
            run(a, false);
        };
        if (xc.scalar_type() == torch::kFloat)
            go(0.0f);
        else
            go(0.0);
        ctx->save_for_backward({xc, w, r});
        ctx->saved_data["eps"] = eps;
        return out;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads)
    {
        const auto v = ctx->get_saved_variables();
        const Tensor &x = v[0], &w = v[1], &r = v[2];
        const Tensor g = grads[0].contiguous();
        const int64_t C = x.size(-1), rows = x.numel() / std::max<int64_t>(1, C);
        Tensor dx = torch::empty_like(x), dw = torch::empty({(rows + scan::kNormRows - 1) / scan::kNormRows, C}, x.options());
        auto go = [&](auto tag) {
            using S = decltype(tag);
            auto a = args<S>(x, w, ctx->saved_data["eps"].toDouble());
            a.r = r.data_ptr<S>();
            a.g = g.data_ptr<S>();
            a.dx = dx.data_ptr<S>();
            a.dw = dw.data_ptr<S>();
            run(a, true);
        };
        if (x.scalar_type() == torch::kFloat)
            go(0.0f);
        else
            go(0.0);
        return {dx, dw.sum(0), Tensor()};
    }
};

// Two row blocks of one linear layer as one node (splitLinear in the header).
struct SplitLinearFunction : public torch::autograd::Function<SplitLinearFunction> {
    static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, Tensor x, Tensor weight, int64_t first)
    {
        ctx->save_for_backward({x, weight});
        ctx->saved_data["first"] = first;
        const int64_t C = weight.size(1), O = weight.size(0);
        const Tensor x2 = x.reshape({-1, C});
        auto shape = x.sizes().vec();
        shape.back() = first;
        Tensor a = x2.mm(weight.narrow(0, 0, first).t()).view(shape);
        shape.back() = O - first;
        Tensor b = x2.mm(weight.narrow(0, first, O - first).t()).view(shape);
        return {a, b};
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads)
    {
        const auto v = ctx->get_saved_variables();
        const Tensor &x = v[0], &weight = v[1];
        const int64_t first = ctx->saved_data["first"].toInt(), C = weight.size(1), O = weight.size(0);
        const Tensor x2 = x.reshape({-1, C});
        Tensor dW = torch::empty_like(weight), dx;
        const int64_t offsets[2] = {0, first}, counts[2] = {first, O - first};
        for (int i = 0; i < 2; ++i) {
            Tensor rows = dW.narrow(0, offsets[i], counts[i]);  // a contiguous block of dW's rows
            if (!grads[size_t(i)].defined()) {  // that output was not used
                rows.zero_();
                continue;
            }
            const Tensor g = grads[size_t(i)].reshape({-1, counts[i]});
            at::mm_out(rows, g.t(), x2);
            const Tensor w = weight.narrow(0, offsets[i], counts[i]);
            if (dx.defined()) dx.addmm_(g, w);
            else dx = g.mm(w);
        }
        if (!dx.defined()) dx = torch::zeros_like(x2);
        return {dx.view(x.sizes()), dW, Tensor()};
    }
};

}  // namespace

std::vector<Tensor> splitLinearReference(const Tensor& x, const Tensor& weight, int64_t first)
{
    const int64_t O = weight.size(0);
    return {F::linear(x, weight.narrow(0, 0, first)), F::linear(x, weight.narrow(0, first, O - first))};
}

std::vector<Tensor> splitLinear(const Tensor& x, const Tensor& weight, int64_t first)
{
    TORCH_CHECK(weight.dim() == 2 && x.size(-1) == weight.size(1) && first > 0 && first < weight.size(0),
                "splitLinear: expected x (..., C), weight (O, C) and 0 < first < O");
    return SplitLinearFunction::apply(x, weight, first);
}

std::vector<std::string> scanKernels()
{
    std::vector<std::string> names;
    if (scan::haveAvx512()) names.push_back("avx512");
    if (scan::haveAvx2()) names.push_back("avx2");
    names.push_back("baseline");
    return names;
}

void useScanKernel(const std::string& name)
{
    const auto have = scanKernels();
    TORCH_CHECK(name.empty() || std::find(have.begin(), have.end(), name) != have.end(), "useScanKernel: this CPU has no '",
                name, "' build of the scan");
    g_kernel = name.empty() ? 0 : name == "avx512" ? 1 : name == "avx2" ? 2 : 3;
}

Tensor causalConvSiluReference(const Tensor& x, const Tensor& weight, const Tensor& bias)
{
    const int64_t T = x.size(1), D = x.size(2), K = weight.size(2);
    auto opts = F::Conv1dFuncOptions().padding(K - 1).groups(D);
    if (bias.defined()) opts.bias(bias);
    const Tensor pre = F::conv1d(x.transpose(1, 2), weight, opts);
    return F::silu(pre.narrow(2, 0, T)).transpose(1, 2);  // causal: the right padding's outputs dropped
}

Tensor causalConvSilu(const Tensor& x, const Tensor& weight, const Tensor& bias)
{
    TORCH_CHECK(x.dim() == 3 && weight.dim() == 3 && weight.size(0) == x.size(2) && weight.size(1) == 1,
                "causalConvSilu: expected x (B, T, D) and a depthwise weight (D, 1, K)");
    const auto type = x.scalar_type();
    if (!x.device().is_cpu() || (type != torch::kFloat && type != torch::kDouble) || x.size(1) == 0)
        return causalConvSiluReference(x, weight, bias);
    return ConvFunction::apply(x, weight, bias.defined() ? bias : torch::empty({0}, x.options()));
}

Tensor rmsNormReference(const Tensor& x, const Tensor& weight, double eps)
{
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + eps) * weight;
}

Tensor rmsNorm(const Tensor& x, const Tensor& weight, double eps)
{
    const auto type = x.scalar_type();
    if (!x.device().is_cpu() || (type != torch::kFloat && type != torch::kDouble) || x.numel() == 0 || weight.scalar_type() != type)
        return rmsNormReference(x, weight, eps);
    return NormFunction::apply(x, weight, eps);
}

bool cudaScanBuilt()
{
#ifdef PARROT_HAVE_CUDA_SCAN
    return true;
#else
    return false;
#endif
}

Tensor selectiveScanFused(const ScanInputs& in, ScanPath path)
{
    TORCH_CHECK(in.u.device().is_cpu() || (in.u.is_cuda() && cudaScanBuilt()),
                "selectiveScanFused: this build has no CUDA scan kernel (nvcc was not found)");
    TORCH_CHECK(in.u.dim() == 3 && in.A.dim() == 2 && in.B.dim() == 3 && in.C.dim() == 3,
                "selectiveScanFused: expected u (B, D, T), A (D, N), B and C (B, N, T)");
    TORCH_CHECK(in.A.size(1) <= kMaxState, "selective scan: d_state ", in.A.size(1), " exceeds ", kMaxState);
    const auto type = in.u.scalar_type();
    TORCH_CHECK(type == torch::kFloat || (type == torch::kDouble && in.u.device().is_cpu()),
                "selectiveScanFused: float32 (or float64 on the CPU) expected");
    const Tensor none = torch::empty({0}, in.u.options());
    return ScanFunction::apply(in.u, in.delta, in.A, in.B, in.C, in.D, in.z.defined() ? in.z : none,
                               in.deltaBias.defined() ? in.deltaBias : none, in.deltaSoftplus, int64_t(path));
}

Tensor selectiveScan(const ScanInputs& in)
{
    if (in.u.scalar_type() != in.A.scalar_type() || in.delta.scalar_type() != in.A.scalar_type()
        || in.B.scalar_type() != in.A.scalar_type() || in.C.scalar_type() != in.A.scalar_type()) {
        // bf16 autocast hands the scan bfloat16 projections: it runs, and keeps its state, in
        // the parameters' float32 (a long scan's sums would lose too much in bfloat16)
        ScanInputs f = in;
        for (Tensor* t : {&f.u, &f.delta, &f.B, &f.C, &f.D, &f.z, &f.deltaBias})
            if (t->defined()) *t = t->to(in.A.scalar_type());
        return selectiveScan(f);
    }
    const auto type = in.u.scalar_type();
    if (in.A.size(1) > kMaxState) return selectiveScanReference(in);
    if (in.u.device().is_cpu() && (type == torch::kFloat || type == torch::kDouble)) return selectiveScanFused(in);
    if (in.u.is_cuda() && type == torch::kFloat && cudaScanBuilt()) return selectiveScanFused(in);
    return selectiveScanReference(in);
}

}  // namespace parrot
