// Experiment configuration: plain structs, saved as JSON in every checkpoint and run folder.
// Parsing is strict: unknown keys and wrong types are errors that name the dotted key.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

// The copy task of Jelassi et al. (2024): `$ s | s .` with s uniform i.i.d. over V letters.
struct TaskConfig {
    // Tokens: "copy" | "prefix_ngram" | "suffix_ngram" | "copy_dup_ngram" | "text_copy" | "phonebook" | "mqar"
    // (tasks/tokentask.h), "mad_recall" | "mad_fuzzy_recall" | "mad_noisy_recall" | "mad_selective_copy" |
    // "mad_memorization" | "mad_compression" (tasks/madtasks.h); vectors, in-context learning: "linear_regression" | "sparse_linear_regression" |
    // "relu_regression" | "decision_tree" | "orthogonal_outlier_regression" | "many_outlier_regression" |
    // "sparse_parity" | "vector_mqar" (tasks/icltask.h). `parrotscope tasks` describes them all.
    QString kind = "copy";
    int vocabSize = 26;             // V letters; the paper uses the 26 lower-case letters
    int minLen = 1;                 // training string lengths are uniform in [minLen, maxLen]
    int maxLen = 20;                // the paper's short-string regime; 20 trains in minutes on 2 cores
    int contextLen = 64;            // packed row length; 64 holds a length-20 example 2.9x (128 costs 3.5x: docs/CONTRIBUTING.md)
    std::vector<int> evalLengths = {5, 10, 15, 20, 25, 30, 40};  // up to 2x the training range; max_len is always added
    int evalSamples = 128;          // strings per length: a 95% CI of about +-8 points at 50%
    int ngram = 3;                  // n-gram lookup and duplicated-n-gram copy: n
    int answerLen = 0;              // n-gram lookup: letters to answer after the key; 0 = the rest of the string
    bool shuffleWords = false;      // text copy: shuffle the words of the span
    int dims = 8;                   // in-context learning: dimension d of x
    int sparsity = 3;               // sparse regression: non-zeros of w; sparse parity: k
    double outlierProb = 0.5;       // outlier regressions: probability that a pair is an outlier
    // MAD (Poli et al., 2024; tasks/madtasks.h):
    double noiseFraction = 0;       // noisy recall: share of the pair slots filled with noise tokens; compression: of the letters
    int noiseVocab = 0;             // noisy recall: noise tokens, besides the vocab_size letters
    int motif = 3;                  // fuzzy recall: keys and values of 1..motif tokens
    int copyTokens = 16;            // selective copying: letters to copy
    int trainExamples = 0;          // any token task: train on a fixed set of this many examples (0: fresh each batch)
    QString evalKind;               // evaluate on this token task instead (a probe with the same vocabulary,
                                    // e.g. copy_dup_ngram for a copy model); empty: kind
};

// The task evaluations run on: `t` with eval_kind in place of kind when it is set.
TaskConfig evaluationTask(const TaskConfig& t);

// Which sequence model, and its options. Options that a family does not use are ignored by it.
struct ModelConfig {
    // "transformer" | "mamba" | "mamba2" | "gated_deltanet" | "lstm" | "s4d" | "s4_mamba" | "hybrid" | "mambaformer"
    QString kind = "transformer";
    // Transformer only: "nope" | "learned" | "rope" | "alibi" | "hard_alibi". Hard-ALiBi is what
    // copies to length 20 in minutes (docs/CONTRIBUTING.md, measured facts). The hybrids fix theirs as in Park et al.
    QString positions = "hard_alibi";
    int layers = 2;                    // the copy paper's two-layer copier needs two layers
    int dModel = 128;                  // 64 with 8 heads plateaus lower (measured)
    int heads = 8;
    int numMaskedHeads = 4;            // Hard-ALiBi: heads 0..3 see windows of 1..4 tokens, the rest NoPE
    int mlpRatio = 4;                  // Transformer MLP hidden = mlpRatio * dModel, as in GPT-2
    // RoPE: the share of each head's dims rotated (GPT-NeoX rotary_pct). A model trained here rotates
    // the whole head, as most RoPE models trained from scratch do: with Pythia's 0.25 on heads of 16
    // dims only 4 dims carry position, and a 2-layer model on associative recall formed its lookup
    // head thousands of steps later (measured: docs/CONTRIBUTING.md). Imported models keep their own.
    double rotaryFraction = 1.0;
    int maxPositions = 1024;           // learned absolute positions: the longest sequence the table covers
    int dState = 16;                   // Mamba / S4D state size N per channel (mamba_ssm default)
    int dConv = 4;                     // Mamba depthwise causal convolution width (mamba_ssm default)
    int expand = 2;                    // Mamba d_inner = expand * d_model (mamba_ssm default)
    int mambaMlpRatio = 0;             // Mamba blocks: an MLP after each mixer (0 = none, as in the papers)
    // Mamba-2: heads of head_dim channels (heads = expand * d_model / head_dim), each with one scalar
    // decay and a head_dim x d_state state; n_groups sets of B and C shared by the heads (mamba_ssm's
    // ngroups); the scan computed in chunks of chunk_size tokens (the result does not depend on it).
    // Gated DeltaNet: heads of head_dim key channels (heads = d_model / head_dim), each with a value
    // width of expand x head_dim and a head_dim x (expand x head_dim) state; chunk_size as Mamba-2's.
    int headDim = 16;
    int nGroups = 1;
    int chunkSize = 64;
    // Gated DeltaNet: the decay gate; off, the plain delta rule (DeltaNet), whose state keeps what a
    // key holds until a write under a similar key replaces it.
    bool forgetGate = true;
    bool tieEmbeddings = false;        // untied like Pythia; tying saves V*C parameters
    // Transformer, GPT-NeoX details (set by the GPT-NeoX importer; the defaults are the app's own):
    bool parallelResidual = false;     // x + attn(ln1(x)) + mlp(ln2(x)) (GPT-NeoX / Pythia) instead of sequential
    double layerNormEps = 1e-5;        // every LayerNorm's epsilon (GPT-NeoX layer_norm_eps)
    double rotaryBase = 10000;         // RoPE: the base of the inverse frequencies (GPT-NeoX rotary_emb_base)
    // The copy paper's own NoPE / ALiBi / Hard-ALiBi classes append each head's last
    // (1 - rotary_fraction) query and key dims a second time before the dot product, so those
    // dims count twice in the attention score; its checkpoints only reproduce with this set.
    bool repeatPassDims = false;
    // Transformer: the width of a depthwise causal convolution on each attention layer's input, as
    // Zoology trains attention on associative recall (Arora et al. 2023: every model there has one;
    // Mamba has its own, model.d_conv). It hands each position its previous tokens, so a lookup head
    // forms in hundreds of steps instead of after a long plateau (measured: docs/CONTRIBUTING.md). 0 = none.
    int shortConv = 0;
    // Mamba's selective mixers (mamba, hybrid, mambaformer): "default" (mamba_ssm's) or "mimetic"
    // (Trockman et al. 2024: start the scan close to linear attention; models/mamba.h says which
    // of their choices are implemented).
    QString init = "default";
    // Mamba's selective mixers, as HuggingFace's MambaConfig can set them (time_step_rank, use_bias,
    // use_conv_bias); the defaults are mamba_ssm's and every model trained here keeps them.
    int dtRank = 0;         // the rank of delta's projection; 0 = ceil(d_model / 16)
    bool projBias = false;  // in_proj and out_proj with biases
    bool convBias = true;   // the convolution with a bias
};

struct TrainConfig {
    int steps = 1000;              // measured: 96.5% at length 20 by step 900 with cosine decay over 1,000 steps
    int batchSize = 32;
    double lr = 2e-3;              // 1e-3 is too low for these small Transformers (measured: docs/CONTRIBUTING.md)
    QString schedule = "cosine";   // "cosine" | "linear" | "constant"; cosine decay mattered most
    double minLrRatio = 0.1;       // decay to 10% of the peak
    int warmupSteps = 100;
    double weightDecay = 0.1;      // AdamW, on weight matrices only
    double beta1 = 0.9;
    double beta2 = 0.98;           // a shorter second-moment memory steadies small-batch Transformers
    double gradClip = 1.0;         // global norm; 0 disables
    int evalEvery = 200;           // steps between accuracy-vs-length evaluations; 0 = only at the end
    int evalSamples = 64;          // strings per length during training (the final eval uses task.eval_samples)
    int checkpointEvery = 500;     // steps between autosaves; 0 = only when the run stops
    int logEvery = 10;             // steps between metrics.csv rows
    // Token tasks: steps between scorings of every attention head (and Mamba's implicit attention)
    // on a fixed probe batch, for mechanisms.csv and the Train tab's timeline (0 = off). 20 draws a
    // 1,000-step run's plateau and jump with 50 points and costs about 1% of the training time
    // (bench_models --mechanisms).
    int mechanismEvery = 20;
    double targetAccuracy = 0;     // token tasks: stop at the first periodic evaluation whose string accuracy
                                   // at task.max_len reaches this (0 = train every step)
    // In-context tasks: a curriculum (Garg et al. 2022; Park et al. 2024 use one). Training starts
    // with x on its first curriculum_dims coordinates (the rest zero) and prompts of at most
    // 2 * curriculum_dims + 1 pairs, both growing evenly to task.dims and task.max_len over
    // curriculum_steps steps; evaluation always uses the whole task. 0 = no curriculum.
    int curriculumDims = 0;
    int curriculumSteps = 0;
    // "fp32" | "bf16": bf16 runs the forward and backward under Torch's autocast (matrix products
    // in bfloat16; the selective scan's state, the norms and the loss stay float32); the weights,
    // AdamW's moments and every checkpoint stay float32. bf16 has float32's exponent range, so no
    // loss scale is needed.
    QString precision = "fp32";
};

struct ExperimentConfig {
    QString name = "copy-hard-alibi";
    QString description;
    qint64 seed = 1;
    TaskConfig task;
    ModelConfig model;
    TrainConfig train;
};

// Conversion. fromJson starts from the defaults, so a partial object is accepted;
// unknown keys, wrong types and invalid values throw parrot::Error naming the key.
QJsonObject toJson(const ExperimentConfig& c);
ExperimentConfig experimentFromJson(const QJsonObject& o, const QString& origin = {});

// Checks value ranges and cross-field constraints; returns one message per problem.
QStringList validate(const ExperimentConfig& c);

// Applies `dotted.key=value` to a config, keeping types: ints stay ints, lists are
// comma-separated or JSON arrays. Throws parrot::Error naming the key on any mismatch.
// applyOverride does not validate (a later override may fix an intermediate state);
// applyOverrides applies them in order and then validates the result.
void applyOverride(ExperimentConfig& c, const QString& assignment);
void applyOverrides(ExperimentConfig& c, const QStringList& assignments);

// A JSON value as --set takes it: strings bare, numbers and booleans as text, lists comma-separated.
QString overrideText(const QJsonValue& v);

// The --set assignments that turn `from` into `to` (name and description aside), in field order:
// what a checkpoint or a run changed of the preset it was made from.
QStringList overridesBetween(const ExperimentConfig& from, const ExperimentConfig& to);

// A preset's or sweep's description as it holds after `changes` (--set assignments): its outcome
// (from "Measured" or "Calibrated" on) was measured with its own settings, so a note naming the
// changes takes that part's place. The description itself when nothing changed.
QString describeChanged(const QString& description, const QStringList& changes);

// Reads a config file (JSON). Errors name the file.
ExperimentConfig loadConfigFile(const QString& path);

// The lengths a run evaluates: task.eval_lengths with task.max_len added if missing, sorted
// and unique, so the accuracy at the longest training length is always measured.
std::vector<int> evaluationLengths(const TaskConfig& t);

// One line for people: "Transformer (Hard-ALiBi, 4 masked heads), 2 layers, d_model 128, 8 heads".
QString describeModel(const ModelConfig& m);
// One line for people: "Copy (string length 1-8)".
QString describeTask(const TaskConfig& t);

// Parses "10, 20, 40" (commas and/or spaces) into lengths in 1..10000. Throws parrot::Error
// naming `field` and the offending entry.
std::vector<int> parseLengthList(const QString& text, const QString& field);

// Tokens per example of the copy task: `$`, s, `|`, s, `.`.

}  // namespace parrot
