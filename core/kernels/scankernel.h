// The fused selective scan's inner loops, torch-free so they can be compiled twice: once for
// the baseline x86-64 and once with AVX2 + FMA (and that file again for AVX-512), chosen at run
// time. Everything between the
// Mamba mixer's projections is done here in one pass: delta bias and softplus, the scan, the
// D skip and the SiLU gate (and, backwards, all of their derivatives).
//
// Channels are processed a block of `lanes` at a time (one vector register: 16 floats with
// AVX-512, 8 with AVX2 and the baseline build, 4 doubles). Inputs and outputs of shape (B, D, T) may have any strides: where channels are
// adjacent in memory (Mamba's u, delta and z are transposes of (B, T, D) projections) a block's
// step is one vector load or store, elsewhere it is gathered into or scattered from a small
// local buffer; no channel padding is needed.
//
// Work is split into items of one batch row and one group of kGroup channels, forward and
// backward alike; each item is computed whole by one thread and writes only its own outputs,
// so results do not depend on the number of threads.
#pragma once

#include <cstdint>

namespace parrot::scan {

// Element (b, d, t) of a (B, D, T) tensor at p[b * sb + d * sd + t * st].
template <class S> struct View3 {
    const S* p = nullptr;
    int64_t sb = 0, sd = 0, st = 0;
};
template <class S> struct Out3 {
    S* p = nullptr;
    int64_t sb = 0, sd = 0, st = 0;
};

// Channels per work item; dB and dC (sums over channels) get one partial slice per group.
constexpr int64_t kGroup = 64;
inline int64_t groupsOf(int64_t channels) { return (channels + kGroup - 1) / kGroup; }

template <class S> struct Args {
    View3<S> u, delta, z;        // z.p == nullptr: no gate
    const S* A = nullptr;        // (D, N): element (d, n) at A[d * Asd + n * Asn]
    int64_t Asd = 0, Asn = 0;
    const S *B = nullptr, *C = nullptr;  // (B, T, N), contiguous
    const S* D = nullptr;        // (D), contiguous
    const S* bias = nullptr;     // (D), contiguous, or nullptr
    bool softplus = true;
    int64_t Bn = 0, T = 0, Dn = 0, N = 0;

    Out3<S> out;                 // forward result (B, D, T)

    View3<S> dout;               // backward: the incoming gradient
    Out3<S> du, ddelta, dz;      // (B, D, T); dz unused without a gate
    S* dA = nullptr;             // (B, N, D): one slice per batch row, summed by the caller
    S *dB = nullptr, *dC = nullptr;  // (B, G, T, N), G = groupsOf(D): summed over G by the caller
    S *dD = nullptr, *dbias = nullptr;  // (B, D): per batch row
};

// Items [item0, item1) of B * groupsOf(D), item = b * groupsOf(D) + group.
void forwardGeneric(const Args<float>& a, int64_t item0, int64_t item1);
void forwardAvx2(const Args<float>& a, int64_t item0, int64_t item1);
void forwardAvx512(const Args<float>& a, int64_t item0, int64_t item1);
void forwardGeneric(const Args<double>& a, int64_t item0, int64_t item1);
void backwardGeneric(const Args<float>& a, int64_t item0, int64_t item1);
void backwardAvx2(const Args<float>& a, int64_t item0, int64_t item1);
void backwardAvx512(const Args<float>& a, int64_t item0, int64_t item1);
void backwardGeneric(const Args<double>& a, int64_t item0, int64_t item1);

bool haveAvx2();    // AVX2 and FMA
bool haveAvx512();  // AVX-512 F, DQ, BW and VL besides

}  // namespace parrot::scan
