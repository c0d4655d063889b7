// Mamba (Gu & Dao, 2023) in the shape of mamba_ssm's mamba_simple.py, and S4-Mamba (Park et
// al., 2024): the same block with a time-invariant S4D kernel in place of the selective scan.
// Legend: B batch, T time, C d_model, Di d_inner = expand * C, N d_state, R dt_rank, K d_conv.
#pragma once

#include "core/kernels/selectivescan.h"
#include "core/models/s4d.h"
#include "core/models/sequencemodel.h"

namespace parrot {

struct MambaOptions {
    int64_t dModel = 128;
    int64_t dState = 16;
    int64_t dConv = 4;
    int64_t expand = 2;
    bool selective = true;  // false: S4-Mamba, an S4D kernel instead of the selective scan
    double dtMin = 1e-3, dtMax = 0.1;
    bool mimetic = false;   // model.init = mimetic: see initMambaMixer
    int64_t dtRankOverride = 0;  // > 0: delta's rank (HuggingFace's time_step_rank)
    bool projBias = false;       // in_proj and out_proj with biases (HuggingFace's use_bias)
    bool convBias = true;        // the convolution's bias (use_conv_bias)
    int64_t dInner() const { return expand * dModel; }
    int64_t dtRank() const { return dtRankOverride > 0 ? dtRankOverride : (dModel + 15) / 16; }  // mamba_ssm's "auto": ceil(d_model / 16)
};

// The selective scan unrolled (Ali et al., 2024, "The Hidden Attention of Mamba Models"): the
// scan is linear in its input u, so each channel d has a lower-triangular matrix with
//   y_t[d] = sum_{s<=t} alpha[d,t,s] u_s[d] + D[d] u_t[d],
//   alpha[d,t,s] = sum_n C_t[n] exp(A[d,n] (delta_{s+1} + ... + delta_t)[d]) delta_s[d] B_s[n].
// The mixer's output is out_proj(y * silu(z)).
struct MambaImplicitAttention {
    torch::Tensor alpha;  // (B, Di, T, T), zero above the diagonal
    torch::Tensor u;      // (B, Di, T): the scan's input (after the convolution and SiLU)
    torch::Tensor z;      // (B, Di, T): the gate
};

// alpha (B, Di, T, T) from the step sizes after softplus delta (B, Di, T), A (Di, N), B and C (B, N, T).
torch::Tensor unrollScan(const torch::Tensor& delta, const torch::Tensor& A, const torch::Tensor& Bm, const torch::Tensor& Cm);

// The same map's |alpha| averaged over the channels, (B, T, T), without alpha's (B, Di, T, T):
// what the explorer shows, for prompts of hundreds of tokens. `keepGoing` is polled per block of
// queries; false throws parrot::Error("cancelled").
torch::Tensor implicitAttentionMean(const torch::Tensor& delta, const torch::Tensor& A, const torch::Tensor& Bm, const torch::Tensor& Cm,
                                    const std::function<bool()>& keepGoing = {});

// Caches for generating one token at a time.
struct MambaCache {
    torch::Tensor conv;  // (B, Di, K): the last K inputs of the convolution
    torch::Tensor ssm;   // (B, Di, N): the scan's state
};

class MambaMixerImpl : public torch::nn::Module {
public:
    explicit MambaMixerImpl(const MambaOptions& o);
    // x: (B, T, C) -> (B, T, C). With probes, the states and step sizes are recorded.
    torch::Tensor forward(const torch::Tensor& x, Probes* probes = nullptr, int layer = 0);
    // The output at some positions only: x (B, T, C), rows (R) indices into the B * T positions
    // -> (R, C). The scan still runs over every position; the gate's half of in_proj and
    // out_proj, which work position by position, run on the R rows.
    torch::Tensor forwardAt(const torch::Tensor& x, const torch::Tensor& rows);
    // One token: x (B, C) -> (B, C), updating the cache (zeros at the start of a sequence).
    torch::Tensor step(const torch::Tensor& x, MambaCache& cache);
    // The convolution's bias, zeros where the model has none (use_conv_bias false).
    torch::Tensor convBias() const;
    // A whole prompt at once into an empty cache (selective mixers): (B, S, C) -> (B, S, C) as
    // forward() gives, and the cache left as S step() calls would leave it.
    torch::Tensor prefill(const torch::Tensor& hidden, MambaCache& cache);
    MambaCache emptyCache(int64_t batch, torch::TensorOptions opts) const;
    // The per-channel linear map of the scan for the input x (B, T, C); selective mixers only.
    MambaImplicitAttention implicitAttention(const torch::Tensor& x);
    bool selective() const { return m_o.selective; }
    long long stateFloats() const { return m_o.dInner() * (m_o.dState + m_o.dConv - 1); }
    const MambaOptions& options() const { return m_o; }

    // Declared in data-flow order, named as mamba_ssm's state dict.
    torch::nn::Linear in_proj{nullptr};   // C -> 2 Di: x and the gate z
    torch::nn::Conv1d conv1d{nullptr};    // depthwise, causal, width K
    torch::nn::Linear x_proj{nullptr};    // Di -> R + 2N: delta (low rank), B, C
    torch::nn::Linear dt_proj{nullptr};   // R -> Di, its bias puts softplus(bias) in [dt_min, dt_max]
    torch::Tensor A_log;                  // (Di, N): A = -exp(A_log), S4D-real init log(1..N)
    torch::Tensor D;                      // (Di): skip, init ones
    S4DKernel s4{nullptr};                // S4-Mamba only
    torch::nn::Linear out_proj{nullptr};  // Di -> C

private:
    // The selective mixer channel-last throughout (fused convolution, no transposed copies):
    // forward() without probes when kernels/fastpaths.h is on; the same values as its twin.
    torch::Tensor forwardFast(const torch::Tensor& x);
    // The channel-last mixer from in_proj's x half (B, T, Di) up to the scan (the fused
    // convolution, x_proj, dt_proj), gated by z (B, T, Di) or, undefined, not.
    ScanInputs channelLastScan(const torch::Tensor& x, const torch::Tensor& z);
    MambaOptions m_o;
};
TORCH_MODULE(MambaMixer);

struct MambaLMOptions {
    MambaOptions mixer;
    int64_t vocabSize = 30;
    int64_t layers = 2;
    int64_t mlpRatio = 0;  // an MLP after each mixer (mamba_ssm's d_intermediate), 0 = none
    bool tieEmbeddings = true;
};

// Residual block: x + Mixer(Norm(x)) (mamba_ssm's Add -> Norm -> Mixer, written pre-norm).
class MambaBlockImpl : public torch::nn::Module {
public:
    MambaBlockImpl(const MambaLMOptions& o);
    torch::Tensor forward(torch::Tensor x, Probes* probes, int layer);
    torch::Tensor forwardAt(const torch::Tensor& x, const torch::Tensor& rows);  // (B, T, C) -> (R, C)
    torch::Tensor step(torch::Tensor x, MambaCache& cache);  // x: (B, C)
    torch::Tensor prefill(torch::Tensor x, MambaCache& cache);  // x: (B, S, C), an empty cache
    RMSNorm norm{nullptr};
    MambaMixer mixer{nullptr};
    RMSNorm norm2{nullptr};
    torch::nn::Sequential mlp{nullptr};
};
TORCH_MODULE(MambaBlock);

class MambaLMImpl : public SequenceModelImpl {
public:
    explicit MambaLMImpl(const MambaLMOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    // The last block at the scored rows only (MambaBlockImpl::forwardAt).
    torch::Tensor forwardAt(const torch::Tensor& idx, const torch::Tensor& rows) override;
    StateSize stateSize() const override;
    // One token per call: idx (B) -> logits (B, V). `caches` starts empty.
    torch::Tensor step(const torch::Tensor& idx, std::vector<MambaCache>& caches);
    // Generating: each layer's convolution and scan state (MambaCache), one step per token.
    std::unique_ptr<DecodeState> startDecoding(int64_t batch, torch::TensorOptions opts) override;
    torch::Tensor decode(const torch::Tensor& idx, DecodeState& state) override;

    torch::nn::Embedding embedding{nullptr};  // backbone.embedding
    torch::nn::ModuleList layers{nullptr};    // backbone.layers
    RMSNorm norm_f{nullptr};                  // backbone.norm_f
    torch::nn::Linear lm_head{nullptr};

private:
    MambaLMOptions m_o;
    std::shared_ptr<torch::nn::Module> m_backbone;
};

// Initialisation shared by every Mamba mixer (mamba_simple.py's reasons in the .cpp).
void initMambaMixer(MambaMixerImpl& m, const MambaOptions& o);

}  // namespace parrot
