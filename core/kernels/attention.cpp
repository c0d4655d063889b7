#include "core/kernels/attention.h"

#include "core/kernels/attnkernel.h"
#include "core/kernels/fastpaths.h"
#include "core/torchcompat.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace parrot {

namespace {

std::atomic<bool>& fastPathFlag()
{
    static std::atomic<bool> on{[] {
        const char* v = std::getenv("PARROT_REFERENCE_PATHS");
        return !(v && std::strcmp(v, "1") == 0);
    }()};
    return on;
}

using torch::Tensor;

template <class S> attn::Args<S> argsOf(const Tensor& qkv, const Tensor& window, const Tensor& slopes, double scale)
{
    attn::Args<S> a;
    a.qkv = qkv.data_ptr<S>();
    a.Bn = qkv.size(0);
    a.T = qkv.size(1);
    a.H = window.size(0);
    a.D = qkv.size(2) / 3 / a.H;
    a.window = window.data_ptr<int64_t>();
    a.slope = slopes.numel() > 0 ? slopes.data_ptr<S>() : nullptr;
    a.scale = S(scale);
    return a;
}

// (batch row, head) items in parallel; each writes only its own rows and columns.
template <class S, class F> void forItems(const attn::Args<S>& a, F kernel)
{
    at::parallel_for(0, a.Bn * a.H, 1, [&](int64_t begin, int64_t end) { kernel(a, begin, end); });
}

struct AttentionFunction : public torch::autograd::Function<AttentionFunction> {
    static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor qkv, Tensor window, Tensor slopes, double scale)
    {
        const bool keep = qkv.requires_grad();
        qkv = qkv.contiguous();
        const int64_t B = qkv.size(0), T = qkv.size(1), H = window.size(0), C = qkv.size(2) / 3;
        Tensor y = torch::empty({B, T, C}, qkv.options());
        Tensor probs = keep ? torch::empty({B, H, T, T}, qkv.options()) : Tensor();
        auto run = [&](auto tag) {
            using S = decltype(tag);
            auto a = argsOf<S>(qkv, window, slopes, scale);
            a.y = y.data_ptr<S>();
            a.probs = keep ? probs.data_ptr<S>() : nullptr;
            if constexpr (std::is_same_v<S, float>)
                forItems(a, attn::haveAvx2() ? attn::forwardAvx2 : static_cast<void (*)(const attn::Args<float>&, int64_t, int64_t)>(attn::forwardGeneric));
            else
                forItems(a, static_cast<void (*)(const attn::Args<double>&, int64_t, int64_t)>(attn::forwardGeneric));
        };
        if (qkv.scalar_type() == torch::kFloat) run(0.0f);
        else run(0.0);
        if (keep) {
            ctx->save_for_backward({qkv, window, slopes, probs});
            ctx->saved_data["scale"] = scale;
        }
        return y;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::tensor_list grads)
    {
        const auto v = ctx->get_saved_variables();
        const Tensor &qkv = v[0], &window = v[1], &slopes = v[2], &probs = v[3];
        const Tensor dy = grads[0].contiguous();
        Tensor dqkv = torch::empty_like(qkv);
        auto run = [&](auto tag) {
            using S = decltype(tag);
            auto a = argsOf<S>(qkv, window, slopes, ctx->saved_data["scale"].toDouble());
            a.probs = probs.data_ptr<S>();
            a.dy = dy.data_ptr<S>();
            a.dqkv = dqkv.data_ptr<S>();
            if constexpr (std::is_same_v<S, float>)
                forItems(a, attn::haveAvx2() ? attn::backwardAvx2 : static_cast<void (*)(const attn::Args<float>&, int64_t, int64_t)>(attn::backwardGeneric));
            else
                forItems(a, static_cast<void (*)(const attn::Args<double>&, int64_t, int64_t)>(attn::backwardGeneric));
        };
        if (qkv.scalar_type() == torch::kFloat) run(0.0f);
        else run(0.0);
        return {dqkv, Tensor(), Tensor(), Tensor()};
    }
};

}  // namespace

bool fastPaths() { return fastPathFlag().load() && !compat::autocastEnabled(); }
void setFastPaths(bool on) { fastPathFlag() = on; }

bool attentionFusedApplies(const torch::Tensor& qkv)
{
    return qkv.device().is_cpu() && (qkv.scalar_type() == torch::kFloat || qkv.scalar_type() == torch::kDouble);
}

Tensor attentionFused(const Tensor& qkv, const AttentionPattern& p)
{
    TORCH_CHECK(attentionFusedApplies(qkv), "attentionFused: float32 or float64 CPU tensors expected");
    TORCH_CHECK(qkv.dim() == 3 && qkv.size(2) % (3 * p.heads) == 0, "attentionFused: expected qkv (B, T, 3C) with C a multiple of ",
                p.heads, " heads, got ", qkv.sizes());
    TORCH_CHECK(int64_t(p.window.size()) == p.heads && (p.slopes.empty() || int64_t(p.slopes.size()) == p.heads),
                "attentionFused: one window (and slope) per head expected");
    const Tensor window = torch::tensor(p.window, torch::kLong);
    const Tensor slopes = p.slopes.empty() ? torch::empty({0}, qkv.options())
                                           : torch::tensor(p.slopes, torch::kDouble).to(qkv.scalar_type());
    return AttentionFunction::apply(qkv, window, slopes, p.scale);
}

}  // namespace parrot
