// AdamW (Loshchilov & Hutter, 2019) with global-norm gradient clipping, the arithmetic of
// torch::optim::AdamW after torch::nn::utils::clip_grad_norm_, in one pass over each parameter
// instead of about fifteen torch ops per parameter and step. The torch pair stays the slow twin
// (train/optimizer.cpp, when kernels/fastpaths.h is off) and a test compares the two.
#pragma once

#include <torch/torch.h>

#include <utility>
#include <vector>

namespace parrot {

class FusedAdamW {
public:
    struct Group {
        std::vector<torch::Tensor> params;
        double weightDecay = 0;
    };
    FusedAdamW(std::vector<Group> groups, double beta1, double beta2, double eps = 1e-8);

    // Scales the gradients so their global 2-norm is at most `clip` (0: no clipping), takes one
    // step at learning rate lr, and drops the gradients (the next backward writes fresh ones, so
    // nothing needs zeroing). Returns the gradients' norm before clipping.
    double step(double lr, double clip);
    long long steps() const { return m_step; }

    // For saving and resuming a run (train/optimizer.cpp): the first and second moments of `param`
    // (shared with the optimiser: copy into them to restore), undefined tensors for a parameter
    // it does not hold; and the step count the bias correction uses.
    std::pair<torch::Tensor, torch::Tensor> moments(const torch::Tensor& param) const;
    void setSteps(long long steps) { m_step = steps; }

private:
    struct Slot {
        torch::Tensor param, expAvg, expAvgSq;
        double weightDecay;
    };
    std::vector<Slot> m_slots;
    double m_beta1, m_beta2, m_eps;
    long long m_step = 0;
};

}  // namespace parrot
