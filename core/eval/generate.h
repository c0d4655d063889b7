// Greedy generation (torch side; Model::generate in model.h is the facade's entry): the prompt
// once through the family's incremental path (a KV cache for Transformers, the recurrent state
// for Mamba), then one token at a time; families without one run the whole sequence again for
// each token, which generateReference does for every family (the twin the tests compare).
#pragma once

#include "core/modelimpl.h"

#include <functional>

namespace parrot {

// Up to `maxNew` tokens after `prompt`, each the argmax of the logits; stops after emitting
// `stop` (when >= 0), or when `done(generated so far)` says so. `keepGoing(done, total)` is polled
// after each token. `suppressFirst` (>= 0): that token cannot be the first one.
std::vector<int> generateGreedy(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                const std::function<bool(int, int)>& keepGoing = {},
                                const std::function<bool(const std::vector<int>&)>& done = {}, int suppressFirst = -1);
// The negative log-likelihood (nats) of each token of `ids` after the ones before it: ids.size()
// - 1 values. The head runs on blocks of positions, so a long window never holds the whole
// (T x vocabulary) logits.
std::vector<float> tokenLosses(Model::Impl& m, const std::vector<int>& ids);
std::vector<int> generateReference(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                   const std::function<bool(const std::vector<int>&)>& done = {}, int suppressFirst = -1);

}  // namespace parrot
