// Fused causal self-attention for CPU tensors: the scores, their mask and ALiBi bias, the softmax
// and the weighted sum of values in one autograd node with a hand-written backward, reading q, k
// and v straight out of the fused projection. The explicit path (matmul, bias, softmax, matmul in
// transformer.cpp) is its slow twin and the one the probes use, since it keeps the weights.
// Legend: B batch, T time, H heads, D head size, C = H * D.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace parrot {

struct AttentionPattern {
    int64_t heads = 1;
    std::vector<int64_t> window;  // (H): head h sees keys with 0 <= q - k <= window[h]; >= T: all earlier keys
    std::vector<double> slopes;   // (H) ALiBi slopes, or empty for none
    double scale = 1;             // usually 1 / sqrt(D)
};

// Whether attentionFused can run on this tensor (CPU, float32 or float64).
bool attentionFusedApplies(const torch::Tensor& qkv);

// qkv: (B, T, 3C) as [q | k | v] each head-major (c_attn's layout) -> y: (B, T, C).
torch::Tensor attentionFused(const torch::Tensor& qkv, const AttentionPattern& pattern);

}  // namespace parrot
