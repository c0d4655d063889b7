// Greedy generation (torch side; Model::generate in model.h is the facade's entry): the prompt
// once through the family's incremental path (a KV cache for Transformers, the recurrent state
// for Mamba), then one token at a time; families without one run the whole sequence again for
// each token, which generateReference does for every family (the twin the tests compare).
#pragma once

#include "core/modelimpl.h"

#include <functional>

namespace parrot {

// Up to `maxNew` tokens after `prompt`, each the argmax of the logits; stops after emitting
// `stop` (when >= 0). `keepGoing(done, total)` is polled after each token.
std::vector<int> generateGreedy(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                const std::function<bool(int, int)>& keepGoing = {});
std::vector<int> generateReference(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop);

}  // namespace parrot
