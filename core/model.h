// The core's facade for one model: plain value types in and out, no torch headers,
// so the UI and the command line can hold a model without compiling LibTorch.
#pragma once

#include "base/ablation.h"
#include "base/config.h"
#include "base/types.h"
#include "base/weightdtype.h"

#include <QString>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace parrot {

class Model {
public:
    Model() = default;  // null: no model yet

    // A freshly initialised model for the experiment, seeded by config.seed.
    static Model create(const ExperimentConfig& config);
    // Why a model of this config would not fit in `availableBytes` of memory (create, load and
    // resume refuse it before building anything), naming both figures; "" when it fits.
    // `weightBytes`: 4 for float32 weights, 2 for a pretrained model held in 16 bits.
    static QString memoryProblem(const ExperimentConfig& config, double availableBytes, int weightBytes = 4);
    // Loads a checkpoint written by save(), another program's checkpoint (io/importers.h) or a
    // HuggingFace model folder. Throws parrot::Error naming the file and the problem (malformed
    // file, missing or extra tensors, shapes that do not match the config, too little memory).
    // `progress(done, total)` is called after each tensor is copied in; returning false stops
    // the load with an Error("loading cancelled").
    // `dtype`: how a pretrained model's matrices are held (base/weightdtype.h); Auto keeps an
    // F16 or BF16 file's 16 bits where this machine runs them at least as fast, else float32.
    static Model load(const QString& path, const std::function<bool(int done, int total)>& progress = {},
                      WeightDtype dtype = weightDtypeChoice());
    // How this model's large matrices are held: "float32", "float16" or "bfloat16".
    QString weightDtype() const;
    // Whether WeightDtype::Auto keeps a 16-bit file's matrices in 16 bits on the chosen device
    // (the CPU has what the 16-bit kernel needs: AVX2, FMA and F16C).
    static bool autoKeepsSixteenBits();

    // Writes a safetensors checkpoint atomically; the configs, step and app version go
    // into its __metadata__. Throws parrot::Error when the file cannot be written.
    void save(const QString& path) const;

    // A copy of this model (its weights and step) to train further under `config`: the task and
    // training settings are config's, the architecture must be this model's. Throws parrot::Error
    // naming what differs when config.model is another model or the task does not fit the weights.
    Model continuedAs(const ExperimentConfig& config) const;

    bool isNull() const { return !d; }
    const ExperimentConfig& config() const;
    long long step() const;
    long long parameterCount() const;
    ModelSize size() const;
    // Builds the model a config describes (on the CPU) just to count it. Throws parrot::Error
    // for an invalid config or one larger than `maxParameters` (estimated before building).
    static ModelSize measure(const ExperimentConfig& config, double maxParameters = 2e7);
    // The config with model.d_model chosen so the parameter count is as near `targetParameters`
    // as the width's step allows (a multiple of the heads where there is attention, else of 8;
    // every other option kept), for comparing families at matched size. Throws parrot::Error
    // for an invalid config or a target no width between one step and 4096 comes near.
    static ExperimentConfig matchParameters(const ExperimentConfig& config, long long targetParameters);
    // The maxParameters matchParameters() gives measure() for a target: models up to three times
    // it (at least measure()'s usual 20M) are built to be counted.
    static double countingLimit(long long targetParameters) { return std::max(2e7, 3.0 * double(targetParameters)); }
    QString summary() const;  // one line: family, positions, size, parameters, step

    // Logits for a batch of token rows (batch x time, row-major): batch x time x vocab.
    std::vector<float> logits(const std::vector<int>& tokens, int batch, int time) const;
    // The same with attention heads switched off (base/ablation.h); the weights are untouched.
    // Throws parrot::Error for a model without attention heads or a head it does not have.
    std::vector<float> logits(const std::vector<int>& tokens, int batch, int time, const HeadAblation& ablation) const;
    // Why this model cannot run `ablation` ("" when it can): not a Transformer, or no such head.
    QString ablationProblem(const HeadAblation& ablation) const;
    // Why this model cannot run `shrink` (base/ablation.h, "" when it can): no state-space layers
    // (a Transformer, an LSTM), or more state dimensions than it has.
    QString shrinkProblem(const StateShrink& shrink) const;
    // Its state-space layers: the channels of each, d_state, and the other floats a fixed state
    // carries (Mamba's convolution window); `grows` when attention's KV cache is part of it.
    struct StateLayout {
        std::vector<long long> channels;  // per SSM layer
        int dState = 0;
        long long otherFloats = 0;
        bool grows = false;
    };
    StateLayout stateLayout() const;
    // The bits of the fixed state under `shrink`: the SSM state at 32 bits a float (or `bits`
    // an entry plus one 32-bit scale per channel), the convolution window at 32. 0 for a model
    // whose state grows with the context (no fixed bound).
    double stateBits(const StateShrink& shrink = {}) const;
    // The loss (negative log-likelihood, nats) of each token after those before it in one row:
    // tokens.size() - 1 values; their mean is the row's language-modelling loss.
    std::vector<float> tokenLosses(const std::vector<int>& tokens) const;
    // Attention weights of every layer and head for one row of tokens.
    AttentionMaps attention(const std::vector<int>& tokens) const;
    // Everything the model exposes about one row of tokens: attention maps, state norms and
    // step sizes per block (see ModelProbes). Throws parrot::Error for ids outside the vocabulary.
    // `keepGoing` is polled during the slow parts (Mamba's implicit attention); false throws
    // parrot::Error("cancelled").
    ModelProbes probe(const std::vector<int>& tokens, const std::function<bool()>& keepGoing = {}) const;

    // Teacher-forced accuracy at each length (what a length counts depends on the task) on
    // `samples` fresh examples from a generator seeded by `seed` and the length (the same
    // examples for the same seed). In-context-learning tasks: prompts of the longest length,
    // scored after every number of examples, with the baselines (LengthCurve::metric says which).
    // `keepGoing(done, total)` is polled between batches; when it returns false the evaluation
    // stops and returns what it has.
    LengthCurve evaluate(const std::vector<int>& lengths, int samples, unsigned long long seed,
                         const std::function<bool(int done, int total)>& keepGoing = {}) const;
    // The same on another token task that reads this model's vocabulary (a copy model on
    // copy_dup_ngram, say). Throws parrot::Error naming what does not fit.
    LengthCurve evaluate(const TaskConfig& task, const std::vector<int>& lengths, int samples, unsigned long long seed,
                         const std::function<bool(int done, int total)>& keepGoing = {}) const;

    // The greedy continuation of a row of tokens: up to `maxNewTokens` tokens, each the most
    // likely next one, stopping after `stopToken` (>= 0, e.g. <|endoftext|>). Uses the family's
    // KV cache or recurrent state where it has one. Throws parrot::Error for ids outside the
    // vocabulary or a prompt longer than the model's positions allow.
    std::vector<int> generate(const std::vector<int>& prompt, int maxNewTokens, int stopToken = -1,
                              const std::function<bool(int done, int total)>& keepGoing = {}) const;
    // The same, also stopping when `done(the tokens generated so far)` says so, and with
    // `suppressFirst` (>= 0) never the first token (as HuggingFace's begin_suppress_tokens).
    std::vector<int> generateUntil(const std::vector<int>& prompt, int maxNewTokens, int stopToken,
                                   const std::function<bool(const std::vector<int>& generated)>& done, int suppressFirst = -1) const;

    struct Impl;  // the torch side (modelimpl.h)

private:
    std::vector<int> generateWith(const std::vector<int>& prompt, int maxNewTokens, int stopToken,
                                  const std::function<bool(int, int)>& keepGoing,
                                  const std::function<bool(const std::vector<int>&)>& done, int suppressFirst) const;
    friend struct ModelAccess;  // the trainer's and the benchmarks' way in (modelimpl.h)
    std::shared_ptr<Impl> d;    // shared: copies of a Model are handles to the same weights
};

// Whether the factory (core/models/factory.cpp) builds the catalogue's family `id`.
bool canBuild(const QString& family);

// While alive, everything `model` runs on this thread (logits, probe, generate) has the
// ablation's heads switched off; the weights are untouched. Throws parrot::Error with
// Model::ablationProblem's reason when the model cannot.
// While alive, everything `model` runs on this thread has its state shrunk (base/ablation.h);
// the weights are untouched. Throws parrot::Error with Model::shrinkProblem's reason.
class StateShrunk {
public:
    StateShrunk(const Model& model, const StateShrink& shrink);
    ~StateShrunk();
    StateShrunk(const StateShrunk&) = delete;
    StateShrunk& operator=(const StateShrunk&) = delete;

private:
    StateShrink m_shrink;
    const StateShrink* m_previous = nullptr;
};

class HeadsOff {
public:
    HeadsOff(const Model& model, const HeadAblation& ablation);
    ~HeadsOff();
    HeadsOff(const HeadsOff&) = delete;
    HeadsOff& operator=(const HeadsOff&) = delete;

private:
    HeadAblation m_ablation;
    const HeadAblation* m_previous = nullptr;
};

}  // namespace parrot
