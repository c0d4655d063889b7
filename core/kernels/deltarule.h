// The delta rule (Gated DeltaNet's and DeltaNet's recurrence) as one fused CPU autograd node: the
// kernels of deltarulekernel.h with their hand-written backward. q, k (B, T, H, K), v (B, T, H, V),
// beta and logDecay (B, T, H) (logDecay undefined: no gate), float32 on the CPU; from an empty
// state. Returns o (B, T, H, V), the same as deltaRuleRecurrent (core/models/gateddeltanet.h).
#pragma once

#include <torch/torch.h>

namespace parrot {

torch::Tensor deltaRuleFused(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& beta,
                             const torch::Tensor& logDecay);
// Whether deltaRuleFused takes these tensors (CPU float32).
bool deltaRuleFusedTakes(const torch::Tensor& q);

}  // namespace parrot
