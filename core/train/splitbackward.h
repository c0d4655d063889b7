// A token batch's loss and gradients, the batch split into row blocks that run side by side.
//
// On a few cores a small model's training step is many small ops, and each one parallelised
// inside (torch's intra-op threads, OpenBLAS's) pays a fork and a join; the matrices are too
// small for two threads to share well. Giving each core whole rows of the batch instead -- its
// forward and backward inside one parallel region, where every op and every BLAS call runs on
// the thread that calls it -- leaves one join per step. The loss is the same mean over the whole
// batch's scored tokens; the gradients are the blocks' sums, the same up to floating-point
// reordering (tests/tst_fastpaths.cpp compares them with the unsplit batch).
#pragma once

#include "base/tasks/tokentask.h"
#include "core/models/sequencemodel.h"

namespace parrot {

// The loss (mean next-token cross-entropy over the batch's scored tokens), its gradients added
// into the parameters' .grad when it is finite. `parts` = 1 is tokenLoss + backward.
double tokenLossBackward(SequenceModel& net, const TokenBatch& b, torch::Device device, int parts);

// The blocks the trainer uses: one per intra-op thread with at least 8 rows each, on the CPU
// with the fast paths on (their twin is the unsplit batch), else 1.
int splitParts(const TokenBatch& b, torch::Device device);

}  // namespace parrot
