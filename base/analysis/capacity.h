// The copy paper's capacity argument (Jelassi et al., 2024, the fixed-state bound): a model whose
// state can take at most 2^m values cannot copy a uniformly random string of L letters from an
// alphabet V once L log2|V| > m; its copy error is at least 1 - 2^m / |V|^L.
#pragma once

#include "base/types.h"

namespace parrot {

// Bits a uniformly random string of `length` letters carries: L log2|V|.
double stringBits(int length, int vocab);
// The longest string a state of `stateBits` can hold: m / log2|V|.
double crossingLength(double stateBits, int vocab);
// The bound on the copy error: max(0, 1 - 2^(m - L log2|V|)).
double minimumCopyError(double stateBits, int length, int vocab);
// The longest evaluated length up to which every evaluated length has string accuracy >= threshold
// (0 when even the shortest falls below it).
int longestCopied(const LengthCurve& curve, double threshold = 0.9);

}  // namespace parrot
