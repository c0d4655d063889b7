#include "core/train/adamwkernel.h"

#include <cmath>

namespace parrot::adamw {

double sumOfSquares(const float* g, int64_t n)
{
    // Eight float partial sums, added in double at the end: vectorisable and deterministic.
    float part[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) part[l] += g[i + l] * g[i + l];
    double s = 0;
    for (; i < n; ++i) s += double(g[i]) * g[i];
    for (float p : part) s += p;
    return s;
}

void step(const StepArgs& a, float* __restrict p, float* __restrict m, float* __restrict v, const float* __restrict g, int64_t n)
{
    // As torch::optim::AdamW: p *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    // p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
    for (int64_t i = 0; i < n; ++i) {
        const float gi = g[i] * a.gradScale;
        const float mi = m[i] * a.beta1 + (1.0f - a.beta1) * gi;
        const float vi = v[i] * a.beta2 + (1.0f - a.beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * a.decay - a.stepSize * mi / (std::sqrt(vi) * a.invSqrtBc2 + a.eps);
    }
}

}  // namespace parrot::adamw
