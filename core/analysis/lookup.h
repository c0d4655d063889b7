// N-gram lookup analysis of attention heads on copy inputs (Jelassi et al., 2024: a Transformer
// copies by finding the earlier occurrence of the last n tokens and reading the token after it).
//
// For a query at position t (it predicts token t+1) and each n, the n-gram ending at t is looked
// up among the earlier, non-overlapping positions: when it occurs exactly once, ending at j,
//   lookup[n] is the attention the query puts on j + 1 (the token to copy next), and
//   match[n]  the attention on j itself (the matched token),
// averaged over the queries where the n-gram is unambiguous (`scored[n]` of them; the others are
// counted in `ambiguous[n]`). Heads that read the next token and heads that look at the match are
// so told apart. Head labels, in this order (thresholds in kLookupThreshold etc. below):
//   "n-gram lookup (order n)"  the best lookup[n] >= 0.3; n is the smallest with >= 0.8 x the best
//   "n-gram match (order n)"   the same for match[n] (and above the lookup)
//   "previous-token"           >= 0.5 of the attention on t - 1
//   "current-token"            >= 0.5 on t itself (Hard-ALiBi's one-token window)
//   "first-token sink"         >= 0.5 on position 0
//   "diffuse"                  mean attention entropy >= 0.7 of the uniform's (log of the keys seen)
//   "other"
#pragma once

#include "types.h"

#include <QString>

#include <array>
#include <vector>

namespace parrot {

inline constexpr int kMaxLookupOrder = 8;
inline constexpr double kLookupThreshold = 0.3;
inline constexpr double kOrderFraction = 0.8;
inline constexpr double kPreviousThreshold = 0.5;
inline constexpr double kSinkThreshold = 0.5;
inline constexpr double kDiffuseEntropy = 0.7;

struct HeadLookup {
    int layer = 0, head = 0;
    std::array<double, kMaxLookupOrder + 1> lookup{}, match{};  // index n = 1..8 (0 unused)
    std::array<int, kMaxLookupOrder + 1> scored{};
    double previousToken = 0, currentToken = 0, firstToken = 0, entropy = 0;  // means over the queries
    QString label;
    int order = 0;  // n of a lookup or match label, else 0
};

struct LookupAnalysis {
    int queryBegin = 0, queryEnd = 0;  // the queries analysed: [begin, end)
    std::array<int, kMaxLookupOrder + 1> ambiguous{};  // queries whose n-gram occurs more than once before
    std::vector<HeadLookup> heads;      // layer-major
};

// `tokens` are the ids the attention was computed on (maps.length of them); queries in
// [queryBegin, queryEnd). Throws parrot::Error on inconsistent sizes or an empty range.
LookupAnalysis analyseLookup(const AttentionMaps& maps, const std::vector<int>& tokens, int queryBegin, int queryEnd);

// Where the n-gram ending at t occurred before: each j (its last token) with j + 1 <= t - n + 1,
// so the token after it is at or before the n-gram's start. One entry: the lookup is unambiguous.
std::vector<int> earlierOccurrences(const std::vector<int>& tokens, int t, int n);

// Labels one head from its scores (the rules above); sets label and order.
void labelHead(HeadLookup& h);

// The queries that produce the copy of `$ s | s .`: from the separator to the last letter.
// Throws parrot::Error when the tokens are not a copy example (no separator).
std::pair<int, int> copyQueries(const std::vector<int>& tokens, int separatorId);

}  // namespace parrot
