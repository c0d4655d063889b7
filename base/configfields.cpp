#include "base/configfields.h"

#include "base/error.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace parrot {

namespace {

const std::vector<IntField>& intFields()
{
    static const std::vector<IntField> fields{
        {"task.min_len", "Min length", 1, kUnbounded, kMaxLength, "Smallest training difficulty (string length, entries or pairs, by task)"},
        {"task.max_len", "Max length", 1, kUnbounded, kMaxLength, "Largest training difficulty"},
        {"task.eval_lengths", "Eval lengths", 1, kMaxLength, kMaxLength, "Difficulties evaluated (string lengths, entries or pairs, by task)"},
        {"task.ngram", "n-gram", 1, kUnbounded, 64, "n of the n-gram: the lookup key's length, or the planted duplicate's"},
        {"task.answer_len", "Answer letters", 0, kUnbounded, 10000, "Letters to answer after the key; 0 = the rest of the string",
         "0 = the rest of the string"},
        {"task.dims", "Dimension d", 1, 256, 256, "In-context learning: dimension d of the inputs x"},
        {"task.noise_vocab", "Noise tokens", 0, 1024, 1024, "Noisy recall: tokens the noise is drawn from, besides the alphabet"},
        {"task.motif", "Motif tokens", 1, 8, 8, "Fuzzy recall: keys and values are 1 to this many tokens"},
        {"task.copy_tokens", "Tokens to copy", 1, kUnbounded, 4096, "Selective copying: letters scattered among the blanks, to copy"},
        {"task.train_examples", "Training set", 0, kUnbounded, 100000000,
         "Train on a fixed set of this many sequences (MAD's knob: 800 to 12,800); 0 draws fresh ones every batch", "0: fresh sequences"},
        {"model.layers", "Layers", 1, 64, 64, "Blocks (for the hybrids: attention + Mamba pairs)"},
        {"model.d_model", "d_model", 1, 8192, 8192, "Width of the residual stream (the LSTM's hidden size)"},
        {"model.heads", "Heads", 1, kUnbounded, 256, "Attention heads per layer"},
        {"model.num_masked_heads", "Masked heads", 0, kUnbounded, 256, "Hard-ALiBi: head i < this sees only the last i+1 tokens"},
        {"model.d_state", "d_state", 1, 256, 256, "State size N per channel of Mamba and S4D layers"},
        {"model.d_conv", "d_conv", 1, 64, 64, "Width of Mamba's causal convolution"},
        {"model.short_conv", "Short conv", 0, 16, 16,
         "Transformer: a depthwise causal convolution of this width before each attention layer, as Zoology trains "
         "attention on associative recall (Mamba has its own, of width 4); 0: none"},
        {"model.expand", "Expand", 1, 16, 16,
         "Mamba, Mamba-2 and S4D inner width = expand x d_model; Gated DeltaNet: a head's value width = expand x head_dim"},
        {"model.head_dim", "Head dim", 1, 1024, 1024,
         "Mamba-2: channels per head; the inner width expand x d_model splits into heads of this many, each with one decay. "
         "Gated DeltaNet: a head's key width; d_model splits into heads of this many"},
        {"model.n_groups", "Groups", 1, 64, 64, "Mamba-2: sets of B and C, each shared by an equal share of the heads"},
        {"model.chunk_size", "Chunk size", 1, 4096, 4096,
         "Mamba-2 and Gated DeltaNet: tokens per block of the chunked scan (quadratic within a chunk, a state passed between chunks); "
         "the same result at any size"},
        {"model.mlp_ratio", "MLP ratio", 1, 16, 16, "The Transformer's MLP width over d_model"},
        {"model.mamba_mlp_ratio", "Mamba MLP ratio", 0, 16, 16, "An MLP after each Mamba mixer, this many times d_model wide; 0: none"},
        {"model.dt_rank", "dt rank", 0, 4096, 4096,
         "Mamba: the rank of the step size's low-rank projection; 0 = ceil(d_model / 16), mamba_ssm's choice", "0 = auto"},
        {"model.max_positions", "Max positions", 1, 1000000, 1000000, "Learned positions: the longest row"},
        {"train.steps", "Steps", 1, kUnbounded, 10000000, "Optimiser steps"},
        {"train.batch_size", "Batch size", 1, 65536, 65536, "Rows per step"},
        {"train.warmup_steps", "Warm-up steps", 0, kUnbounded, 1000000, "Linear warm-up steps"},
        {"train.eval_every", "Eval every", 0, kUnbounded, 1000000, "Steps between accuracy evaluations; 0 = only at the end"},
        {"train.eval_samples", "Eval samples", 1, kUnbounded, 100000, "Examples per evaluation length during training"},
        {"train.checkpoint_every", "Autosave every", 0, kUnbounded, 1000000, "Steps between autosaves; 0 = only when the run stops"},
        {"train.log_every", "Log every", 1, kUnbounded, 1000000, "Steps between log lines"},
        {"train.mechanism_every", "Score heads every", 0, kUnbounded, 1000000,
         "Token tasks: steps between scorings of every attention head (and Mamba block's implicit attention) on a fixed "
         "probe batch, for the lookup-score timeline under the loss and the run's mechanisms.csv and snapshots; 0 = off",
         "0 = off"},
        {"seed", "Seed", 0, kUnbounded, 2147483647, "Seeds the weights and the data"},
        {"train.curriculum_steps", "Curriculum steps", 0, kUnbounded, 10000000, "Steps over which the curriculum grows to the whole task"},
        // Limits that depend on the task or on other settings stay with the task classes and validate():
        // vocab_size (a token task's letters; a pretrained model's text takes up to 2^24), context_len
        // (room for one example at max_len, and at most 65536 for token tasks), sparsity and
        // curriculum_dims (at most task.dims).
        {.key = "task.vocab_size", .label = "Alphabet size", .lo = 2, .hi = 1024, .formMax = 1024,
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
        {"task.outlier_prob", "Outlier probability", 0, 1, false, true, "0 <= p < 1", 0, 0.99, 0.05, 2,
         "Outlier regressions: the probability that a pair is an outlier (not scored)"},
        {"task.noise_fraction", "Noise share", 0, 1, false, true, "0 <= noise_fraction < 1", 0, 0.95, 0.1, 2,
         "Noisy recall: the share of pair slots filled with noise tokens (MAD varies 0.2 to 0.8)"},
        {"model.rotary_fraction", "Rotary fraction", 0, 1, true, false, "0 < fraction <= 1", 0, 0, 0, 0,
         "RoPE: the share of each head's dimensions that rotate"},
        {"model.layer_norm_eps", "LayerNorm epsilon", 0, 1, true, true, "0 < eps < 1", 0, 0, 0, 0, "Added to the variance in LayerNorm"},
        {"model.rotary_base", "Rotary base", 1, 1e9, true, false, "1 < base <= 1e9", 0, 0, 0, 0, "RoPE: the base of the rotation frequencies"},
        {"train.lr", "Learning rate", 0, kInfinite, true, false, "a positive number", 0.00001, 10.0, 0.0005, 5,
         "AdamW's peak learning rate (after warm-up, before the schedule's decay)"},
        {"train.min_lr_ratio", "Final learning rate", 0, 1, false, false, "0..1", 0, 0, 0, 0,
         "The schedule's last learning rate as a share of the peak"},
        {"train.weight_decay", "Weight decay", 0, kInfinite, false, false, ">= 0", 0, 10, 0.01, 3, "AdamW's decoupled weight decay"},
        {"train.beta1", "Adam beta1", 0, 1, false, true, "0 <= beta1 < 1", 0, 0, 0, 0, "AdamW's first-moment decay"},
        {"train.beta2", "Adam beta2", 0, 1, false, true, "0 <= beta2 < 1", 0, 0, 0, 0, "AdamW's second-moment decay"},
        {"train.grad_clip", "Gradient clip", 0, kInfinite, false, false, ">= 0", 0, 1000, 1, 2, "Global gradient-norm clip; 0 disables"},
        {"train.target_accuracy", "Stop at accuracy", 0, 1, false, false, "0..1 (0 = off)", 0, 0, 0, 0,
         "Stop training once the answer accuracy at the largest training difficulty reaches this; 0 = off"},
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
