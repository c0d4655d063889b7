// A pretrained language model as a person downloads it: a HuggingFace model folder (config.json,
// tokenizer.json, model.safetensors / shards / pytorch_model.bin) of GPT-NeoX (Pythia) or Mamba,
// loaded into the app's own Transformer or Mamba (io/importers.h) with its tokenizer
// (text/tokenizer.h). Text in, text out; the zero-shot tests (eval/lmtests.h) and the window's
// Pretrained tab run on it.
#pragma once

#include "base/text/tokenizer.h"
#include "core/model.h"

#include <QString>

#include <functional>
#include <vector>

namespace parrot {

struct LanguageModel {
    Model model;
    BpeTokenizer tokenizer;
    QString folder;         // absolute
    QString name;           // the folder's name, e.g. "pythia-160m"
    QString architecture;   // "GPT-NeoX" or "Mamba"
    int contextLength = 0;  // positions it was trained on (max_position_embeddings); 0 when it has no limit

    // Loads the folder, or a hub id such as EleutherAI/pythia-410m from the HuggingFace cache
    // (base/io/hfcache.h). Throws parrot::Error naming the file and the problem: no such folder
    // (nor model in the cache), no
    // config.json or tokenizer.json, an architecture the app does not run, a tokenizer of another
    // type, a tokenizer whose ids the model's embedding does not have, a damaged or truncated
    // weights file, more memory than the machine has free. `progress(done, total)` per tensor;
    // false cancels.
    static LanguageModel load(const QString& folderOrHubId, const std::function<bool(int done, int total)>& progress = {},
                              WeightDtype dtype = weightDtypeChoice());

    // One line for people: name, architecture, parameters, vocabulary, context.
    QString summary() const;

    // Throws parrot::Error when `tokens` prompt tokens plus `newTokens` pass the context length.
    void checkFits(size_t tokens, int newTokens) const;

    struct Continuation {
        std::vector<int> promptIds, newIds;
        QString text;          // the new tokens decoded
        bool stopped = false;  // ended on <|endoftext|>
    };
    // The greedy continuation of `prompt`, up to `maxNewTokens` tokens or <|endoftext|>.
    Continuation generate(const QString& prompt, int maxNewTokens, const std::function<bool(int, int)>& keepGoing = {}) const;
};

}  // namespace parrot
