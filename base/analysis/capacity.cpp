#include "base/analysis/capacity.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parrot {

double stringBits(int length, int vocab) { return length * std::log2(double(std::max(2, vocab))); }

double crossingLength(double stateBits, int vocab) { return stateBits / std::log2(double(std::max(2, vocab))); }

double minimumCopyError(double stateBits, int length, int vocab)
{
    return std::max(0.0, 1.0 - std::exp2(stateBits - stringBits(length, vocab)));
}

int longestCopied(const LengthCurve& curve, double threshold)
{
    std::vector<size_t> order(curve.lengths.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return curve.lengths[a] < curve.lengths[b]; });
    int longest = 0;
    for (size_t i : order) {
        if (i >= curve.stringAccuracy.size() || curve.stringAccuracy[i] < threshold) break;
        longest = curve.lengths[i];
    }
    return longest;
}

}  // namespace parrot
