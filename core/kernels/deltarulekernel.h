// The delta rule's fused kernels, torch-free: per head (one item = one batch row's head) a state
// S (K x V) updated token by token,
//   S <- a_t S,   w_t = v_t - S^T k_t,   S <- S + b_t k_t w_t^T,   o_t = S^T q_t,
// a_t = exp(g_t) (1 without a gate). The forward keeps S every `every` tokens; the backward runs
// each stretch again from its kept state and then back through it. One copy is built for AVX2 +
// FMA and picked at run time (cpu::haveAvx2Fma, core/kernels/cpulevel.h), the other is the
// baseline x86-64 build.
#pragma once

#include <cstdint>

namespace parrot::deltarule {

struct Args {
    const float *q = nullptr, *k = nullptr;        // (B, T, H, K)
    const float* v = nullptr;                      // (B, T, H, V)
    const float *beta = nullptr, *g = nullptr;     // (B, T, H); g null: no gate
    int64_t B = 0, T = 0, H = 0, K = 0, V = 0;
    int64_t every = 16;                            // tokens between kept states
    float* o = nullptr;                            // (B, T, H, V)
    float* kept = nullptr;                         // (B, H, stretches, K, V): S before each stretch
    const float* dO = nullptr;                     // backward: (B, T, H, V)
    float *dq = nullptr, *dk = nullptr, *dv = nullptr, *dbeta = nullptr, *dg = nullptr;
    int64_t stretches() const { return (T + every - 1) / every; }
};

// Items [i0, i1) of B * H.
void forwardGeneric(const Args& a, int64_t i0, int64_t i1);
void forwardAvx2(const Args& a, int64_t i0, int64_t i1);
void backwardGeneric(const Args& a, int64_t i0, int64_t i1);
void backwardAvx2(const Args& a, int64_t i0, int64_t i1);

}  // namespace parrot::deltarule
