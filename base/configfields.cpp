#include "base/configfields.h"

#include "base/error.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace parrot {

namespace {

// One row a whole-number setting: a table written as data, longer than a screen because there
// are that many settings. A field left out of a row takes the struct's default (configfields.h):
// hi no limit, the settings form's range absent.
const std::vector<IntField>& intFields()
{
    static const std::vector<IntField> fields{
        {.key = "task.min_len", .label = "Min length", .lo = 1, .formMax = kMaxLength,
         .tip = "Smallest training difficulty (string length, entries or pairs, by task)"},
        {.key = "task.max_len", .label = "Max length", .lo = 1, .formMax = kMaxLength,
         .tip = "Largest training difficulty"},
        {.key = "task.eval_lengths", .label = "Eval lengths", .lo = 1, .hi = kMaxLength, .formMax = kMaxLength,
         .tip = "Difficulties evaluated (string lengths, entries or pairs, by task)"},
        {.key = "task.ngram", .label = "n-gram", .lo = 1, .formMax = 64,
         .tip = "n of the n-gram: the lookup key's length, or the planted duplicate's"},
        {.key = "task.answer_len", .label = "Answer letters", .lo = 0, .formMax = 10000,
         .tip = "Letters to answer after the key; 0 = the rest of the string", .zero = "0 = the rest of the string"},
        {.key = "task.dims", .label = "Dimension d", .lo = 1, .hi = 256, .formMax = 256,
         .tip = "In-context learning: dimension d of the inputs x"},
        {.key = "task.noise_vocab", .label = "Noise tokens", .lo = 0, .hi = 1024, .formMax = 1024,
         .tip = "Noisy recall: tokens the noise is drawn from, besides the alphabet"},
        {.key = "task.motif", .label = "Motif tokens", .lo = 1, .hi = 8, .formMax = 8,
         .tip = "Fuzzy recall: keys and values are 1 to this many tokens"},
        {.key = "task.copy_tokens", .label = "Tokens to copy", .lo = 1, .formMax = 4096,
         .tip = "Selective copying: letters scattered among the blanks, to copy"},
        {.key = "task.train_examples", .label = "Training set", .lo = 0, .formMax = 100000000,
         .tip = "Train on a fixed set of this many sequences (MAD's knob: 800 to 12,800); 0 draws fresh ones every batch",
         .zero = "0: fresh sequences"},
        {.key = "model.layers", .label = "Layers", .lo = 1, .hi = 64, .formMax = 64,
         .tip = "Blocks (for the hybrids: attention + Mamba pairs)"},
        {.key = "model.d_model", .label = "d_model", .lo = 1, .hi = 8192, .formMax = 8192,
         .tip = "Width of the residual stream (the LSTM's hidden size)"},
        {.key = "model.heads", .label = "Heads", .lo = 1, .formMax = 256, .tip = "Attention heads per layer"},
        {.key = "model.num_masked_heads", .label = "Masked heads", .lo = 0, .formMax = 256,
         .tip = "Hard-ALiBi: head i < this sees only the last i+1 tokens"},
        {.key = "model.d_state", .label = "d_state", .lo = 1, .hi = 256, .formMax = 256,
         .tip = "State size N per channel of Mamba and S4D layers"},
        {.key = "model.d_conv", .label = "d_conv", .lo = 1, .hi = 64, .formMax = 64,
         .tip = "Width of Mamba's causal convolution"},
        {.key = "model.short_conv", .label = "Short conv", .lo = 0, .hi = 16, .formMax = 16,
         .tip = "Transformer: a depthwise causal convolution of this width before each attention layer, as Zoology trains "
                "attention on associative recall (Mamba has its own, of width 4); 0: none"},
        {.key = "model.expand", .label = "Expand", .lo = 1, .hi = 16, .formMax = 16,
         .tip = "Mamba, Mamba-2 and S4D inner width = expand x d_model; Gated DeltaNet: a head's value width = expand x head_dim"},
        {.key = "model.head_dim", .label = "Head dim", .lo = 1, .hi = 1024, .formMax = 1024,
         .tip = "Mamba-2: channels per head; the inner width expand x d_model splits into heads of this many, each with one decay. "
                "Gated DeltaNet: a head's key width; d_model splits into heads of this many"},
        {.key = "model.n_groups", .label = "Groups", .lo = 1, .hi = 64, .formMax = 64,
         .tip = "Mamba-2: sets of B and C, each shared by an equal share of the heads"},
        {.key = "model.chunk_size", .label = "Chunk size", .lo = 1, .hi = 4096, .formMax = 4096,
         .tip = "Mamba-2 and Gated DeltaNet: tokens per block of the chunked scan (quadratic within a chunk, a state passed between chunks); "
                "the same result at any size"},
        {.key = "model.mlp_ratio", .label = "MLP ratio", .lo = 1, .hi = 16, .formMax = 16,
         .tip = "The Transformer's MLP width over d_model"},
        {.key = "model.mamba_mlp_ratio", .label = "Mamba MLP ratio", .lo = 0, .hi = 16, .formMax = 16,
         .tip = "An MLP after each Mamba mixer, this many times d_model wide; 0: none"},
        {.key = "model.dt_rank", .label = "dt rank", .lo = 0, .hi = 4096, .formMax = 4096,
         .tip = "Mamba: the rank of the step size's low-rank projection; 0 = ceil(d_model / 16), mamba_ssm's choice",
         .zero = "0 = auto"},
        {.key = "model.max_positions", .label = "Max positions", .lo = 1, .hi = 1000000, .formMax = 1000000,
         .tip = "Learned positions: the longest row"},
        {.key = "train.steps", .label = "Steps", .lo = 1, .formMax = 10000000, .tip = "Optimiser steps"},
        {.key = "train.batch_size", .label = "Batch size", .lo = 1, .hi = 65536, .formMax = 65536,
         .tip = "Rows per step"},
        {.key = "train.warmup_steps", .label = "Warm-up steps", .lo = 0, .formMax = 1000000,
         .tip = "Linear warm-up steps"},
        {.key = "train.eval_every", .label = "Eval every", .lo = 0, .formMax = 1000000,
         .tip = "Steps between accuracy evaluations; 0 = only at the end"},
        {.key = "train.eval_samples", .label = "Eval samples", .lo = 1, .formMax = 100000,
         .tip = "Examples per evaluation length during training"},
        {.key = "train.checkpoint_every", .label = "Autosave every", .lo = 0, .formMax = 1000000,
         .tip = "Steps between autosaves; 0 = only when the run stops"},
        {.key = "train.log_every", .label = "Log every", .lo = 1, .formMax = 1000000,
         .tip = "Steps between log lines"},
        {.key = "train.mechanism_every", .label = "Score heads every", .lo = 0, .formMax = 1000000,
         .tip = "Token tasks: steps between scorings of every attention head (and Mamba block's implicit attention) on a fixed "
                "probe batch, for the lookup-score timeline under the loss and the run's mechanisms.csv and snapshots; 0 = off",
         .zero = "0 = off"},
        {.key = "seed", .label = "Seed", .lo = 0, .formMax = 2147483647, .tip = "Seeds the weights and the data"},
        {.key = "train.curriculum_steps", .label = "Curriculum steps", .lo = 0, .formMax = 10000000,
         .tip = "Steps over which the curriculum grows to the whole task"},
        // Limits that depend on the task or on other settings stay with the task classes and validate():
        // vocab_size (a token task's letters; a pretrained model's text takes up to 2^24), context_len
        // (room for one example at max_len, and at most 65536 for token tasks), sparsity and
        // curriculum_dims (at most task.dims).
        {.key = "task.vocab_size", .label = "Alphabet size", .lo = 2, .hi = 1 << 24, .formMax = 1024,
         .tip = "Letters in the alphabet (the copy paper uses 26; MQAR splits them into keys and values)"},
        {.key = "task.context_len", .label = "Context length", .lo = 2, .formMax = 65536,
         .tip = "Tokens per packed training row; must hold one example at the largest difficulty", .formMin = 5},
        {.key = "task.sparsity", .label = "Sparsity", .lo = 1, .hi = 256, .formMax = 256,
         .tip = "Sparse regression: non-zero weights; sparse parity: the k coordinates multiplied"},
        {.key = "train.curriculum_dims", .label = "Curriculum dims", .lo = 0, .hi = 256, .formMax = 256,
         .tip = "In-context tasks (Garg et al. 2022): start training with x on this many coordinates and prompts of "
                "at most 2 x this + 1 examples, growing to the task's dims and max examples; 0 = no curriculum",
         .zero = "0 = no curriculum"},
    };
    return fields;
}

const std::vector<RealField>& realFields()
{
    static const std::vector<RealField> fields{
        {.key = "task.outlier_prob", .label = "Outlier probability", .lo = 0, .hi = 1, .hiOpen = true,
         .expected = "0 <= p < 1", .formMax = 0.99, .formStep = 0.05, .decimals = 2,
         .tip = "Outlier regressions: the probability that a pair is an outlier (not scored)"},
        {.key = "task.noise_fraction", .label = "Noise share", .lo = 0, .hi = 1, .hiOpen = true,
         .expected = "0 <= noise_fraction < 1", .formMax = 0.95, .formStep = 0.1, .decimals = 2,
         .tip = "Noisy recall: the share of pair slots filled with noise tokens (MAD varies 0.2 to 0.8)"},
        {.key = "model.rotary_fraction", .label = "Rotary fraction", .lo = 0, .hi = 1, .loOpen = true,
         .expected = "0 < fraction <= 1", .tip = "RoPE: the share of each head's dimensions that rotate"},
        {.key = "model.layer_norm_eps", .label = "LayerNorm epsilon", .lo = 0, .hi = 1, .loOpen = true,
         .hiOpen = true, .expected = "0 < eps < 1", .tip = "Added to the variance in LayerNorm"},
        {.key = "model.rotary_base", .label = "Rotary base", .lo = 1, .hi = 1e9, .loOpen = true,
         .expected = "1 < base <= 1e9", .tip = "RoPE: the base of the rotation frequencies"},
        {.key = "train.lr", .label = "Learning rate", .lo = 0, .loOpen = true, .expected = "a positive number",
         .formMin = 0.00001, .formMax = 10.0, .formStep = 0.0005, .decimals = 5,
         .tip = "AdamW's peak learning rate (after warm-up, before the schedule's decay)"},
        {.key = "train.min_lr_ratio", .label = "Final learning rate", .lo = 0, .hi = 1, .expected = "0..1",
         .tip = "The schedule's last learning rate as a share of the peak"},
        {.key = "train.weight_decay", .label = "Weight decay", .lo = 0, .expected = ">= 0", .formMax = 10,
         .formStep = 0.01, .decimals = 3, .tip = "AdamW's decoupled weight decay"},
        {.key = "train.beta1", .label = "Adam beta1", .lo = 0, .hi = 1, .hiOpen = true, .expected = "0 <= beta1 < 1",
         .tip = "AdamW's first-moment decay"},
        {.key = "train.beta2", .label = "Adam beta2", .lo = 0, .hi = 1, .hiOpen = true, .expected = "0 <= beta2 < 1",
         .tip = "AdamW's second-moment decay"},
        {.key = "train.grad_clip", .label = "Gradient clip", .lo = 0, .expected = ">= 0", .formMax = 1000,
         .formStep = 1, .decimals = 2, .tip = "Global gradient-norm clip; 0 disables"},
        {.key = "train.target_accuracy", .label = "Stop at accuracy", .lo = 0, .hi = 1, .expected = "0..1 (0 = off)",
         .tip = "Stop training once the answer accuracy at the largest training difficulty reaches this; 0 = off"},
    };
    return fields;
}

}  // namespace

const std::vector<IntField>& intFieldTable() { return intFields(); }
const std::vector<RealField>& realFieldTable() { return realFields(); }

const RealField& realField(const char* key)
{
    for (const RealField& f : realFields())
        if (std::strcmp(f.key, key) == 0) return f;
    throw std::logic_error(std::string("realField: no setting ") + key);
}

QString rangeProblem(const RealField& f, double value)
{
    const bool ok = std::isfinite(value) && (f.loOpen ? value > f.lo : value >= f.lo) && (f.hiOpen ? value < f.hi : value <= f.hi);
    return ok ? QString() : QString("%1: expected %2, got %3").arg(f.key, f.expected).arg(value);
}

void throwIfOutOfRange(const char* key, long long value)
{
    const QString problem = rangeProblem(intField(key), value);
    if (!problem.isEmpty()) throw Error(problem);
}

void throwIfOutOfRealRange(const char* key, double value)
{
    const QString problem = rangeProblem(realField(key), value);
    if (!problem.isEmpty()) throw Error(problem);
}

const IntField& intField(const char* key)
{
    for (const IntField& f : intFields())
        if (std::strcmp(f.key, key) == 0) return f;
    throw std::logic_error(std::string("intField: no setting ") + key);
}

QString rangeProblem(const IntField& f, long long value)
{
    if (value >= f.lo && value <= f.hi) return {};
    const QString zero = *f.zero ? QString(" (%1)").arg(f.zero) : QString();
    const QString range = f.hi == kUnbounded ? QString(">= %1").arg(f.lo) : QString("%1..%2").arg(f.lo).arg(f.hi);
    return QString("%1: expected %2%3, got %4").arg(f.key, range, zero).arg(value);
}

}  // namespace parrot
