#include "core/kernels/dense16kernel.h"

#include "base/io/safetensors.h"  // halfToFloat, bfloat16ToFloat
#include "core/kernels/cpulevel.h"

namespace parrot::dense16 {

namespace {

float widen(uint16_t h, bool bf16) { return bf16 ? bfloat16ToFloat(h) : halfToFloat(h); }

}  // namespace

void gemvGeneric(const Args& a, int64_t o0, int64_t o1)
{
    for (int64_t o = o0; o < o1; ++o) {
        for (int64_t r = 0; r < a.rows; ++r) {
            const float* x = a.x + r * a.ldx;
            float s = 0;
            for (int64_t i = 0; i < a.in; ++i) s += x[i] * (a.w32 ? a.w32[o * a.ldw + i] : widen(a.w[o * a.ldw + i], a.bf16));
            a.y[r * a.ldy + o] = s + (a.bias ? a.bias[o] : 0.0f);
        }
    }
}

void widenGeneric(const uint16_t* w, int64_t ldw, int64_t cols, bool bf16, float* dst, int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = widen(w[r * ldw + c], bf16);
}

bool haveAvx2F16c()
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu::allows(cpu::Level::Avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

}  // namespace parrot::dense16
