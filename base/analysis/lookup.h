// N-gram lookup analysis of attention heads on copy inputs (Jelassi et al., 2024: a Transformer
// copies by finding the earlier occurrence of the last n tokens and reading the token after it).
//
// For a query at position t (it predicts token t+1) and each n, the n-gram ending at t is looked
// up among the earlier, non-overlapping positions: when it occurs exactly once, ending at j,
//   lookup[n] is the attention the query puts on j + 1 (the token to copy next), and
//   match[n]  the attention on j itself (the matched token),
// averaged over the queries where the n-gram is unambiguous (`scored[n]` of them; the others are
// counted in `ambiguous[n]`). Heads that read the next token and heads that look at the match are
// so told apart.
//
// The order of a lookup head shows only where a shorter n-gram is ambiguous: where the m-gram
// ending at t occurs more than once but the (m+1)-gram once, a head that reads m + 1 tokens back
// still finds the token to copy and one that reads m cannot (`resolved[m]`, over `resolving[m]`
// queries). A head's order n is the smallest with lookup[n] >= 0.8 x the best, raised past every
// m it resolves (>= 0.8 x the best there too); it is exact when the input shows the head failing
// at n, else a lower bound: on a string without repeats every order looks alike.
//
// Head kinds and their labels, in this order (thresholds in kLookupThreshold etc. below):
//   NgramLookup     "n-gram lookup (order n)"  the best lookup[n] >= 0.3; "order ≥ n" when the
//                                              input cannot tell n from longer orders
//   NgramMatch      "n-gram match (order n)"   the same for match[n] (and above the lookup)
//   PreviousToken   "previous-token"           >= 0.5 of the attention on t - 1
//   CurrentToken    "current-token"            >= 0.5 on t itself (Hard-ALiBi's one-token window)
//   FirstTokenSink  "first-token sink"         >= 0.5 on position 0
//   Diffuse         "diffuse"                  mean attention entropy >= 0.7 of the uniform's (log
//                                              of the keys seen)
//   Other           "other"
#pragma once

#include "base/types.h"

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

// Code decides by the kind; the label is for people (the window, `parrotscope inspect`).
enum class HeadKind { NgramLookup, NgramMatch, PreviousToken, CurrentToken, FirstTokenSink, Diffuse, Other };

struct HeadLookup {
    int layer = 0, head = 0;
    std::array<double, kMaxLookupOrder + 1> lookup{}, match{};  // index n = 1..8 (0 unused)
    std::array<int, kMaxLookupOrder + 1> scored{};
    // where the m-gram is ambiguous and the (m+1)-gram is not: the attention on the token after
    // (resolved) and on the (m+1)-gram's occurrence (matchResolved), over `resolving[m]` queries
    std::array<double, kMaxLookupOrder + 1> resolved{}, matchResolved{};
    std::array<int, kMaxLookupOrder + 1> resolving{};
    double previousToken = 0, currentToken = 0, firstToken = 0, entropy = 0;  // means over the queries
    HeadKind kind = HeadKind::Other;
    QString label;
    int order = 0;  // n of a lookup or match head, else 0
    bool orderExact = false;  // false: the input shows only that the order is at least `order`
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

// Labels one head from its scores (the rules above); sets kind, label and order.
void labelHead(HeadLookup& h);

// The head a figure shows when none is asked for: of `candidates` (indices into a.heads), the one
// with the highest lookup[n] at any n, the first of equals. -1 when there are no candidates.
int strongestLookupHead(const LookupAnalysis& a, const std::vector<int>& candidates);

// The queries that produce the copy of `$ s | s .`: from the separator to the last letter.
// Throws parrot::Error when the tokens are not a copy example (no separator).
std::pair<int, int> copyQueries(const std::vector<int>& tokens, int separatorId);

// Where an order-n lookup head should look from each copy query (those of copyQueries), as
// (query, key) cells: the token after the n-gram's one earlier occurrence in `marks`, every
// candidate of an ambiguous n-gram in `warnings`. `match` marks the matched token itself (what an
// n-gram match head reads) instead. Both stay empty for tokens without the separator `|`.
void lookupMarks(const std::vector<int>& tokens, int n, bool match, std::vector<std::pair<int, int>>& marks,
                 std::vector<std::pair<int, int>>& warnings);
// The same for the queries in [queryBegin, queryEnd) of any input (a text prompt: all of them).
void lookupMarksIn(const std::vector<int>& tokens, int queryBegin, int queryEnd, int n, bool match,
                   std::vector<std::pair<int, int>>& marks, std::vector<std::pair<int, int>>& warnings);

}  // namespace parrot
