// Plain value snapshots that cross from the core to the UI and the command line.
// No torch here: the UI never holds a tensor (docs/ARCHITECTURE.md).
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace parrot {

// Accuracy against string length, from teacher-forced argmax over the answer.
// Sizes the paper's bound talks about: parameters, and the state carried from token to token
// (fixed for recurrent models; growing with the context for attention's KV cache).
struct ModelSize {
    long long parameters = 0;
    long long stateFloats = 0;          // fixed-size recurrent state
    long long stateFloatsPerToken = 0;  // KV cache added per token of context
    QString describe() const;           // "404,480 parameters; state: 512 floats per token of context (KV cache)"
};

struct LengthCurve {
    std::vector<int> lengths;
    std::vector<double> stringAccuracy;  // fraction of strings copied exactly
    std::vector<double> charAccuracy;    // fraction of answer characters right
    std::vector<double> stringStdErr;    // binomial standard errors of the two
    std::vector<double> charStdErr;
    // In-context learning: "error" curves (regression: squared error / d against the number of
    // examples seen, `lengths` 0, 1, 2, ...) carry `error` and the baselines' errors instead of
    // accuracies; "accuracy" curves (parity, vector MQAR, every token task) the accuracies.
    QString metric = "accuracy";
    std::vector<double> error, errorStdErr;
    std::vector<QString> baselineNames;
    std::vector<std::vector<double>> baselineError;  // per baseline, per point
    bool isError() const { return metric == "error"; }
    // The curve's own measure at point i: error for "error" curves, answer accuracy otherwise.
    double valueAt(size_t i) const { return isError() ? error[i] : stringAccuracy[i]; }
    // One line for logs: "L5 98.0%  L10 91.2%" or "error 1.02 -> 0.04 after 23 examples (least squares 0.00)".
    QString summary() const;
    int samples = 0;                     // examples per length (what "length" counts depends on the task)
    long long step = 0;                  // training step of the weights evaluated
    bool empty() const { return lengths.empty(); }
    double stringAccuracyAt(int length, double fallback = -1) const;
    // Appends a token-task point: `rowsRight` of `samples` strings right, `right` of `answers`
    // answer tokens right, with binomial standard errors (answers within a row are correlated:
    // the char one is optimistic).
    void addAccuracy(int length, long long rowsRight, int samples, long long right, long long answers);
};

struct TrainProgress {
    long long step = 0;
    long long totalSteps = 0;
    long long examplesSeen = 0;
    double loss = 0;           // mean over the masked answer tokens of this step's batch
    double lr = 0;
    double tokensPerSecond = 0;
    double elapsedSeconds = 0; // wall time spent in training steps (evaluations, checkpoints and pauses excluded)
    double wallSeconds = 0;    // wall time since the run started, evaluations and checkpoints included, pauses excluded
    double etaSeconds = 0;
    bool paused = false;
    // The loss of every step since the previous report, the last one at `step`: a live plot
    // draws every step however rarely it is told.
    std::vector<double> stepLosses;
};

struct TrainOutcome {
    enum class Status { Finished, Cancelled, Diverged, Failed };
    Status status = Status::Finished;
    long long step = 0;
    QString message;      // for the user: what happened and what was kept
    QString checkpoint;   // the last good checkpoint written, if any
    LengthCurve finalCurve;
    // The held-out check a learning rate is chosen by (sweep --thorough): fresh prompts at the
    // longest training length, drawn apart from the training data and the test prompts.
    LengthCurve validation;
    bool targetReached = false;  // stopped early at train.target_accuracy
};

// Attention weights of one input: layers x heads x T x T, row-major.
struct AttentionMaps {
    int layers = 0;
    int heads = 0;
    int length = 0;
    std::vector<float> weights;
    std::vector<QString> tokens;
    float at(int layer, int head, int query, int key) const
    {
        return weights[((size_t(layer) * heads + head) * length + query) * length + key];
    }
};

// One probed quantity of one block over the positions of an input: rows x cols, row-major.
struct ProbeMatrix {
    int layer = 0;  // index of the block in the model (0 = the first)
    int rows = 0;   // positions of the input
    int cols = 0;   // channels
    std::vector<float> values;
    float at(int row, int col) const { return values[size_t(row) * cols + col]; }
};

// Everything a model exposes about one input, for the look-inside views. Each family fills
// what it has: attention for Transformer blocks, state norms for Mamba, S4D, LSTM blocks
// (LSTM: |h| then |c| per channel, 2 x hidden columns), Mamba's step sizes.
struct ModelProbes {
    std::vector<QString> tokens;
    AttentionMaps attention;           // the attention blocks only, in order
    // attention holds a recurrent layer's effective attention (Mamba-2: each head's |M| of y = M x;
    // Gated DeltaNet: of o = M v; each row scaled to sum to one), not a softmax's weights
    bool effectiveAttention = false;
    std::vector<int> attentionLayers;  // block index of each of attention's layers
    std::vector<ProbeMatrix> stateNorm;  // T x channels: per-channel norm of the hidden state
    std::vector<ProbeMatrix> delta;      // T x d_inner: Mamba's step size after softplus
    // Mamba's implicit attention (selective scan blocks): one "head" per block, the scan's linear
    // map from input position s to output position t, |alpha[d,t,s]| averaged over the channels d.
    AttentionMaps implicitAttention;
    std::vector<int> implicitLayers;  // block index of each
    std::vector<int> predictions;     // the most likely next token after each position (argmax of its logits)
};

// One head's mechanism scores on a run's fixed probe batch (analysis/mechanisms.h): an attention
// head, or the implicit attention of a selective-scan block (Mamba's scan unrolled, one per block).
struct HeadScore {
    int layer = 0;          // the block's index in the model
    int head = 0;           // the head within its layer; 0 for implicit attention
    bool implicit = false;  // implicit attention, else an attention head
    // attention on the token after the earlier occurrence of the current n-gram, n = 1, 2, 3
    std::array<double, 3> lookup{};
    double previousToken = 0;  // attention on the token before the query
    QString label;             // the head's kind as the Explore tab labels it: "n-gram lookup (order 2)", "previous-token", ...
    double bestLookup() const { return std::max({lookup[0], lookup[1], lookup[2]}); }
    QString name() const;      // as the Explore tab names it: "L1 H3", "block 0 (implicit)"
};

// Every head's scores at one training step, in the model's order (attention heads layer by layer,
// then the implicit attention of each selective-scan block).
struct MechanismScores {
    long long step = 0;
    std::vector<HeadScore> heads;
    double bestLookup() const;  // the highest lookup score of any head at any n; 0 without heads
};

QString statusName(TrainOutcome::Status s);

// The one JSON form of a LengthCurve: run folders' curves.json, `eval --json`. Keys: step, samples,
// metric, lengths, then string_accuracy, char_accuracy and their _stderr, or error, error_stderr
// and baselines (name -> values). Reading takes what older run folders wrote (no
// char_accuracy_stderr); nullopt for a curve whose values do not match its lengths.
QJsonObject lengthCurveJson(const LengthCurve& c);
std::optional<LengthCurve> lengthCurveFromJson(const QJsonObject& o);

// The binomial standard error of a fraction p of n trials, sqrt(p (1 - p) / n).
double binomialStdErr(double p, double n);

}  // namespace parrot

Q_DECLARE_METATYPE(parrot::LengthCurve)
Q_DECLARE_METATYPE(parrot::TrainProgress)
Q_DECLARE_METATYPE(parrot::TrainOutcome)
Q_DECLARE_METATYPE(parrot::MechanismScores)
