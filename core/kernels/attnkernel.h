// The fused causal attention's inner loops, torch-free so they can be compiled twice (baseline
// x86-64 and AVX2 + FMA, chosen at run time), as the selective scan's are. One work item is one
// (batch row, head): its keys and values are gathered once into small local buffers, then every
// query row computes its scores, softmax and output without a (B, H, T, T) tensor in between.
// Legend: B batch, T time, H heads, D head size, C = H * D.
//
//   s_ij = scale * q_i . k_j - slope_h * (i - j)     for i - window_h <= j <= i (else masked)
//   p_i  = softmax_j(s_i),   y_i = sum_j p_ij v_j
#pragma once

#include <cstdint>

namespace parrot::attn {

template <class S> struct Args {
    // qkv: (B, T, 3, H, D) contiguous, the fused projection's output as it comes out of c_attn.
    const S* qkv = nullptr;
    int64_t Bn = 0, T = 0, H = 0, D = 0;
    const int64_t* window = nullptr;  // (H): head h sees keys with 0 <= i - j <= window[h]
    const S* slope = nullptr;         // (H) ALiBi slopes, or nullptr for none
    S scale = 1;

    S* y = nullptr;      // (B, T, H, D) contiguous
    S* probs = nullptr;  // (B, H, T, T): the softmax rows (only the band each row sees), kept for backward; may be nullptr

    const S* dy = nullptr;  // backward: (B, T, H, D) contiguous
    S* dqkv = nullptr;      // (B, T, 3, H, D), fully written
};

// Items [item0, item1) of B * H, item = b * H + h.
void forwardGeneric(const Args<float>& a, int64_t item0, int64_t item1);
void forwardAvx2(const Args<float>& a, int64_t item0, int64_t item1);
void forwardGeneric(const Args<double>& a, int64_t item0, int64_t item1);
// Needs the probs the forward kept.
void backwardGeneric(const Args<float>& a, int64_t item0, int64_t item1);
void backwardAvx2(const Args<float>& a, int64_t item0, int64_t item1);
void backwardGeneric(const Args<double>& a, int64_t item0, int64_t item1);

bool haveAvx2();

}  // namespace parrot::attn
