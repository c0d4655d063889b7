// Gated DeltaNet (Yang, Kautz and Hatamizadeh, ICLR 2025) in the shape of flash-linear-attention's
// GatedDeltaNet layer: per head a state S of head_dim x head_v_dim written by the delta rule, which
// replaces what a key held with the new value, and decayed by a gate:
//   S_t = a_t (I - b_t k_t k_t^T) S_{t-1} + b_t k_t v_t^T,   o_t = S_t^T q_t,
// q and k L2-normalised (q also scaled by 1/sqrt(head_dim)), b_t = sigmoid(b_proj x_t), and
// log a_t = -exp(A_log) softplus(a_proj x_t + dt_bias). Without the gate (plain DeltaNet, Yang et al.
// 2024) a_t = 1. Legend: B batch, T time, C d_model, H heads = d_model / head_dim, K head_dim,
// V head_v_dim = expand_v * K, Q chunk_size.
#pragma once

#include "core/models/sequencemodel.h"

namespace parrot {

struct GatedDeltaNetOptions {
    int64_t dModel = 64;
    int64_t headDim = 16;   // K: a head's key (and query) width
    int64_t expandV = 2;    // V = expand_v * K: a head's value width
    int64_t dConv = 4;      // the short convolutions' width
    int64_t chunkSize = 64;
    bool forgetGate = true;  // off: plain DeltaNet, no a_proj, A_log or dt_bias
    double dtMin = 1e-3, dtMax = 0.1;
    int64_t heads() const { return dModel / headDim; }
    int64_t keyDim() const { return heads() * headDim; }
    int64_t headVDim() const { return expandV * headDim; }
    int64_t valueDim() const { return heads() * headVDim(); }
};

// The rule, token by token (the reference twin the tests use): q, k (B, T, H, K) already normalised
// and q scaled, v (B, T, H, V), beta and logDecay (B, T, H) (logDecay undefined: no gate), h0
// (B, H, K, V) or undefined for zeros. Returns o (B, T, H, V) and the state after the last token;
// with `stateNorms`, the norm of each head's state after each token (B, T, H) is written there;
// with `bits` (1..16), each value column of the state (K entries) is quantised after every token
// (core/models/stateshrink.h).
std::pair<torch::Tensor, torch::Tensor> deltaRuleRecurrent(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                                           const torch::Tensor& beta, const torch::Tensor& logDecay,
                                                           const torch::Tensor& h0 = {}, torch::Tensor* stateNorms = nullptr,
                                                           int bits = 0);
// The same, in chunks of `chunk` tokens: within a chunk the writes are solved at once (the WY /
// UT form: a unit lower-triangular system), and the state passes from chunk to chunk.
std::pair<torch::Tensor, torch::Tensor> deltaRuleChunked(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                                         const torch::Tensor& beta, const torch::Tensor& logDecay, int64_t chunk,
                                                         const torch::Tensor& h0 = {});
// What each head does to its values, unrolled from an empty state: o_t = sum_{s<=t} M[h,t,s] v_s with
//   M[h,t,s] = b_s q_t^T P(t,s) k_s,   P(t,s) = a_t (I - b_t k_t k_t^T) ... a_{s+1} (I - b_{s+1} k_{s+1} k_{s+1}^T),
// one scalar per pair of positions since the rule acts on the keys' side only. Computed exactly as
// (q k^T, decayed) (I + strictly lower (b k k^T, decayed))^-1 diag(b). (B, H, T, T).
torch::Tensor deltaRuleMatrix(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& beta, const torch::Tensor& logDecay);

// What generating one token at a time keeps, as fla's layer cache does.
struct GatedDeltaNetCache {
    torch::Tensor convQ, convK, convV;  // (B, channels, conv width): each short convolution's last inputs
    torch::Tensor state;                // (B, H, K, V)
};

class GatedDeltaNetMixerImpl : public torch::nn::Module {
public:
    explicit GatedDeltaNetMixerImpl(const GatedDeltaNetOptions& o);
    // x: (B, T, C) -> (B, T, C) as block `layer` (shrunk under a StateShrinkScope), through the fused rule (core/kernels/deltarule.h) where the fast
    // paths are on and it runs, else in chunks. With probes: each head's |M| (deltaRuleMatrix), its rows scaled to
    // sum to one, into probes->attention; unless mapsOnly, the norm of each head's state after each
    // token (B, T, H) into probes->stateNorm.
    torch::Tensor forward(const torch::Tensor& x, Probes* probes = nullptr, int layer = 0);
    // The rule token by token instead of in chunks (the reference, for tests and benchmarks).
    torch::Tensor forwardRecurrent(const torch::Tensor& x);
    torch::Tensor prefill(const torch::Tensor& x, GatedDeltaNetCache& cache);  // a prompt into an empty cache
    torch::Tensor step(const torch::Tensor& x, GatedDeltaNetCache& cache);     // x (B, C) -> (B, C)
    GatedDeltaNetCache emptyCache(int64_t batch, torch::TensorOptions opts) const;
    const GatedDeltaNetOptions& options() const { return m_o; }
    long long stateFloats() const
    {
        return m_o.heads() * m_o.headDim * m_o.headVDim() + (2 * m_o.keyDim() + m_o.valueDim()) * (m_o.dConv - 1);
    }

    // Declared in fla's order and named as its state dict.
    torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr};
    torch::nn::Linear a_proj{nullptr};  // the gate's input (absent without the gate)
    torch::nn::Linear b_proj{nullptr};  // beta's input
    torch::Tensor A_log, dt_bias;       // (H), absent without the gate
    torch::nn::Conv1d q_conv1d{nullptr}, k_conv1d{nullptr}, v_conv1d{nullptr};  // depthwise, causal, no bias, then SiLU
    torch::nn::Linear g_proj{nullptr};  // the output gate
    torch::Tensor o_norm;               // (V): o_norm.weight, the gated RMSNorm over each head's output
    torch::nn::Linear o_proj{nullptr};

private:
    struct Inputs {
        torch::Tensor q, k, v, beta, logDecay, gate;  // (B, T, H, K) x2, (B, T, H, V), (B, T, H) x2, (B, T, H, V)
        torch::Tensor qIn, kIn, vIn;                   // before the convolutions (B, T, channels)
    };
    Inputs inputs(const torch::Tensor& x);
    // o (B, T, H, V) -> (B, T, C), the heads a HeadAblationScope switches off in block `layer` taken
    // out before o_proj (core/models/transformer.h)
    torch::Tensor output(const torch::Tensor& o, const Inputs& in, int layer = -1);
    // The rule under the thread's StateShrink: the keys cut to their first dims (Dims: the state's
    // other rows are never written), the dropped value columns giving nothing (Channels: what an
    // empty state gives), or the state quantised each token (Bits).
    torch::Tensor shrunkRule(const Inputs& in);
    GatedDeltaNetOptions m_o;
};
TORCH_MODULE(GatedDeltaNetMixer);

struct GatedDeltaNetLMOptions {
    GatedDeltaNetOptions mixer;
    int64_t vocabSize = 30;
    int64_t layers = 2;
    bool tieEmbeddings = true;
};

// Residual block: x + attn(attn_norm(x)), fla's block without its MLP (as the lab's Mamba blocks).
class GatedDeltaNetBlockImpl : public torch::nn::Module {
public:
    explicit GatedDeltaNetBlockImpl(const GatedDeltaNetLMOptions& o);
    RMSNorm attn_norm{nullptr};
    GatedDeltaNetMixer attn{nullptr};
};
TORCH_MODULE(GatedDeltaNetBlock);

// fla's GatedDeltaNetForCausalLM layout: model.{embeddings, layers.N.{attn_norm, attn}, norm}, lm_head.
class GatedDeltaNetLMImpl : public SequenceModelImpl {
public:
    explicit GatedDeltaNetLMImpl(const GatedDeltaNetLMOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    StateSize stateSize() const override;
    std::unique_ptr<DecodeState> startDecoding(int64_t batch, torch::TensorOptions opts) override;
    torch::Tensor decode(const torch::Tensor& idx, DecodeState& state) override;
    static const std::vector<GatedDeltaNetCache>& caches(const DecodeState& state);  // per layer, for tests

    torch::nn::Embedding embeddings{nullptr};
    torch::nn::ModuleList layers{nullptr};
    RMSNorm norm{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    GatedDeltaNetLMOptions m_o;
};

}  // namespace parrot
