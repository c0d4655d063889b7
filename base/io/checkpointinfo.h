// What a checkpoint file is, without running anything in it: the format (from its first bytes,
// never from its name), its tensors with their statistics, its configuration, and what the app
// recognises it as. Torch-free and safe on any input: every length and offset is checked against
// the file before it is used; pickles go through a restricted unpickler that builds only
// containers and tensors (io/torchzip.h), never run.
//
// Formats told apart:
//   Parrotscope safetensors (runs in the app); other safetensors (recognised by tensor names:
//   mamba_ssm MambaLMHeadModel, HuggingFace GPT-NeoX / Pythia, or unknown); a sharded safetensors
//   index (model.safetensors.index.json, every shard read); a PyTorch zip archive (torch.save since
//   1.6: a plain dict state dict, read by io/torchzip.h; a raw OrderedDict or a whole pickled
//   module, refused by name); a TorchScript
//   archive; the legacy pre-1.6 torch.save pickle.
#pragma once

#include "base/io/safetensors.h"

#include <QJsonObject>
#include <QStringList>

namespace parrot {

struct TensorSummary {
    QString name, dtype;
    std::vector<int64_t> shape;
    int64_t bytes = 0;
    double mean = 0, std = 0, min = 0, max = 0;  // of floating-point tensors (0 for the others)
    bool floating = false;
};

struct CheckpointInfo {
    QString path;
    QString format;      // "safetensors", "safetensors index", "pytorch zip", "torchscript", "pytorch legacy", "unknown"
    QString recognised;  // for people: "Parrotscope Transformer (Hard-ALiBi) …", "mamba_ssm MambaLMHeadModel …"
    QString architecture;  // "parrotscope", "parrotscope-config", "mamba_ssm", "gpt_neox", "" when unknown
    bool runnable = false; // the app can load and run it (Model::load)
    QString problem;       // why it cannot be opened or run, "" when it can
    QJsonObject config;    // the metadata's config or the companion config.json
    QMap<QString, QString> metadata;
    std::vector<TensorSummary> tensors;  // sorted by name
    int64_t totalBytes = 0;
    QJsonObject toJson() const;
};

// Never throws for a file's contents: a file that cannot be read or understood comes back with
// `problem` saying exactly why (and what to do where there is something to do). Throws
// parrot::Error only for a path that does not exist or is a folder.
CheckpointInfo inspectCheckpoint(const QString& path);

// The values of one floating-point tensor of a file (one safetensors file or a sharded index),
// as float32, for the inspector's histogram and heatmap. Throws parrot::Error for a tensor the
// file does not have or one of integers.
std::vector<float> tensorValues(const QString& path, const QString& tensor);

}  // namespace parrot
