// Checkpoints written by other programs, read into the app's own model classes. Torch-free: this
// part reads the files, maps their configuration and renames (and where needed reorders) their
// tensors; Model::load copies them into the model.
//   mamba_ssm MambaLMHeadModel: config.json beside the weights (d_model, n_layer, vocab_size,
//   ssm_cfg {d_state, d_conv, expand}, pad_vocab_size_multiple, tie_embeddings, d_intermediate);
//   tensor names are the app's own Mamba names (backbone.embedding, backbone.layers.N.norm,
//   backbone.layers.N.mixer.*, backbone.norm_f, lm_head).
//   HuggingFace GPT-NeoX (GPTNeoXForCausalLM, the Pythia family) and the copy paper's variants of it
//   (GPTNeoXNoPEForCausalLM, GPTNeoXAlibiForCausalLM, GPTNeoXHardAlibiForCausalLM with
//   num_masked_heads): config.json beside the weights; gpt_neox.embed_in, gpt_neox.layers.N.*,
//   gpt_neox.final_layer_norm, embed_out become the app's Transformer (wte, h.N.*, ln_f, lm_head)
//   with parallel residual, LayerNorm epsilon, partial rotary and the fused per-head QKV rows
//   ([head][q|k|v][dim]) reordered to the app's [q|k|v][head][dim].
//   A state dict of the app's own architectures without metadata (a Python torch.save dict): the
//   experiment config, as `parrotscope config` prints it, in a config.json beside it.
// Weights may be one safetensors file, a sharded index (model.safetensors.index.json), or a
// torch.save zip holding a plain dict (pytorch_model.bin), in F32, F16, BF16 or F64 (converted on
// load). An imported model runs on the copy task with its vocabulary: token ids 0-3 are the
// task's specials, the rest its letters.
#pragma once

#include "base/config.h"
#include "base/io/safetensors.h"

namespace parrot {

// The weights of a HuggingFace-style model folder: model.safetensors, model.safetensors.index.json,
// pytorch_model.bin or pytorch_model.bin.index.json, the first there is. Throws parrot::Error
// naming the folder and what it lacks.
QString checkpointInFolder(const QString& dir);

// One safetensors file (or a folder, see checkpointInFolder), every shard a `.index.json` names (each a file beside the index, every
// tensor in the shard the index says), or a torch.save zip archive (io/torchzip.h). Throws
// parrot::Error naming the file at fault.
SafetensorsFile readCheckpointTensors(const QString& path);

// Which program wrote the tensors, by their metadata and names: "parrotscope" (its metadata),
// "mamba_ssm", "gpt_neox", or "" when unknown.
QString checkpointArchitecture(const SafetensorsFile& file);

struct ImportedCheckpoint {
    ExperimentConfig config;
    SafetensorsFile tensors;  // under the app's names, in the app's layout
    QString architecture;     // "mamba_ssm", "hf_mamba", "gpt_neox", "parrotscope-config"
    QString recognised;       // for people: "the copy paper's GPT-NeoX Hard-ALiBi (2 masked heads)"
    // The file's own name for one of the app's tensor names, for messages.
    QString sourceName(const QString& appName) const;
};

// The app's config and tensors for a checkpoint without Parrotscope metadata. Throws
// parrot::Error saying what is missing or not supported (an unknown architecture, a missing or
// malformed config.json, a Mamba-2 layer, an activation other than GELU, a vocabulary the
// embedding does not match).
ImportedCheckpoint importCheckpoint(const QString& path, const SafetensorsFile& file);

}  // namespace parrot
