#include "core/train/losses.h"

#include "core/kernels/fastpaths.h"

#include <algorithm>

namespace parrot {

torch::Tensor toTensor(const std::vector<int64_t>& values, int batch, int length, torch::Device device)
{
    auto t = torch::from_blob(const_cast<int64_t*>(values.data()), {batch, length}, torch::kLong).clone();
    return t.to(device);
}

torch::Tensor scoredTokenLoss(SequenceModel& net, const torch::Tensor& input, const torch::Tensor& target,
                              const torch::Tensor& mask, double divisor)
{
    const auto rows = mask.reshape({-1}).nonzero().squeeze(1);  // (R)
    const auto none = torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone);
    // (a read-out needs every position's hidden state up to the read token: no shortcut)
    const auto logits = net->hasReadOut() ? net->forward(input).flatten(0, 1).index_select(0, rows) : net->forwardAt(input, rows);
    // float32 for the loss (a no-op unless bf16 autocast made the logits bfloat16)
    const auto nll = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), target.reshape({-1}).index_select(0, rows), none);
    return nll.sum() / divisor;
}

torch::Tensor tokenLoss(SequenceModel& net, const TokenBatch& b, torch::Device device)
{
    auto input = toTensor(b.input, b.batch, b.length, device);
    auto target = toTensor(b.target, b.batch, b.length, device);
    auto mask = torch::from_blob(const_cast<uint8_t*>(b.mask.data()), {b.batch, b.length}, torch::kUInt8).to(device, torch::kFloat32);
    if (fastPaths()) {
        // Logits at the scored positions only (about half of a packed copy row): the same loss.
        const double scored = double(std::count(b.mask.begin(), b.mask.end(), uint8_t(1)));
        return scoredTokenLoss(net, input, target, mask, std::max(1.0, scored));
    }
    const auto none = torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone);
    auto logits = net->forward(input).to(torch::kFloat);  // (B, T, V), float32 under bf16 autocast too
    auto nll = torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), target.view({-1}), none);
    return (nll * mask.view({-1})).sum() / mask.sum().clamp_min(1.0);
}

torch::Tensor predictVectors(SequenceModel& net, const VectorBatch& v, torch::Device device)
{
    auto input = torch::from_blob(const_cast<float*>(v.inputs.data()), {v.batch, 2 * v.pairs, v.d}, torch::kFloat).to(device);
    return net->forwardVectors(input).slice(1, 0, 2 * v.pairs, 2);  // the x positions
}

torch::Tensor vectorLoss(SequenceModel& net, const VectorBatch& v, torch::Device device)
{
    auto target = torch::from_blob(const_cast<float*>(v.targets.data()), {v.batch, v.pairs, v.dOut}, torch::kFloat).to(device);
    auto scored = torch::from_blob(const_cast<uint8_t*>(v.scored.data()), {v.batch, v.pairs}, torch::kUInt8).to(device, torch::kFloat32);
    auto error = (predictVectors(net, v, device).to(torch::kFloat) - target).pow(2).sum(-1) / double(v.d);  // (B, pairs): squared error / d
    return (error * scored).sum() / scored.sum().clamp_min(1.0);
}

}  // namespace parrot
