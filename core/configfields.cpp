#include "configfields.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace parrot {

namespace {

const std::vector<IntField>& intFields()
{
    static const std::vector<IntField> fields{
        {"task.min_len", 1, kUnbounded, kMaxLength, "Smallest training difficulty (string length, entries or pairs, by task)"},
        {"task.max_len", 1, kUnbounded, kMaxLength, "Largest training difficulty"},
        {"task.eval_lengths", 1, kMaxLength, kMaxLength, "Difficulties evaluated (string lengths, entries or pairs, by task)"},
        {"model.layers", 1, 64, 64, "Blocks (for the hybrids: attention + Mamba pairs)"},
        {"model.d_model", 1, 8192, 8192, "Width of the residual stream (the LSTM's hidden size)"},
        {"model.heads", 1, kUnbounded, 256, "Attention heads per layer"},
        {"model.num_masked_heads", 0, kUnbounded, 256, "Hard-ALiBi: head i < this sees only the last i+1 tokens"},
        {"model.d_state", 1, 256, 256, "State size N per channel of Mamba and S4D layers"},
        {"model.d_conv", 1, 64, 64, "Width of Mamba's causal convolution"},
        {"model.short_conv", 0, 16, 16,
         "Transformer: a depthwise causal convolution of this width before each attention layer, as Zoology trains "
         "attention on associative recall (Mamba has its own, of width 4); 0: none"},
        {"model.expand", 1, 16, 16, "Mamba and S4D inner width = expand x d_model"},
        {"model.mlp_ratio", 1, 16, 16, "The Transformer's MLP width over d_model"},
        {"model.mamba_mlp_ratio", 0, 16, 16, "An MLP after each Mamba mixer, this many times d_model wide; 0: none"},
        {"model.max_positions", 1, 1000000, 1000000, "Learned positions: the longest row"},
        {"train.steps", 1, kUnbounded, 10000000, "Optimiser steps"},
        {"train.batch_size", 1, 65536, 65536, "Rows per step"},
        {"train.warmup_steps", 0, kUnbounded, 1000000, "Linear warm-up steps"},
        {"train.eval_every", 0, kUnbounded, 1000000, "Steps between accuracy evaluations; 0 = only at the end"},
        {"train.eval_samples", 1, kUnbounded, 100000, "Examples per evaluation length during training"},
        {"train.checkpoint_every", 0, kUnbounded, 1000000, "Steps between autosaves; 0 = only when the run stops"},
        {"train.log_every", 1, kUnbounded, 1000000, "Steps between log lines"},
        {"train.mechanism_every", 0, kUnbounded, 1000000,
         "Token tasks: steps between scorings of every attention head (and Mamba block's implicit attention) on a fixed "
         "probe batch, for the lookup-score timeline under the loss and the run's mechanisms.csv and snapshots; 0 = off",
         "0 = off"},
        {"train.curriculum_steps", 0, kUnbounded, 10000000, "Steps over which the curriculum grows to the whole task"},
    };
    return fields;
}

}  // namespace

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
