// The trainer's optimiser: AdamW with global-norm clipping, the fused one (train/adamw.h), or with
// the fast paths off its twin, torch::optim::AdamW after clip_grad_norm_. Torch-side: the trainer's
// own header.
#pragma once

#include "base/config.h"
#include "base/io/safetensors.h"
#include "core/models/sequencemodel.h"
#include "core/train/adamw.h"

#include <QJsonObject>

#include <optional>
#include <utility>
#include <vector>

namespace parrot {

class Optimizer {
public:
    Optimizer(SequenceModel& net, const TrainConfig& c);
    // Before the backward: no gradients (the fused optimiser drops them after each step).
    void clearGradients();
    // The gradients the backward left in .grad in, one step at lr out.
    void step(double lr, double clip);

    // The moments of each named parameter and the step count, into and out of a resume file
    // (train_state.exp_avg.NAME, train_state.exp_avg_sq.NAME, optimizer_steps in `meta`).
    void save(SafetensorsFile& file, SequenceModel& net, QJsonObject& meta) const;
    void restore(const SafetensorsFile& file, SequenceModel& net, long long steps);

private:
    std::pair<torch::Tensor, torch::Tensor> moments(const torch::Tensor& p) const;
    long long referenceSteps() const;
    void setMoments(const torch::Tensor& p, const torch::Tensor& m, const torch::Tensor& v, long long steps);

    std::vector<torch::Tensor> m_params;
    std::optional<FusedAdamW> m_fused;
    std::optional<torch::optim::AdamW> m_reference;
};

}  // namespace parrot
