// Decoder-only, pre-LayerNorm Transformer in the shape of nanoGPT's model.py, with the
// positional schemes the copy paper compares.
// Legend: B batch, T time, C channels (d_model), V vocab, H heads, D head size (C / H).
#pragma once

#include "base/ablation.h"
#include "core/kernels/attention.h"
#include "core/models/sequencemodel.h"

namespace parrot {

enum class Positions {
    NoPE,       // causal mask only (Kazemnejad et al., 2023)
    Learned,    // GPT-2 absolute position embeddings, added to the token embeddings
    Rope,       // rotary (Su et al.), GPT-NeoX style: the first rotaryFraction of each head's dims
    Alibi,      // linear biases (Press et al.): -m_h (q - k), m_h = 2^(-8h/H), h = 1..H
    HardAlibi,  // copy paper, section 3: head i < num_masked_heads sees keys with 0 <= q - k <= i
};

Positions positionsFromName(const std::string& name);

struct TransformerOptions {
    int64_t vocabSize = 30;
    int64_t dModel = 128;
    int64_t heads = 8;
    int64_t layers = 2;
    int64_t mlpRatio = 4;
    Positions positions = Positions::HardAlibi;
    int64_t numMaskedHeads = 4;
    double rotaryFraction = 1.0;
    int64_t maxPositions = 1024;
    bool tieEmbeddings = false;
    bool parallelResidual = false;  // GPT-NeoX: x + attn(ln_1(x)) + mlp(ln_2(x))
    double layerNormEps = 1e-5;
    double rotaryBase = 10000;
    bool repeatPassDims = false;    // the copy paper's attention: dims past int(rotaryFraction * D) count twice
    int64_t shortConv = 0;          // width of the depthwise causal convolution on each attention layer's input; 0: none
};

// Which keys each head may see, as an additive bias: (H, T, T), 0 where query q may attend
// to key k (ALiBi's linear penalty where it applies) and -inf where it may not.
torch::Tensor attentionBias(const TransformerOptions& o, int64_t T, torch::Device device);
// The same for `queries` positions from `offset` against keys 0..keys-1: (H, queries, keys),
// the rows of attentionBias(o, keys) from `offset` (generating with a KV cache).
torch::Tensor attentionBiasRows(const TransformerOptions& o, int64_t offset, int64_t queries, int64_t keys, torch::Device device);
// Whether a plain forward of x (no weights asked) takes the fused attention kernel: CPU tensors,
// fast paths on (kernels/fastpaths.h), and no per-dim rotation or score weights (RoPE and the
// copy paper's imported GPT-NeoX attention keep the explicit path).
bool attentionFuses(const TransformerOptions& o, const torch::Tensor& x);
// The bias a stack of attention layers is given: undefined (the fused kernel) where it applies and
// no probes are asked for, else attentionBias().
torch::Tensor layerBias(const TransformerOptions& o, const torch::Tensor& x, bool probes);
// ALiBi's head slopes 2^(-8h/H), h = 1..H.
torch::Tensor alibiSlopes(int64_t heads);
// Rotates the first `rotaryDims` of the last dimension by position (GPT-NeoX layout), with
// inverse frequencies base^(-2i / rotaryDims): x: (B, H, T, D) -> (B, H, T, D).
torch::Tensor applyRotary(const torch::Tensor& x, int64_t rotaryDims, int64_t offset = 0, double base = 10000);

class CausalSelfAttentionImpl : public torch::nn::Module {
public:
    explicit CausalSelfAttentionImpl(const TransformerOptions& o);
    // x: (B, T, C), bias: (H, T, T) -> (B, T, C); weights, when given, receives (B, H, T, T).
    // An undefined bias takes the fused kernel (kernels/attention.h; see fused()), which applies
    // the same mask and ALiBi bias itself.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias, torch::Tensor* weights = nullptr);
    // The heads' outputs before c_proj: (B, T, C) -> (B, T, C); forward = c_proj(mix(...)).
    torch::Tensor mix(const torch::Tensor& x, const torch::Tensor& bias, torch::Tensor* weights = nullptr);
    // Generating: the next tokens x (B, S, C) at positions offset.. offset+S-1, their keys and
    // values appended to the layer's cache K, V (B, H, offset, D); bias (H, S, offset+S) from
    // attentionBiasRows -> the heads' outputs (B, S, C), before c_proj.
    // convState holds the layer's last shortConv - 1 inputs (B, W - 1, C) when it has a short convolution.
    torch::Tensor mixCached(const torch::Tensor& x, torch::Tensor& K, torch::Tensor& V, torch::Tensor& convState, int64_t offset,
                            const torch::Tensor& bias);

    // Its index among the Transformer's layers (what HeadAblation names); -1 outside a Transformer.
    void setLayer(int layer) { m_layer = layer; }

    torch::nn::Conv1d conv1d{nullptr};  // depthwise causal, C channels, width W (model.short_conv); null without one
    torch::nn::Linear c_attn{nullptr};  // fused q, k, v projection, C -> 3C
    torch::nn::Linear c_proj{nullptr};  // C -> C, back into the residual stream

private:
    // The heads' outputs y (B, T, C) with the current HeadAblationScope's heads of this layer
    // zeroed or replaced by their means over T; y itself when none is.
    torch::Tensor ablated(const torch::Tensor& y) const;
    torch::Tensor mixed(const torch::Tensor& x, const torch::Tensor& bias, torch::Tensor* weights);  // mix() before ablation
    int m_layer = -1;
    int64_t m_heads;
    int64_t m_rotaryDims;  // 0 unless RoPE
    double m_rotaryBase;
    // x (B, T, C) -> (B, T, C): the short convolution over time, where there is one; `before` (B, W - 1, C)
    // holds the inputs that precede x (zeros at the start of a sequence).
    torch::Tensor shortConv(const torch::Tensor& x, const torch::Tensor& before = {});
    torch::Tensor m_scoreScale;  // (D): 2 on the dims the copy paper's attention counts twice; undefined otherwise
    AttentionPattern m_pattern;  // the same mask and bias as attentionBias(), for the fused kernel
};
TORCH_MODULE(CausalSelfAttention);

// While alive, the Transformers run on this thread switch off the ablation's heads
// (base/ablation.h); the weights are never touched.
class HeadAblationScope {
public:
    explicit HeadAblationScope(const HeadAblation& ablation);
    ~HeadAblationScope();
    HeadAblationScope(const HeadAblationScope&) = delete;
    HeadAblationScope& operator=(const HeadAblationScope&) = delete;
    static const HeadAblation* current();
    // Sets the thread's ablation (nullptr: none) and returns the one it replaces.
    static const HeadAblation* exchange(const HeadAblation* ablation);

private:
    const HeadAblation* m_previous;
};

// y (B, T, H D), the H heads' outputs of block `layer`: those the thread's HeadAblationScope
// switches off zeroed, or replaced by their means over T; y itself when it switches none off.
// The Transformer's attention and the recurrent heads (Mamba-2, Gated DeltaNet) apply it.
torch::Tensor headsSwitchedOff(const torch::Tensor& y, int layer, int64_t heads);

class MlpImpl : public torch::nn::Module {
public:
    MlpImpl(int64_t dModel, int64_t hidden);
    torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)
    torch::nn::Linear c_fc{nullptr};
    torch::nn::Linear c_proj{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
public:
    explicit BlockImpl(const TransformerOptions& o);
    torch::Tensor forward(torch::Tensor x, const torch::Tensor& bias, torch::Tensor* weights = nullptr);
    // The block's output at some positions: x (B, T, C), rows (R) into B * T -> (R, C). Attention
    // reads every position; the projection, the MLP and the residual run on the R rows only.
    torch::Tensor forwardAt(const torch::Tensor& x, const torch::Tensor& bias, const torch::Tensor& rows);
    // Generating: forward() for the next tokens with the layer's KV cache (mixCached).
    torch::Tensor decode(const torch::Tensor& x, torch::Tensor& K, torch::Tensor& V, torch::Tensor& convState, int64_t offset,
                         const torch::Tensor& bias);
    bool parallelResidual = false;
    torch::nn::LayerNorm ln_1{nullptr};
    CausalSelfAttention attn{nullptr};
    torch::nn::LayerNorm ln_2{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

class TransformerImpl : public SequenceModelImpl {
public:
    explicit TransformerImpl(const TransformerOptions& o);
    torch::Tensor embed(const torch::Tensor& idx) override;
    torch::Tensor hidden(const torch::Tensor& x, Probes* probes) override;
    torch::Tensor head(const torch::Tensor& h) override;
    torch::Tensor forwardAt(const torch::Tensor& idx, const torch::Tensor& rows) override;
    StateSize stateSize() const override;
    // Generating with a KV cache: every layer's keys and values so far.
    std::unique_ptr<DecodeState> startDecoding(int64_t batch, torch::TensorOptions opts) override;
    torch::Tensor decode(const torch::Tensor& idx, DecodeState& state) override;
    const TransformerOptions& options() const { return m_options; }

    torch::nn::Embedding wte{nullptr};
    torch::nn::Embedding wpe{nullptr};  // learned positions only
    torch::nn::ModuleList h{nullptr};
    torch::nn::LayerNorm ln_f{nullptr};
    torch::nn::Linear lm_head{nullptr};

private:
    // Positions added, then every block but the last `skipLast`: (B, T, C) -> (B, T, C), no final norm.
    torch::Tensor blocks(const torch::Tensor& input, const torch::Tensor& bias, Probes* probes, int64_t skipLast);
    TransformerOptions m_options;
};

// GPT-2 initialisation for a module tree: N(0, 0.02) for weights and embeddings, zero biases,
// unit norms, and projections into the residual stream (`c_proj.weight`, `out_proj.weight`)
// scaled by 1/sqrt(2 * layers) so the residual variance does not grow with depth.
void gpt2Init(torch::nn::Module& m, int64_t layers);

}  // namespace parrot
