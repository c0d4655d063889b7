// The trainer's mechanism scoring (analysis/mechanisms.h): a fixed probe batch of the run's task,
// drawn once from its evaluation generator with a seed of its own, and every head scored on it.
// Scoring does not change training: the probe runs in eval mode under NoGradGuard, draws nothing
// from the training data's generator or Torch's, and leaves the weights as they were, so a seed
// gives the same weights with train.mechanism_every on or off (tests/tst_mechanisms.cpp).
// Torch-free header: the model is reached through Model::Impl (modelimpl.h) by the trainer.
#pragma once

#include "base/types.h"
#include "core/model.h"

#include <utility>
#include <vector>

namespace parrot {

class MechanismProbe {
public:
    // Up to kExamples examples at task.max_len (fewer when their attention maps would pass
    // kMapFloats), drawn with kSeed; a selective scan's implicit attention on the first
    // kImplicitExamples of them: computed channel by channel, that map is most of a scoring's
    // time; on all 8 examples, with the reference scan, a scoring costs the default Mamba about 4%
    // of its training time at train.mechanism_every = 20, this way under 1% (bench_models
    // --mechanisms; README, Benchmarks). Throws parrot::Error for a task it cannot score (mechanismsApply is
    // false, or the examples have no answers).
    static constexpr int kExamples = 8;
    static constexpr int kImplicitExamples = 2;
    static constexpr double kMapFloats = 4e6;  // every head's T x T map over the batch: 16 MB
    static constexpr unsigned long long kSeed = 0x6d656368616e69ULL;
    explicit MechanismProbe(const ExperimentConfig& config);

    int examples() const { return int(m_rows.size()); }
    int length() const { return m_length; }
    // Every attention head and selective-scan block of `m` (whose lock the caller holds) scored
    // on the probe batch, as at step m.step.
    MechanismScores score(Model::Impl& m) const;

private:
    std::vector<std::vector<int>> m_rows;          // each example's tokens, padded to m_length
    std::vector<std::pair<int, int>> m_queries;    // scoredQueries of each
    int m_length = 0;
};

}  // namespace parrot
