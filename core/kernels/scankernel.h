// The Mamba block's fused kernels, torch-free so they can be compiled more than once: for the
// baseline x86-64, with AVX2 + FMA, and (that file again) for AVX-512, chosen at run time.
//  - The selective scan: everything between the mixer's projections in one pass, delta bias and
//    softplus, the scan, the D skip and the SiLU gate (and, backwards, all their derivatives).
//  - The depthwise causal convolution and SiLU before it (ConvArgs), and the RMS norm (NormArgs).
//
// Channels are processed a block of `lanes` at a time (one vector register: 16 floats with
// AVX-512, 8 with AVX2 and the baseline build, 4 doubles). The scan's (B, D, T) inputs and
// outputs may have any strides: where channels are adjacent in memory (Mamba's u, delta and z
// are transposes of (B, T, D) projections) a block's step is one vector load or store, where
// time is, L x L tiles are transposed in registers, elsewhere single values are gathered; no
// channel padding is needed.
//
// Work is split into items of one batch row and one group of kGroup channels, forward and
// backward alike; each item is computed whole by one thread and writes only its own outputs,
// so results do not depend on the number of threads. Threads take items from a shared counter
// as they finish the last (Items), so one that loses its core to another process does fewer.
#pragma once

#include <algorithm>
#include <atomic>
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

// Items [0, count) handed out `step` at a time to whichever thread asks next.
struct Items {
    Items(int64_t count, int64_t step) : count(count), step(step) {}
    bool take(int64_t& begin, int64_t& end)
    {
        begin = next.fetch_add(step, std::memory_order_relaxed);
        end = std::min(begin + step, count);
        return begin < count;
    }
    std::atomic<int64_t> next{0};
    const int64_t count, step;
};

// Channels per work item; dB and dC (sums over channels) get one partial slice per group.
// 128: each step of an item reads and writes 512 contiguous bytes of the channel-adjacent
// (B, T, D) tensors, which the backward (seven of them) did about 7% faster than with 64.
constexpr int64_t kGroup = 128;
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

// Mamba's depthwise causal convolution of width K and its SiLU, channels adjacent in memory:
//   out[b, t, d] = silu(bias[d] + sum_k w[k, d] x[b, t - K + 1 + k, d])   (x = 0 before t = 0)
template <class S> struct ConvArgs {
    const S* x = nullptr;      // (B, T, D): element (b, t, d) at x[b * xsb + t * xst + d]
    int64_t xsb = 0, xst = 0;
    const S* w = nullptr;      // (K, D), contiguous
    const S* bias = nullptr;   // (D), or nullptr
    int64_t Bn = 0, T = 0, Dn = 0, K = 0;
    S* out = nullptr;          // forward: (B, T, D), contiguous
    const S* g = nullptr;      // backward: the incoming gradient, (B, T, D) at g[b * gsb + t * gst + d]
    int64_t gsb = 0, gst = 0;
    S* dx = nullptr;           // (B, T, D), contiguous
    S* dw = nullptr;           // (B, K, D): one slice per batch row, summed by the caller
    S* dbias = nullptr;        // (B, D): per batch row, or nullptr
};
// Forward items: rows of B * T (row = b * T + t); backward items: batch rows.
void convForwardGeneric(const ConvArgs<float>& a, Items& items);
void convForwardAvx2(const ConvArgs<float>& a, Items& items);
void convForwardAvx512(const ConvArgs<float>& a, Items& items);
void convForwardGeneric(const ConvArgs<double>& a, Items& items);
void convBackwardGeneric(const ConvArgs<float>& a, Items& items);
void convBackwardAvx2(const ConvArgs<float>& a, Items& items);
void convBackwardAvx512(const ConvArgs<float>& a, Items& items);
void convBackwardGeneric(const ConvArgs<double>& a, Items& items);

// RMS norm over the last dimension of contiguous (rows, C):
//   out = x r w,   r = 1 / sqrt(mean(x^2) + eps),   one r per row kept for the backward.
template <class S> struct NormArgs {
    const S* x = nullptr;   // (rows, C)
    const S* w = nullptr;   // (C)
    int64_t rows = 0, C = 0;
    double eps = 1e-5;
    S* out = nullptr;       // forward: (rows, C)
    S* r = nullptr;         // (rows): written by the forward, read by the backward
    const S* g = nullptr;   // backward: the incoming gradient, (rows, C)
    S* dx = nullptr;        // (rows, C)
    S* dw = nullptr;        // (rows / kNormRows rounded up, C): one slice per item, summed by the caller
};
constexpr int64_t kNormRows = 64;  // rows per work item
// Items: blocks of kNormRows rows, the same for the forward and the backward.
void normForwardGeneric(const NormArgs<float>& a, Items& items);
void normForwardAvx2(const NormArgs<float>& a, Items& items);
void normForwardAvx512(const NormArgs<float>& a, Items& items);
void normForwardGeneric(const NormArgs<double>& a, Items& items);
void normBackwardGeneric(const NormArgs<float>& a, Items& items);
void normBackwardAvx2(const NormArgs<float>& a, Items& items);
void normBackwardAvx512(const NormArgs<float>& a, Items& items);
void normBackwardGeneric(const NormArgs<double>& a, Items& items);

// Items of B * groupsOf(D): item = b * groupsOf(D) + group.
void forwardGeneric(const Args<float>& a, Items& items);
void forwardAvx2(const Args<float>& a, Items& items);
void forwardAvx512(const Args<float>& a, Items& items);
void forwardGeneric(const Args<double>& a, Items& items);
void backwardGeneric(const Args<float>& a, Items& items);
void backwardAvx2(const Args<float>& a, Items& items);
void backwardAvx512(const Args<float>& a, Items& items);
void backwardGeneric(const Args<double>& a, Items& items);

bool haveAvx2();    // AVX2 and FMA
bool haveAvx512();  // AVX-512 F, DQ, BW and VL besides

}  // namespace parrot::scan
