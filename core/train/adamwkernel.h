// FusedAdamW's inner loops on raw float32 arrays, torch-free so that they can be compiled with
// -fno-math-errno (which lets GCC vectorise the square root).
#pragma once

#include <cstdint>

namespace parrot::adamw {

double sumOfSquares(const float* g, int64_t n);

struct StepArgs {
    float gradScale;     // the clipping factor (1: none)
    float decay;         // 1 - lr * weight_decay
    float beta1, beta2;
    float invSqrtBc2;    // 1 / sqrt(1 - beta2^t)
    float eps;
    float stepSize;      // lr / (1 - beta1^t)
};

// p, m, v updated in place from g for elements [0, n).
void step(const StepArgs& a, float* p, float* m, float* v, const float* g, int64_t n);

}  // namespace parrot::adamw
