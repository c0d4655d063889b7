// The selective scan of one (batch row, channel) pair, forward and backward: the per-thread
// body of the CUDA kernel (scancuda.cu launches one thread per pair). Plain C++ when no CUDA
// compiler reads it, so the host build runs exactly this code in the tests
// (tst_selectivescan: cudaChannelCodeOnTheHost) even where there is no GPU or nvcc.
//
// Backward without keeping all states: the forward pass is run again and the state saved every
// kChunk steps into `ckpt` ((B, D, ceil(T / kChunk), N)); then chunk by chunk from the end, the
// chunk's states are recomputed into a small local array and the reverse recurrence runs over it.
#pragma once

#include "core/kernels/scankernel.h"

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define PARROT_HD __host__ __device__
#define PARROT_ATOMIC_ADD(p, v) atomicAdd((p), (v))
#else
#define PARROT_HD
#define PARROT_ATOMIC_ADD(p, v) (*(p) += (v))
#endif

namespace parrot::scan {

constexpr int kChunk = 16;

template <class S> PARROT_HD inline S at3(const View3<S>& v, int64_t b, int64_t d, int64_t t)
{
    return v.p[b * v.sb + d * v.sd + t * v.st];
}
template <class S> PARROT_HD inline S& at3(const Out3<S>& v, int64_t b, int64_t d, int64_t t)
{
    return v.p[b * v.sb + d * v.sd + t * v.st];
}
PARROT_HD inline float expS(float x) { return expf(x); }
PARROT_HD inline double expS(double x) { return exp(x); }
PARROT_HD inline float log1pS(float x) { return log1pf(x); }
PARROT_HD inline double log1pS(double x) { return log1p(x); }
template <class S> PARROT_HD inline S softplusS(S x) { return (x > S(0) ? x : S(0)) + log1pS(expS(-(x > S(0) ? x : -x))); }
template <class S> PARROT_HD inline S sigmoidS(S x) { return S(1) / (S(1) + expS(-x)); }

// dt_t after the bias and (optionally) softplus, and softplus' at t (1 without softplus).
template <class S> PARROT_HD inline S stepAt(const Args<S>& a, int64_t b, int64_t d, int64_t t, S* slope)
{
    const S x = at3(a.delta, b, d, t) + (a.bias ? a.bias[d] : S(0));
    if (!a.softplus) {
        if (slope) *slope = S(1);
        return x;
    }
    if (slope) *slope = sigmoidS(x);
    return softplusS(x);
}

template <class S, int MaxN> PARROT_HD void forwardChannel(const Args<S>& a, int64_t b, int64_t d)
{
    const int64_t T = a.T, N = a.N;
    S x[MaxN], A[MaxN];
    for (int64_t n = 0; n < N; ++n) {
        x[n] = S(0);
        A[n] = a.A[d * a.Asd + n * a.Asn];
    }
    for (int64_t t = 0; t < T; ++t) {
        const S u = at3(a.u, b, d, t), dt = stepAt(a, b, d, t, static_cast<S*>(nullptr));
        const S* Bv = a.B + (b * T + t) * N;
        const S* Cv = a.C + (b * T + t) * N;
        S y = a.D[d] * u;
        for (int64_t n = 0; n < N; ++n) {
            x[n] = expS(dt * A[n]) * x[n] + dt * Bv[n] * u;
            y += Cv[n] * x[n];
        }
        if (a.z.p) {
            const S z = at3(a.z, b, d, t);
            y *= z * sigmoidS(z);
        }
        at3(a.out, b, d, t) = y;
    }
}

// dB and dC are sums over channels: atomic adds into the zeroed (B, G, T, N) slice of the
// channel's group (scankernel.h). Everything else belongs to this (b, d) alone.
template <class S, int MaxN> PARROT_HD void backwardChannel(const Args<S>& a, int64_t b, int64_t d, S* ckpt)
{
    const int64_t T = a.T, N = a.N, Dn = a.Dn, chunks = (T + kChunk - 1) / kChunk;
    S A[MaxN], x[MaxN], h[MaxN], dA[MaxN], xs[(kChunk + 1) * MaxN];
    S* myCkpt = ckpt + (b * Dn + d) * chunks * N;
    const int64_t G = (Dn + kGroup - 1) / kGroup;  // groupsOf, spelt out for the device compiler
    S* dBg = a.dB + (b * G + d / kGroup) * T * N;
    S* dCg = a.dC + (b * G + d / kGroup) * T * N;
    for (int64_t n = 0; n < N; ++n) {
        A[n] = a.A[d * a.Asd + n * a.Asn];
        x[n] = S(0);
        h[n] = S(0);
        dA[n] = S(0);
    }
    for (int64_t t = 0; t < T; ++t) {
        if (t % kChunk == 0)
            for (int64_t n = 0; n < N; ++n) myCkpt[(t / kChunk) * N + n] = x[n];
        const S u = at3(a.u, b, d, t), dt = stepAt(a, b, d, t, static_cast<S*>(nullptr));
        const S* Bv = a.B + (b * T + t) * N;
        for (int64_t n = 0; n < N; ++n) x[n] = expS(dt * A[n]) * x[n] + dt * Bv[n] * u;
    }
    const S Dd = a.D[d];
    S dD = S(0), dbias = S(0);
    for (int64_t c = chunks - 1; c >= 0; --c) {
        const int64_t t0 = c * kChunk, t1 = (t0 + kChunk < T) ? t0 + kChunk : T;
        for (int64_t n = 0; n < N; ++n) xs[n] = myCkpt[c * N + n];
        for (int64_t t = t0; t < t1; ++t) {
            const S u = at3(a.u, b, d, t), dt = stepAt(a, b, d, t, static_cast<S*>(nullptr));
            const S* Bv = a.B + (b * T + t) * N;
            const S* xp = xs + (t - t0) * N;
            S* xn = xs + (t - t0 + 1) * N;
            for (int64_t n = 0; n < N; ++n) xn[n] = expS(dt * A[n]) * xp[n] + dt * Bv[n] * u;
        }
        for (int64_t t = t1 - 1; t >= t0; --t) {
            S slope;
            const S u = at3(a.u, b, d, t), dt = stepAt(a, b, d, t, &slope);
            const S* Bv = a.B + (b * T + t) * N;
            const S* Cv = a.C + (b * T + t) * N;
            const S* xp = xs + (t - t0) * N;
            const S* xn = xs + (t - t0 + 1) * N;
            S dy = at3(a.dout, b, d, t);
            if (a.z.p) {  // out = y silu(z)
                S y = Dd * u;
                for (int64_t n = 0; n < N; ++n) y += Cv[n] * xn[n];
                const S z = at3(a.z, b, d, t), s = sigmoidS(z);
                at3(a.dz, b, d, t) = dy * y * s * (S(1) + z * (S(1) - s));
                dy *= z * s;
            }
            S ddt = S(0), du = dy * Dd;
            dD += dy * u;
            for (int64_t n = 0; n < N; ++n) {
                const S decay = expS(dt * A[n]);
                const S dx = h[n] + dy * Cv[n];
                const S axp = decay * xp[n];
                PARROT_ATOMIC_ADD(dCg + t * N + n, dy * xn[n]);
                PARROT_ATOMIC_ADD(dBg + t * N + n, dx * dt * u);
                ddt += dx * (A[n] * axp + Bv[n] * u);
                dA[n] += dx * dt * axp;
                du += dx * dt * Bv[n];
                h[n] = dx * decay;
            }
            ddt *= slope;
            dbias += ddt;
            at3(a.du, b, d, t) = du;
            at3(a.ddelta, b, d, t) = ddt;
        }
    }
    for (int64_t n = 0; n < N; ++n) a.dA[(b * N + n) * Dn + d] = dA[n];
    a.dD[b * Dn + d] = dD;
    if (a.dbias) a.dbias[b * Dn + d] = dbias;
}

}  // namespace parrot::scan
