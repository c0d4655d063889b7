// The interface every model family implements: tokens in, logits out, and on request the
// quantities the explorer views need. Legend: B batch, T time, V vocab, H heads, C channels.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace parrot {

// Filled only when passed to forward (no cost otherwise). One entry per layer that has the
// quantity, in depth order, with the layer's index in `...Layer`.
struct Probes {
    std::vector<torch::Tensor> attention;   // (B, H, T, T) softmax weights
    std::vector<int> attentionLayer;
    std::vector<torch::Tensor> stateNorm;   // (B, T, channels): per-channel hidden-state norm over time
    std::vector<int> stateLayer;
    std::vector<torch::Tensor> delta;       // (B, T, channels): Mamba's step size after softplus
    std::vector<int> deltaLayer;
    std::vector<torch::Tensor> implicitAttention;  // (B, T, T): Mamba's alpha, |.| averaged over channels
    std::vector<int> implicitLayer;
    std::function<bool()> keepGoing;  // polled during long probes; false throws parrot::Error("cancelled")
    // The maps only (attention, implicit attention): a selective-scan block then keeps no state
    // norms or step sizes, and its scan takes the fused kernel instead of the reference loop that
    // keeps every state. What the trainer's mechanism scores need (train/mechanismprobe.h), at
    // about half the cost of a Mamba's full probe.
    bool mapsOnly = false;
    // With mapsOnly: the implicit attention of the batch's first `implicitRows` rows only (0: of
    // every row), the costly part of a Mamba's maps.
    int64_t implicitRows = 0;
};

// The recurrent state the paper's bound counts: floats a model carries from one token to the
// next. Transformers carry their whole KV cache, which grows with the context.
struct StateSize {
    long long floats = 0;          // fixed-size state (0 for a pure Transformer)
    long long floatsPerToken = 0;  // state added per token of context (KV cache)
};

// What a family carries from one call of decode() to the next while generating (a KV cache,
// a recurrent state); made by startDecoding().
struct DecodeState {
    virtual ~DecodeState() = default;
    int64_t length = 0;  // tokens decoded so far
    // decode() gives the logits of the last position only (B, 1, V): generating needs no more,
    // and a prompt's head over every position is a large share of its cost (50k-row vocabularies).
    bool lastOnly = false;
};

// Every family is embed -> hidden -> head. Token tasks go through the embedding and the LM
// head; vector tasks (in-context learning) through a linear read-in and read-out around the
// same hidden stack, so nothing is written twice per family.
class SequenceModelImpl : public torch::nn::Module {
public:
    // idx: (B, T) int64 -> logits (B, T, V); with a read-out (addReadOut), the row decoded at every
    // position from its representation at the read token.
    torch::Tensor forward(const torch::Tensor& idx, Probes* probes = nullptr);
    // idx: (B, T), rows: (R) int64 indices into the B * T positions -> logits (R, V) at those
    // positions only: what a loss on some answer tokens needs. Families whose last layer works
    // position by position after its mixing (the Transformer) skip the others there; this
    // default runs every position and selects before the head.
    virtual torch::Tensor forwardAt(const torch::Tensor& idx, const torch::Tensor& rows);
    // x: (B, T, d_in) -> (B, T, d_out) through read_in and read_out (see addVectorIO).
    torch::Tensor forwardVectors(const torch::Tensor& x, Probes* probes = nullptr);
    // Registers read_in (d_in -> d_model) and read_out (d_model -> d_out), GPT-2 initialised.
    void addVectorIO(int64_t dIn, int64_t dOut, int64_t dModel);
    bool hasVectorIO() const { return !read_in.is_empty(); }
    // MAD's compression read-out (mad-lab's AutoEncoder with global_pool 'last'): the hidden state
    // h at each row's last `readToken` (the last position when there is none), plus a sinusoidal
    // embedding of position t, through `read_decoder` -- MAD's non-expanding MLP: norm, linear,
    // GELU, norm, linear, GELU -- and a norm, then the family's own output layer, gives the logits
    // for token t. Registers read_decoder (d_model -> d_model, weights N(0, 0.02), as MAD's).
    void addReadOut(int64_t dModel, int64_t readToken);
    bool hasReadOut() const { return !read_decoder.is_empty(); }
    // idx (B, T) and its hidden states h (B, T, C) -> the read-out logits (B, T, V).
    torch::Tensor readOut(const torch::Tensor& idx, const torch::Tensor& h);

    virtual torch::Tensor embed(const torch::Tensor& idx) = 0;                  // (B, T) -> (B, T, C)
    virtual torch::Tensor hidden(const torch::Tensor& x, Probes* probes) = 0;  // (B, T, C) -> (B, T, C), final norm applied
    virtual torch::Tensor head(const torch::Tensor& h) = 0;                     // (B, T, C) -> (B, T, V)
    virtual StateSize stateSize() const = 0;

    // Generating: the state for `batch` rows, or null for a family without an incremental path
    // (generation then runs the whole sequence again for each token). decode() takes the next
    // tokens idx (B, S) -- the prompt first, then one at a time -- and returns their logits
    // (B, S, V), the same as forward() over everything so far would give at those positions.
    virtual std::unique_ptr<DecodeState> startDecoding(int64_t batch, torch::TensorOptions opts);
    virtual torch::Tensor decode(const torch::Tensor& idx, DecodeState& state);

    torch::nn::Linear read_in{nullptr}, read_out{nullptr};
    torch::nn::Sequential read_decoder{nullptr};

private:
    int64_t m_readToken = -1;
};

using SequenceModel = std::shared_ptr<SequenceModelImpl>;

// Root-mean-square norm (Zhang & Sennrich, 2019), as mamba_ssm's default: weight only.
class RMSNormImpl : public torch::nn::Module {
public:
    explicit RMSNormImpl(int64_t dim, double eps = 1e-5);
    torch::Tensor forward(const torch::Tensor& x);  // (..., C) -> (..., C)
    torch::Tensor weight;

private:
    double m_eps;
};
TORCH_MODULE(RMSNorm);

// The output layer every family shares: registered as `lm_head` (bias-free; the caller
// initialises it) unless tied, in which case the token embedding's weight is reused and
// nothing is registered.
torch::nn::Linear registerLmHead(torch::nn::Module& model, int64_t dModel, int64_t vocab, bool tied);

// The recurrent families' layout: a backbone module holding the embedding, the layers and the final
// norm, then lm_head unless tied, registered on `model` in that order, `makeBlock` building each
// layer. With float32 storage the embedding and the head start N(0, 0.02), as the references'.
// The names are mamba_ssm's MambaLMHeadModel's (backbone.{embedding, layers, norm_f}) unless given.
struct BackboneNames {
    const char* backbone = "backbone";
    const char* embedding = "embedding";
    const char* norm = "norm_f";
};
struct SsmBackbone {
    std::shared_ptr<torch::nn::Module> backbone;
    torch::nn::Embedding embedding{nullptr};
    torch::nn::ModuleList layers{nullptr};
    RMSNorm norm_f{nullptr};
    torch::nn::Linear lm_head{nullptr};
};
SsmBackbone registerSsmBackbone(torch::nn::Module& model, int64_t vocab, int64_t dModel, bool tied, int64_t layers, double normEps,
                                const std::function<std::shared_ptr<torch::nn::Module>()>& makeBlock, const BackboneNames& names = {});
// x: (..., C) -> (..., V) through the head, or through the embedding when tied (head is null).
torch::Tensor lmLogits(const torch::Tensor& x, torch::nn::Linear head, const torch::Tensor& embedding);

}  // namespace parrot
