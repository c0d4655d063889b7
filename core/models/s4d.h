// S4D (Gu et al., 2022, "On the parameterization and initialization of diagonal state space
// models"), the real variant: a time-invariant diagonal SSM per channel, applied as a causal
// convolution with the kernel K[d, l] = sum_n C[d,n] B[d,n] dt_d exp(dt_d A[d,n] l).
// Legend: B batch, D channels, T time, N state size.
#pragma once

#include "core/models/sequencemodel.h"

namespace parrot {

// The RMS norm of the SSM families' blocks (S4D, Mamba): RMSNorm built with kSsmNormEps, run on
// the fast paths (kernels/fastpaths.h) as the fused kernel of RMSNormImpl's arithmetic
// (kernels/selectivescan.h: rmsNorm), else by the module itself.
constexpr double kSsmNormEps = 1e-5;
torch::Tensor ssmNorm(RMSNorm& norm, const torch::Tensor& x);

class S4DKernelImpl : public torch::nn::Module {
public:
    S4DKernelImpl(int64_t channels, int64_t dState, double dtMin = 1e-3, double dtMax = 0.1);
    // u: (B, D, T) -> (B, D, T), without the D skip (the caller owns it).
    torch::Tensor forward(const torch::Tensor& u, torch::Tensor* states = nullptr);
    torch::Tensor kernel(int64_t T) const;  // (D, T)

    torch::Tensor log_dt;  // (D): step sizes, log-uniform in [dt_min, dt_max]
    torch::Tensor A_log;   // (D, N): A = -exp(A_log), S4D-real init log(1..N)
    torch::Tensor B;       // (D, N), init ones
    torch::Tensor C;       // (D, N), init N(0, 1/N)
};
TORCH_MODULE(S4DKernel);

struct S4DLMOptions {
    int64_t vocabSize = 30;
    int64_t dModel = 128;
    int64_t dState = 16;
    int64_t layers = 2;
    int64_t expand = 2;
    bool tieEmbeddings = true;
};

// A stack of x + out_proj(GELU(S4D(in_proj(Norm(x))) + D * in_proj(...))) blocks; their step
// sizes start log-uniform in [1e-3, 1] (see s4d.cpp).
class S4DLMImpl : public SequenceModelImpl {
public:
    explicit S4DLMImpl(const S4DLMOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    StateSize stateSize() const override;

    torch::nn::Embedding embedding{nullptr};
    torch::nn::ModuleList layers{nullptr};
    RMSNorm norm_f{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    S4DLMOptions m_o;
};

}  // namespace parrot
