// The selective scan on the GPU: one thread per (batch row, channel), running the per-channel
// code of scanchannel.h (the same code the host tests run). The state lives in registers for
// d_state <= 16 and in local memory above.
#include "core/kernels/scancuda.h"

#include "core/kernels/scanchannel.h"

#include <cuda_runtime.h>

namespace parrot::scan {
namespace {

constexpr int kThreads = 128;

template <int MaxN> __global__ void forwardKernel(Args<float> a)
{
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < a.Bn * a.Dn) forwardChannel<float, MaxN>(a, i / a.Dn, i % a.Dn);
}

template <int MaxN> __global__ void backwardKernel(Args<float> a, float* ckpt)
{
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < a.Bn * a.Dn) backwardChannel<float, MaxN>(a, i / a.Dn, i % a.Dn, ckpt);
}

std::string lastError()
{
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? std::string() : std::string("CUDA selective scan: ") + cudaGetErrorString(e);
}

unsigned blocksFor(const Args<float>& a) { return unsigned((a.Bn * a.Dn + kThreads - 1) / kThreads); }

}  // namespace

std::string cudaForward(const Args<float>& a)
{
    if (a.Bn * a.Dn == 0 || a.T == 0) return {};
    if (a.N <= 16)
        forwardKernel<16><<<blocksFor(a), kThreads>>>(a);
    else if (a.N <= 64)
        forwardKernel<64><<<blocksFor(a), kThreads>>>(a);
    else
        forwardKernel<256><<<blocksFor(a), kThreads>>>(a);
    return lastError();
}

std::string cudaBackward(const Args<float>& a, float* ckpt)
{
    if (a.Bn * a.Dn == 0 || a.T == 0) return {};
    if (a.N <= 16)
        backwardKernel<16><<<blocksFor(a), kThreads>>>(a, ckpt);
    else if (a.N <= 64)
        backwardKernel<64><<<blocksFor(a), kThreads>>>(a, ckpt);
    else
        backwardKernel<256><<<blocksFor(a), kThreads>>>(a, ckpt);
    return lastError();
}

}  // namespace parrot::scan
