#include "selectivescan.h"

#include "scanchannel.h"
#include "scankernel.h"
#ifdef PARROT_HAVE_CUDA_SCAN
#include "scancuda.h"
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
        using Kernel = void (*)(const scan::Args<S>&, int64_t, int64_t);
        Kernel k = backward ? static_cast<Kernel>(scan::backwardGeneric) : static_cast<Kernel>(scan::forwardGeneric);
        if constexpr (std::is_same_v<S, float>) {
            const int level = kernelLevel();
            if (level == 1) k = backward ? scan::backwardAvx512 : scan::forwardAvx512;
            if (level == 2) k = backward ? scan::backwardAvx2 : scan::forwardAvx2;
        }
        at::parallel_for(0, a.Bn * scan::groupsOf(a.Dn), 1, [&](int64_t begin, int64_t end) { k(a, begin, end); });
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

}  // namespace

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
    const auto type = in.u.scalar_type();
    if (in.A.size(1) > kMaxState) return selectiveScanReference(in);
    if (in.u.device().is_cpu() && (type == torch::kFloat || type == torch::kDouble)) return selectiveScanFused(in);
    if (in.u.is_cuda() && type == torch::kFloat && cudaScanBuilt()) return selectiveScanFused(in);
    return selectiveScanReference(in);
}

}  // namespace parrot
