// The torch side of parrot::Model, shared by the core's own sources only.
#pragma once

#include "model.h"
#include "models/factory.h"
#include "models/sequencemodel.h"
#include "tasks/icltask.h"
#include "tasks/tokentask.h"

#include <mutex>

namespace parrot {

struct Model::Impl {
    ExperimentConfig config;
    SequenceModel net;
    torch::Device device{torch::kCPU};
    long long step = 0;
    // Training, evaluation and saving of one model are serialised; the UI never
    // starts two of them at once, and this keeps a stray call from racing.
    mutable std::mutex mutex;
};

// CUDA when this LibTorch has it and a GPU is present, else CPU.
torch::Device preferredDevice();

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

// The teacher-forced accuracy of one evaluation batch (one example per row, answers masked):
// adds the rows with every answer right, the answers right, and the answers.
void scoreBatch(SequenceModel& net, const TokenBatch& b, torch::Device device, long long& rowsRight,
                long long& answersRight, long long& answers);

}  // namespace parrot
