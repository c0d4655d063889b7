// Checkpoints written by other programs, read into the app's own model classes. Torch-free: this
// part reads the files and maps their configuration; Model::load copies the tensors.
//   mamba_ssm MambaLMHeadModel: config.json beside the weights (d_model, n_layer, vocab_size,
//   ssm_cfg {d_state, d_conv, expand}, pad_vocab_size_multiple, tie_embeddings, d_intermediate);
//   tensor names are the app's own Mamba names (backbone.embedding, backbone.layers.N.norm,
//   backbone.layers.N.mixer.*, backbone.norm_f, lm_head).
// Weights may be one safetensors file or a sharded index (model.safetensors.index.json), in F32,
// F16, BF16 or F64 (converted on load). An imported model runs on the copy task with its
// vocabulary: token ids 0-3 are the task's specials, the rest its letters.
#pragma once

#include "config.h"
#include "io/safetensors.h"

namespace parrot {

// One safetensors file, or every shard a `.index.json` names (each a file beside the index,
// every tensor in the shard the index says). Throws parrot::Error naming the file at fault.
SafetensorsFile readCheckpointTensors(const QString& path);

// Which program wrote the tensors, by their names: "parrotscope" (its metadata), "mamba_ssm",
// "gpt_neox", or "" when unknown.
QString checkpointArchitecture(const SafetensorsFile& file);

// The app's config for a checkpoint of another program. Throws parrot::Error saying what is
// missing or not supported (an unknown architecture, GPT-NeoX, a missing or malformed
// config.json, a Mamba-2 layer, a vocabulary the embedding does not match).
ExperimentConfig importedConfig(const QString& path, const SafetensorsFile& file);

}  // namespace parrot
