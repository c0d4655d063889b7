// The fused selective scan's float32 inner loops, torch-free so they can be compiled twice:
// once for the baseline x86-64 and once with AVX2 + FMA, chosen at run time. Channels are
// processed eight at a time (one AVX register); the state of those eight channels stays in
// a small array. Layouts (all contiguous, D padded to a multiple of 8):
//   u, dt, y, du, ddt: (B, T, D)   A, dA: (N, D)   B, C, dB, dC: (B, T, N)   D, dD: (D)
// dt is the step size after softplus; the gate and the delta bias are applied by the caller.
#pragma once

#include <cstdint>

namespace parrot::scan {

struct Forward {
    const float *u, *dt, *A, *B, *C, *D;
    float* y;
    int64_t Bn, T, Dn, N;
};

struct Backward {
    const float *u, *dt, *A, *B, *C, *D, *dy;
    float *du, *ddt, *dA, *dB, *dC, *dD;  // dA: (B, N, D) and dD: (B, D), one slice per batch row
    int64_t Bn, T, Dn, N;
};

constexpr int64_t kLanes = 8;

// Forward for the channel blocks [block0, block1) of batch row b (block = 8 channels).
void forwardGeneric(const Forward& f, int64_t b, int64_t block0, int64_t block1);
void forwardAvx2(const Forward& f, int64_t b, int64_t block0, int64_t block1);
// Backward for the batch rows [b0, b1): each row's dB, dC, dA and dD slices are its own.
void backwardGeneric(const Backward& g, int64_t b0, int64_t b1);
void backwardAvx2(const Backward& g, int64_t b0, int64_t b1);

bool haveAvx2();

}  // namespace parrot::scan
