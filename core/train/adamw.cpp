#include "core/train/adamw.h"

#include "core/train/adamwkernel.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace parrot {

namespace {
constexpr int64_t kGrain = 16384;  // elements per parallel chunk: small tensors stay on one thread
}

FusedAdamW::FusedAdamW(std::vector<Group> groups, double beta1, double beta2, double eps)
    : m_beta1(beta1), m_beta2(beta2), m_eps(eps)
{
    for (auto& g : groups)
        for (auto& p : g.params) {
            TORCH_CHECK(p.is_contiguous() && p.scalar_type() == torch::kFloat && p.device().is_cpu(),
                        "FusedAdamW: contiguous float32 CPU parameters expected");
            m_slots.push_back({p, torch::zeros_like(p), torch::zeros_like(p), g.weightDecay});
        }
}

std::pair<torch::Tensor, torch::Tensor> FusedAdamW::moments(const torch::Tensor& param) const
{
    for (const Slot& s : m_slots)
        if (s.param.unsafeGetTensorImpl() == param.unsafeGetTensorImpl()) return {s.expAvg, s.expAvgSq};
    return {};
}

double FusedAdamW::step(double lr, double clip)
{
    torch::NoGradGuard noGrad;
    // clip_grad_norm_: total = ||(||g_1||, ..., ||g_n||)||, every gradient times min(1, clip / (total + 1e-6)).
    double squares = 0;
    for (const auto& s : m_slots) {
        const auto& g = s.param.grad();
        if (g.defined()) squares += adamw::sumOfSquares(g.contiguous().data_ptr<float>(), g.numel());
    }
    const double norm = std::sqrt(squares);
    const double scale = clip > 0 ? std::min(1.0, clip / (norm + 1e-6)) : 1.0;
    ++m_step;
    const double bc1 = 1 - std::pow(m_beta1, double(m_step)), bc2 = 1 - std::pow(m_beta2, double(m_step));
    for (auto& s : m_slots) {
        torch::Tensor g = s.param.grad();
        if (!g.defined()) continue;  // torch's AdamW skips parameters without a gradient too
        g = g.contiguous();
        const adamw::StepArgs a{float(scale), float(1 - lr * s.weightDecay), float(m_beta1), float(m_beta2),
                                float(1 / std::sqrt(bc2)), float(m_eps), float(lr / bc1)};
        float *p = s.param.data_ptr<float>(), *m = s.expAvg.data_ptr<float>(), *v = s.expAvgSq.data_ptr<float>();
        const float* gp = g.data_ptr<float>();
        at::parallel_for(0, s.param.numel(), kGrain, [&](int64_t begin, int64_t end) {
            adamw::step(a, p + begin, m + begin, v + begin, gp + begin, end - begin);
        });
        s.param.mutable_grad().reset();
    }
    return norm;
}

}  // namespace parrot
