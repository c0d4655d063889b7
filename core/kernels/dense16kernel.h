// A few float32 rows times a weight matrix held in 16 bits (IEEE half or bfloat16), the
// weights widened to float32 as they are read: y[r][o] = sum_i x[r][i] * W[o][i] (+ b[o]).
// Generating one token at a time is this product, and its time is reading W: half the bytes
// read, about half the time. Torch-free; one copy is built for AVX2 + FMA + F16C and picked at
// run time (dense16Fast), the other is the baseline x86-64 build.
#pragma once

#include <cstdint>

namespace parrot::dense16 {

struct Args {
    const float* x = nullptr;  // (rows, in), row stride ldx
    int64_t rows = 0, in = 0, ldx = 0;
    const uint16_t* w = nullptr;  // (out, in), row stride ldw
    const float* w32 = nullptr;   // or float32 weights (generating with a float32 model), row stride ldw
    int64_t ldw = 0;
    bool bf16 = false;            // bfloat16, else IEEE half
    const float* bias = nullptr;  // (out) or nullptr
    float* y = nullptr;           // (rows, out), row stride ldy
    int64_t ldy = 0;
};

// Outputs [o0, o1).
void gemvGeneric(const Args& a, int64_t o0, int64_t o1);
void gemvAvx2(const Args& a, int64_t o0, int64_t o1);

// Rows [r0, r1) of a (rows, cols) 16-bit matrix, row stride ldw, widened into dst (row stride cols).
void widenGeneric(const uint16_t* w, int64_t ldw, int64_t cols, bool bf16, float* dst, int64_t r0, int64_t r1);
void widenAvx2(const uint16_t* w, int64_t ldw, int64_t cols, bool bf16, float* dst, int64_t r0, int64_t r1);

// Whether this CPU has what gemvAvx2 and widenAvx2 need.
bool haveAvx2F16c();

}  // namespace parrot::dense16
