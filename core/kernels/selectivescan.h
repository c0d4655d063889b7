// The selective scan of Mamba (Gu & Dao, 2023, algorithm 2), three ways behind one interface:
// a reference loop of torch ops, a fused CPU kernel with a hand-written backward, and
// a CUDA kernel (one thread per channel; built when nvcc is found). Legend: B batch, D channels (d_inner), T time, N state size.
//
//   delta_t = softplus(delta_t + delta_bias)          (when softplus is set)
//   x_t     = exp(delta_t * A) * x_{t-1} + delta_t * B_t * u_t      x: (N) per channel
//   y_t     = C_t . x_t + D * u_t
//   out_t   = y_t * silu(z_t)                          (when z is given)
#pragma once

#include <torch/torch.h>

namespace parrot {

struct ScanInputs {
    torch::Tensor u;          // (B, D, T)
    torch::Tensor delta;      // (B, D, T), before the bias and softplus
    torch::Tensor A;          // (D, N), negative real
    torch::Tensor B;          // (B, N, T), input-dependent ("selective")
    torch::Tensor C;          // (B, N, T)
    torch::Tensor D;          // (D), skip
    torch::Tensor z;          // (B, D, T) gate, or undefined for none
    torch::Tensor deltaBias;  // (D), or undefined
    bool deltaSoftplus = true;
};

// Obviously correct: a Python-style loop over time. Differentiable by autograd.
// When `states` is given it receives the hidden states x_t: (B, D, T, N).
torch::Tensor selectiveScanReference(const ScanInputs& in, torch::Tensor* states = nullptr);

// Which code runs the fused scan on CPU tensors: the vector kernel (eight channels per AVX
// register), or the CUDA kernel's per-thread code run on the host (for tests). CUDA tensors
// always take the CUDA kernel.
enum class ScanPath { Vector, Channel };

// Fused kernel (float32 or float64 on the CPU, float32 on CUDA): one autograd node for the bias,
// softplus, scan, skip and gate, with a hand-written backward that recomputes the states.
torch::Tensor selectiveScanFused(const ScanInputs& in, ScanPath path = ScanPath::Vector);

// The vector kernel's builds this CPU can run, best first: "avx512" (16 floats a vector),
// "avx2" (8, with FMA), "baseline" (plain x86-64). The best runs unless useScanKernel names
// another for the whole process ("" = the best again); the tests run each.
std::vector<std::string> scanKernels();
void useScanKernel(const std::string& name);

// Mamba's depthwise causal convolution of width K and the SiLU after it, on channel-last input
// (the mixer's in_proj output): x (B, T, D) -> u (B, T, D), contiguous,
//   u_t = silu(bias + sum_k weight[:, 0, k] x_{t-K+1+k}),   x_s = 0 for s < 0,
// weight (D, 1, K) and bias (D) as torch's Conv1d(D, D, K, groups = D, padding = K - 1) keeps them.
// Fused: one vector pass each way on the CPU (float32 or float64; x needs unit channel stride,
// else it is copied). The reference is conv1d and silu; causalConvSilu falls back to it on GPUs.
torch::Tensor causalConvSilu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);
torch::Tensor causalConvSiluReference(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// The Mamba blocks' RMS norm over the last dimension, RMSNormImpl's arithmetic
//   x r w,   r = 1 / sqrt(mean(x^2) + eps)
// as one autograd node with its backward (CPU float32/float64; elsewhere, and as the reference,
// those torch ops). x (..., C), weight (C).
torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
torch::Tensor rmsNormReference(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// x (..., C) times two row blocks of weight (O, C), rows [0, first) and [first, O): the two
// outputs F::linear gives with each narrowed block (Mamba's in_proj into x and the gate z), from
// one autograd node. Autograd would give each narrowed block a zero-filled (O, C) gradient with
// its rows copied in, and add the two, and add the two gradients of x; here the weight's gradient
// is written block by block into one tensor and x's is one product and one addmm. Any device;
// the reference is F::linear on the narrowed blocks.
std::vector<torch::Tensor> splitLinear(const torch::Tensor& x, const torch::Tensor& weight, int64_t first);
std::vector<torch::Tensor> splitLinearReference(const torch::Tensor& x, const torch::Tensor& weight, int64_t first);

// Whether this build has the CUDA kernel (nvcc was found when it was configured).
bool cudaScanBuilt();

// The fast path where there is one (CPU tensors, or CUDA ones with the CUDA kernel built),
// else the reference.
torch::Tensor selectiveScan(const ScanInputs& in);

}  // namespace parrot
