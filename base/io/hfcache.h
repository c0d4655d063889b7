// The HuggingFace hub cache, read offline as `transformers` reads it with local_files_only: a
// model id such as EleutherAI/pythia-410m is the folder
//   <cache>/models--EleutherAI--pythia-410m/snapshots/<commit>/
// whose files are symlinks into ../../blobs/, and refs/main names the commit of "main".
// <cache> is HF_HUB_CACHE, else HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub. Nothing here downloads.
#pragma once

#include <QString>

#include <vector>

namespace parrot {

QString hubCacheDir();
// Whether `spec` reads as a hub id ("org/name", or "name", optionally "@revision"), not a path.
bool looksLikeHubId(const QString& spec);
// A model folder for `spec`: an existing folder as it is; else a hub id resolved in the cache to
// the snapshot its revision names (refs/<revision>, "main" by default, or a commit hash), or the
// newest snapshot when the cache has no refs. Throws parrot::Error saying where it looked and
// how to download the model.
QString resolveModelFolder(const QString& spec);
// "EleutherAI/pythia-410m" for a folder that is a snapshot in the cache layout, else "".
QString hubIdOf(const QString& folder);

struct CachedModel {
    QString id;            // "EleutherAI/pythia-410m"
    QString folder;        // its snapshot
    QString modelType;     // config.json's model_type: "gpt_neox" or "mamba"
    QString architecture;  // as LanguageModel names it: "GPT-NeoX" or "Mamba"
    qint64 bytes = 0;      // on disk: the snapshot's files (the blobs they point to)
    long long parameters = -1;  // from the safetensors headers; -1 where the weights are not safetensors
};
// The GPT-NeoX and Mamba models in the cache that have a config.json and a tokenizer.json, by id.
// Folders it cannot read are left out.
std::vector<CachedModel> cachedLanguageModels(const QString& cacheDir = hubCacheDir());

}  // namespace parrot
