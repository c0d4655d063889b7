// Mechanism scores during training: how much each head of a model attends where an n-gram lookup
// would (Jelassi et al., 2024; an induction head when n = 1, Olsson et al., 2022) and to the
// previous token, measured on a fixed probe batch of its task every train.mechanism_every steps
// (train/mechanismprobe.h), so the step where a lookup head forms can be seen beside the loss.
// The scores are analyseLookup's (lookup.h), pooled over the probe's examples; a block of Mamba's
// selective scan is scored on its implicit attention as one head (on fewer examples: it is the
// costly map), each row of |alpha| taken as shares of the row (divided by its sum) so that its
// scores read as an attention head's.
#pragma once

#include "base/analysis/lookup.h"
#include "base/config.h"
#include "base/tasks/tokentask.h"
#include "base/types.h"

#include <utility>
#include <vector>

namespace parrot {

// Whether a run of `c` scores its heads: train.mechanism_every > 0, a token task that trains (not
// the in-context vector tasks), and a family with attention heads or a selective scan (LSTM, S4D
// and S4-Mamba have neither: their time-invariant kernels attend by position, not by content).
bool mechanismsApply(const ExperimentConfig& c);

// The queries an example's heads are scored on: from the first position whose next token is
// scored (an answer, or the end after one) to the last such position, [begin, end); for a copy
// example `$ s | s .` that is copyQueries' range, as the Explore tab reads it. {0, 0} when the
// example has no answers.
std::pair<int, int> scoredQueries(const Example& e);

// The analyses of several inputs by the same heads (analyseLookup) as one: each score averaged
// over every query it was measured on (lookup[n] over the queries that could look up an n-gram,
// the others over all queries), then labelled by labelHead.
std::vector<HeadLookup> poolLookups(const std::vector<LookupAnalysis>& analyses);

// A pooled head as mechanisms.csv keeps it: block index `block`, its head, n = 1..3.
HeadScore headScore(const HeadLookup& h, int block, bool implicit);

}  // namespace parrot
