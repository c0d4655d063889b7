#include "core/train/splitbackward.h"

#include "core/kernels/fastpaths.h"
#include "core/train/losses.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace parrot {

namespace {
constexpr int kMinRowsPerPart = 8;
}

int splitParts(const TokenBatch& b, torch::Device device)
{
    if (!fastPaths() || !device.is_cpu() || at::in_parallel_region()) return 1;
    return std::clamp(std::min(at::get_num_threads(), b.batch / kMinRowsPerPart), 1, b.batch);
}

double tokenLossBackward(SequenceModel& net, const TokenBatch& b, torch::Device device, int parts)
{
    parts = std::clamp(parts, 1, std::max(1, b.batch));
    if (parts == 1) {
        const auto loss = tokenLoss(net, b, device);
        const double value = loss.item<double>();
        if (std::isfinite(value)) loss.backward();
        return value;
    }
    const auto input = toTensor(b.input, b.batch, b.length, device);
    const auto target = toTensor(b.target, b.batch, b.length, device);
    const auto mask = torch::from_blob(const_cast<uint8_t*>(b.mask.data()), {b.batch, b.length}, torch::kUInt8).to(device, torch::kBool);
    const double scored = std::max<double>(1.0, double(std::count(b.mask.begin(), b.mask.end(), uint8_t(1))));
    std::vector<double> partial(size_t(parts), 0.0);
    // Grain 1: block p on its own thread when there are as many threads as blocks.
    at::parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t r0 = b.batch * p / parts, rows = b.batch * (p + 1) / parts - r0;
            // this block's share of the batch's mean
            const auto loss = scoredTokenLoss(net, input.narrow(0, r0, rows), target.narrow(0, r0, rows),
                                              mask.narrow(0, r0, rows), scored);
            partial[size_t(p)] = loss.item<double>();
            if (std::isfinite(partial[size_t(p)])) loss.backward();
        }
    });
    double value = 0;
    for (double v : partial) value += v;  // in block order, whatever finished first
    return value;
}

}  // namespace parrot
