// The fused selective scan's inner loops, torch-free so they can be compiled twice: once for
// the baseline x86-64 and once with AVX2 + FMA, chosen at run time. Everything between the
// Mamba mixer's projections is done here in one pass: delta bias and softplus, the scan, the
// D skip and the SiLU gate (and, backwards, all of their derivatives).
//
// Channels are processed a block of `lanes` at a time (8 floats or 4 doubles, one AVX
// register); each block's inputs are gathered from their torch strides into small local
// buffers, so u, delta, z and the output gradient may be any view (Mamba's are transposes of
// (B, T, D) projections) and no channel padding is needed.
#pragma once

#include <cstdint>

namespace parrot::scan {

// Element (b, d, t) of a (B, D, T) tensor at p[b * sb + d * sd + t * st].
template <class S> struct View3 {
    const S* p = nullptr;
    int64_t sb = 0, sd = 0, st = 0;
};

template <class S> struct Args {
    View3<S> u, delta, z;        // z.p == nullptr: no gate
    const S* A = nullptr;        // (D, N): element (d, n) at A[d * Asd + n * Asn]
    int64_t Asd = 0, Asn = 0;
    const S *B = nullptr, *C = nullptr;  // (B, T, N), contiguous
    const S* D = nullptr;        // (D), contiguous
    const S* bias = nullptr;     // (D), contiguous, or nullptr
    bool softplus = true;
    int64_t Bn = 0, T = 0, Dn = 0, N = 0;

    S* out = nullptr;            // forward result (B, D, T), contiguous

    View3<S> dout;               // backward: the incoming gradient
    S *du = nullptr, *ddelta = nullptr, *dz = nullptr;  // (B, D, T), contiguous
    S* dA = nullptr;             // (B, N, D): one slice per batch row, summed by the caller
    S *dB = nullptr, *dC = nullptr;  // (B, T, N)
    S *dD = nullptr, *dbias = nullptr;  // (B, D): per batch row
};

template <class S> constexpr int64_t kLanes = 32 / sizeof(S);

// Forward for channel blocks [block0, block1) of batch row b.
void forwardGeneric(const Args<float>& a, int64_t b, int64_t block0, int64_t block1);
void forwardAvx2(const Args<float>& a, int64_t b, int64_t block0, int64_t block1);
void forwardGeneric(const Args<double>& a, int64_t b, int64_t block0, int64_t block1);
// Backward for batch rows [b0, b1): each row writes its own dA, dB, dC, dD and dbias slices.
void backwardGeneric(const Args<float>& a, int64_t b0, int64_t b1);
void backwardAvx2(const Args<float>& a, int64_t b0, int64_t b1);
void backwardGeneric(const Args<double>& a, int64_t b0, int64_t b1);

bool haveAvx2();

}  // namespace parrot::scan
