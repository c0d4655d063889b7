// The training losses and the tensors they are computed from: a TokenBatch or VectorBatch (plain
// vectors from the tasks) on the model's device. Torch-side: the trainer, the split batch and
// the evaluators include this, the UI never does.
#pragma once

#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/models/sequencemodel.h"

namespace parrot {

// (batch x length) int64 values -> a (B, T) tensor on `device`.
torch::Tensor toTensor(const std::vector<int64_t>& values, int batch, int length, torch::Device device);

// Next-token cross-entropy summed over the positions where `mask` (B, T) is nonzero, divided by
// `divisor`; logits only at those positions (forwardAt). tokenLoss's fast path, and one block's
// share of a split batch (train/splitbackward.h).
torch::Tensor scoredTokenLoss(SequenceModel& net, const torch::Tensor& input, const torch::Tensor& target,
                              const torch::Tensor& mask, double divisor);
// Mean next-token cross-entropy over the masked targets (training's loss on token tasks).
torch::Tensor tokenLoss(SequenceModel& net, const TokenBatch& b, torch::Device device);
// A vector batch's predictions at the x positions: (B, pairs, dOut).
torch::Tensor predictVectors(SequenceModel& net, const VectorBatch& v, torch::Device device);
// Mean squared error / d over the scored pairs, as evaluated (training's loss on in-context-learning tasks).
torch::Tensor vectorLoss(SequenceModel& net, const VectorBatch& v, torch::Device device);

}  // namespace parrot
