// Mamba-2 (Dao and Gu, 2024, "Transformers are SSMs") in the shape of mamba_ssm's Mamba2 module:
// one scalar decay per head, a state of head_dim x d_state per head, computed as SSD blocks (the
// quadratic, attention-like form within a chunk; the state passed from chunk to chunk).
// Legend: B batch, T time, C d_model, Di d_inner = expand * C, H heads = Di / P, P head_dim,
// N d_state, G n_groups (heads share B and C within a group), K d_conv, Q chunk_size.
#pragma once

#include "core/models/sequencemodel.h"

namespace parrot {

struct Mamba2Options {
    int64_t dModel = 64;
    int64_t dState = 16;
    int64_t headDim = 16;
    int64_t expand = 2;
    int64_t nGroups = 1;
    int64_t dConv = 4;
    int64_t chunkSize = 64;
    double dtMin = 1e-3, dtMax = 0.1;
    int64_t dInner() const { return expand * dModel; }
    int64_t heads() const { return dInner() / headDim; }
    int64_t convChannels() const { return dInner() + 2 * nGroups * dState; }  // x, B and C go through the convolution
};

// a (..., Q) -> (..., Q, Q): S[i, j] = a_{j+1} + ... + a_i below the diagonal, 0 on it, -inf above, each
// entry summed on its own (not as a difference of running sums, which loses the small ones): the
// log of the decay from position j to position i, for a recurrence whose log decay at step t is a_t.
torch::Tensor decaySegments(const torch::Tensor& a);

// What a head's scan does to its inputs, written out (the SSD paper's matrix form): per head h,
//   y_t = sum_{s<=t} M[h,t,s] x_s + D[h] x_t,   M[h,t,s] = (C_t . B_s) exp(sum_{s<r<=t} dt_r A_h) dt_s,
// M being (B, H, T, T), zero above the diagonal.
torch::Tensor ssdMatrix(const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& Bm, const torch::Tensor& Cm);

// The chunked scan: x (B, T, H, P), dt (B, T, H) after softplus, A (H), Bm and Cm (B, T, H, N) (already
// spread from groups to heads), the state before the first token h0 (B, H, P, N) or undefined for
// zeros. Returns y (B, T, H, P) without the skip, and the state after the last token (B, H, P, N).
std::pair<torch::Tensor, torch::Tensor> ssdScan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                                const torch::Tensor& Bm, const torch::Tensor& Cm, int64_t chunk,
                                                const torch::Tensor& h0 = {});

// The same scan token by token, h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t (the reference
// twin the tests and benchmarks use). With `stateNorms`, the norm of each head's state after each
// token (B, T, H) is written there.
std::pair<torch::Tensor, torch::Tensor> ssdRecurrent(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                                     const torch::Tensor& Bm, const torch::Tensor& Cm, const torch::Tensor& h0 = {},
                                                     torch::Tensor* stateNorms = nullptr);

// The scan through Mamba's fused selective scan (core/kernels/selectivescan.h), which does the same
// arithmetic when a head's P channels share its step size and decay and a group's channels share B
// and C: x (B, T, H P), dtRaw (B, T, H) before dt_bias and softplus, dtBias, A and D (H), Bm and Cm
// (B, T, G N), z (B, T, H P) or undefined. Returns (y + D x) * silu(z) (without z: y + D x), (B, T, H P);
// one fused scan per group, each differentiable. Channel-last views are read in place. Under a
// StateShrinkScope (core/models/stateshrink.h) the shrunk scan: each channel's state is a row of
// its head's P x N state, so Dims cuts B and C, Channels drops rows, Bits quantises each row.
torch::Tensor ssdScanFused(const torch::Tensor& x, const torch::Tensor& dtRaw, const torch::Tensor& dtBias, const torch::Tensor& A,
                           const torch::Tensor& Bm, const torch::Tensor& Cm, int64_t groups, const torch::Tensor& D,
                           const torch::Tensor& z = {});

// Caches for generating one token at a time, as mamba_ssm's step keeps them.
struct Mamba2Cache {
    torch::Tensor conv;  // (B, conv channels, K): the convolution's last K inputs
    torch::Tensor ssm;   // (B, H, P, N): the scan's state
};

// mamba_ssm's RMSNormGated with norm_before_gate=False: rmsnorm(y * silu(z)) * weight, the norm
// taken over each group's share of the inner width (group_size = d_inner / n_groups).
class GatedRMSNormImpl : public torch::nn::Module {
public:
    GatedRMSNormImpl(int64_t dim, int64_t groups, double eps = 1e-5);
    torch::Tensor forward(const torch::Tensor& y, const torch::Tensor& z);  // (..., Di) each
    torch::Tensor normalise(const torch::Tensor& gated);  // the norm of an already gated y * silu(z)
    torch::Tensor weight;

private:
    int64_t m_groups;
    double m_eps;
};
TORCH_MODULE(GatedRMSNorm);

class Mamba2MixerImpl : public torch::nn::Module {
public:
    explicit Mamba2MixerImpl(const Mamba2Options& o);
    // x: (B, T, C) -> (B, T, C), as block `layer` (the heads a HeadAblationScope switches off there
    // are taken out before out_proj). With probes, each head's |M| (ssdMatrix), its rows scaled to sum
    // to one, goes into probes->attention as the layer's heads; unless mapsOnly, each head's step
    // size dt (B, T, H) into probes->delta and the norm of its state after each token (B, T, H)
    // into probes->stateNorm.
    torch::Tensor forward(const torch::Tensor& x, Probes* probes = nullptr, int layer = 0);
    // The scan token by token instead of in chunks (the reference, for tests and benchmarks).
    torch::Tensor forwardRecurrent(const torch::Tensor& x);
    // Training's path where the fast paths are on, and any path's under a state shrink (forward()
    // takes it without probes): the fused convolution and ssdScanFused, which adds the skip and
    // applies the gate too.
    torch::Tensor forwardFused(const torch::Tensor& x, int layer = -1);
    // A whole prompt into an empty cache: (B, S, C) -> (B, S, C) as forward() gives, and the
    // cache left as S step() calls would leave it.
    torch::Tensor prefill(const torch::Tensor& x, Mamba2Cache& cache);
    // One token: x (B, C) -> (B, C), updating the cache.
    torch::Tensor step(const torch::Tensor& x, Mamba2Cache& cache);
    Mamba2Cache emptyCache(int64_t batch, torch::TensorOptions opts) const;
    const Mamba2Options& options() const { return m_o; }
    long long stateFloats() const { return m_o.heads() * m_o.headDim * m_o.dState + m_o.convChannels() * (m_o.dConv - 1); }

    // Declared in data-flow order, named as mamba_ssm's state dict.
    torch::nn::Linear in_proj{nullptr};  // C -> [z, x, B, C, dt]: 2 Di + 2 G N + H
    torch::nn::Conv1d conv1d{nullptr};   // depthwise over x, B and C, causal, width K
    torch::Tensor dt_bias;               // (H): softplus(dt_bias) starts log-uniform in [dt_min, dt_max]
    torch::Tensor A_log;                 // (H): A = -exp(A_log), A starts uniform in [1, 16]
    torch::Tensor D;                     // (H): skip, init ones
    GatedRMSNorm norm{nullptr};          // over y * silu(z)
    torch::nn::Linear out_proj{nullptr}; // Di -> C

private:
    struct Inputs {
        torch::Tensor z, x, Bm, Cm, dt;  // z (B, T, Di); x (B, T, H, P); Bm, Cm (B, T, H, N); dt (B, T, H)
        torch::Tensor convIn;            // (B, T, conv channels): before the convolution
    };
    Inputs inputs(const torch::Tensor& x);
    // y (B, T, H, P) + the skip, gated, normed, the heads the HeadAblationScope switches off in block
    // `layer` taken out (core/models/transformer.h), projected
    torch::Tensor output(const torch::Tensor& y, const Inputs& in, int layer = -1);
    Mamba2Options m_o;
};
TORCH_MODULE(Mamba2Mixer);

struct Mamba2LMOptions {
    Mamba2Options mixer;
    int64_t vocabSize = 30;
    int64_t layers = 2;
    bool tieEmbeddings = true;
};

// Residual block: x + Mixer(Norm(x)), as mamba_ssm's Block (d_intermediate 0: no MLP).
class Mamba2BlockImpl : public torch::nn::Module {
public:
    explicit Mamba2BlockImpl(const Mamba2LMOptions& o);
    RMSNorm norm{nullptr};
    Mamba2Mixer mixer{nullptr};
};
TORCH_MODULE(Mamba2Block);

class Mamba2LMImpl : public SequenceModelImpl {
public:
    explicit Mamba2LMImpl(const Mamba2LMOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    StateSize stateSize() const override;
    // Generating: the prompt through the chunked scan into each layer's cache, then one step a token.
    std::unique_ptr<DecodeState> startDecoding(int64_t batch, torch::TensorOptions opts) override;
    torch::Tensor decode(const torch::Tensor& idx, DecodeState& state) override;
    // The caches of a decode state, for tests: one per layer.
    static const std::vector<Mamba2Cache>& caches(const DecodeState& state);

    torch::nn::Embedding embedding{nullptr};  // backbone.embedding
    torch::nn::ModuleList layers{nullptr};    // backbone.layers
    RMSNorm norm_f{nullptr};                  // backbone.norm_f
    torch::nn::Linear lm_head{nullptr};

private:
    Mamba2LMOptions m_o;
    std::shared_ptr<torch::nn::Module> m_backbone;
};

}  // namespace parrot
