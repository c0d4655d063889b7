#include "base/analysis/lookup.h"

#include "base/error.h"
#include "base/tasks/tokentask.h"

#include <algorithm>
#include <cmath>

namespace parrot {

std::pair<int, int> copyQueries(const std::vector<int>& tokens, int separatorId)
{
    const auto sep = std::find(tokens.begin(), tokens.end(), separatorId);
    if (sep == tokens.end()) throw Error("not a copy example: no separator `|` in the input");
    return {int(sep - tokens.begin()), int(tokens.size()) - 1};
}

std::vector<int> earlierOccurrences(const std::vector<int>& tokens, int t, int n)
{
    std::vector<int> found;
    if (t < 0 || t >= int(tokens.size()) || n < 1) return found;
    for (int j = n - 1; j + 1 <= t - n + 1; ++j) {  // earlier: the token after it is at or before the n-gram's start
        bool same = true;
        for (int k = 0; k < n && same; ++k) same = tokens[size_t(j - k)] == tokens[size_t(t - k)];
        if (same) found.push_back(j);
    }
    return found;
}

void labelHead(HeadLookup& h)
{
    auto best = [](const std::array<double, kMaxLookupOrder + 1>& v, const std::array<int, kMaxLookupOrder + 1>& scored) {
        double b = 0;
        for (int n = 1; n <= kMaxLookupOrder; ++n)
            if (scored[size_t(n)] > 0) b = std::max(b, v[size_t(n)]);
        return b;
    };
    // The smallest order that scores near the best, raised past each shorter n-gram whose
    // ambiguity the head resolves; exact when it fails where its own order is ambiguous.
    auto orderOf = [&](const std::array<double, kMaxLookupOrder + 1>& v, const std::array<double, kMaxLookupOrder + 1>& resolved,
                       double b) {
        int n = 0;
        for (int k = 1; k <= kMaxLookupOrder && n == 0; ++k)
            if (h.scored[size_t(k)] > 0 && v[size_t(k)] >= kOrderFraction * b) n = k;
        for (int m = 1; m < kMaxLookupOrder; ++m)
            if (h.resolving[size_t(m)] > 0 && resolved[size_t(m)] >= kOrderFraction * b) n = std::max(n, m + 1);
        h.order = n;
        h.orderExact = h.resolving[size_t(n)] > 0 && resolved[size_t(n)] < kOrderFraction * b;
        return QString(h.orderExact ? "order %1" : "order ≥ %1").arg(n);
    };
    const double lookup = best(h.lookup, h.scored), match = best(h.match, h.scored);
    h.order = 0;
    h.orderExact = false;
    if (lookup >= kLookupThreshold && lookup >= match) {
        h.kind = HeadKind::NgramLookup;
        h.label = QString("n-gram lookup (%1)").arg(orderOf(h.lookup, h.resolved, lookup));
    } else if (match >= kLookupThreshold) {
        h.kind = HeadKind::NgramMatch;
        h.label = QString("n-gram match (%1)").arg(orderOf(h.match, h.matchResolved, match));
    } else if (h.previousToken >= kPreviousThreshold) {
        h.kind = HeadKind::PreviousToken;
        h.label = "previous-token";
    } else if (h.currentToken >= kPreviousThreshold) {
        h.kind = HeadKind::CurrentToken;
        h.label = "current-token";
    } else if (h.firstToken >= kSinkThreshold) {
        h.kind = HeadKind::FirstTokenSink;
        h.label = "first-token sink";
    } else if (h.entropy >= kDiffuseEntropy) {
        h.kind = HeadKind::Diffuse;
        h.label = "diffuse";
    } else {
        h.kind = HeadKind::Other;
        h.label = "other";
    }
}

int strongestLookupHead(const LookupAnalysis& a, const std::vector<int>& candidates)
{
    int strongest = -1;
    double best = -1;
    for (int i : candidates) {
        const HeadLookup& h = a.heads.at(size_t(i));
        const double score = *std::max_element(h.lookup.begin() + 1, h.lookup.end());
        if (score > best) best = score, strongest = i;
    }
    return strongest;
}

void lookupMarks(const std::vector<int>& tokens, int n, bool match, std::vector<std::pair<int, int>>& marks,
                 std::vector<std::pair<int, int>>& warnings)
{
    marks.clear();
    warnings.clear();
    const auto sep = std::find(tokens.begin(), tokens.end(), int(CopyVocab::Sep));
    if (sep == tokens.end()) return;
    lookupMarksIn(tokens, int(sep - tokens.begin()), int(tokens.size()) - 1, n, match, marks, warnings);
}

void lookupMarksIn(const std::vector<int>& tokens, int queryBegin, int queryEnd, int n, bool match,
                   std::vector<std::pair<int, int>>& marks, std::vector<std::pair<int, int>>& warnings)
{
    marks.clear();
    warnings.clear();
    for (int t = std::max(0, queryBegin); t < std::min(queryEnd, int(tokens.size())); ++t) {
        const std::vector<int> found = earlierOccurrences(tokens, t, n);
        for (int j : found) (found.size() == 1 ? marks : warnings).emplace_back(t, match ? j : j + 1);
    }
}

LookupAnalysis analyseLookup(const AttentionMaps& maps, const std::vector<int>& tokens, int queryBegin, int queryEnd)
{
    const int T = maps.length;
    if (int(tokens.size()) != T) throw Error(QString("lookup analysis: %1 tokens for attention over %2 positions").arg(tokens.size()).arg(T));
    if (maps.weights.size() != size_t(maps.layers) * maps.heads * T * T) throw Error("lookup analysis: malformed attention maps");
    queryBegin = std::max(queryBegin, 1);
    queryEnd = std::min(queryEnd, T);
    if (queryBegin >= queryEnd) throw Error("lookup analysis: no queries to analyse");

    LookupAnalysis a;
    a.queryBegin = queryBegin;
    a.queryEnd = queryEnd;
    // For each query and n: the position j where the n-gram ending at t occurs once before, or -1;
    // and whether it occurs more than once.
    std::vector<std::array<int, kMaxLookupOrder + 1>> target(size_t(queryEnd - queryBegin));
    std::vector<std::array<bool, kMaxLookupOrder + 1>> ambiguous(size_t(queryEnd - queryBegin));
    for (int t = queryBegin; t < queryEnd; ++t) {
        auto& tt = target[size_t(t - queryBegin)];
        auto& amb = ambiguous[size_t(t - queryBegin)];
        tt.fill(-1);
        amb.fill(false);
        for (int n = 1; n <= kMaxLookupOrder && n <= t + 1; ++n) {
            const std::vector<int> found = earlierOccurrences(tokens, t, n);
            if (found.size() == 1) tt[size_t(n)] = found[0];
            else if (found.size() > 1) ++a.ambiguous[size_t(n)], amb[size_t(n)] = true;
        }
    }
    for (int l = 0; l < maps.layers; ++l)
        for (int h = 0; h < maps.heads; ++h) {
            HeadLookup s;
            s.layer = l;
            s.head = h;
            for (int t = queryBegin; t < queryEnd; ++t) {
                s.previousToken += maps.at(l, h, t, t - 1);
                s.currentToken += maps.at(l, h, t, t);
                s.firstToken += maps.at(l, h, t, 0);
                double e = 0;
                for (int k = 0; k <= t; ++k) {
                    const double p = maps.at(l, h, t, k);
                    if (p > 0) e -= p * std::log(p);
                }
                s.entropy += e / std::log(double(t + 1));
                const auto& tt = target[size_t(t - queryBegin)];
                const auto& amb = ambiguous[size_t(t - queryBegin)];
                for (int n = 1; n <= kMaxLookupOrder; ++n) {
                    const int j = tt[size_t(n)];
                    if (j < 0) continue;
                    s.lookup[size_t(n)] += maps.at(l, h, t, j + 1);
                    s.match[size_t(n)] += maps.at(l, h, t, j);
                    ++s.scored[size_t(n)];
                    if (amb[size_t(n - 1)]) {  // the shorter n-gram could not have found j
                        s.resolved[size_t(n - 1)] += maps.at(l, h, t, j + 1);
                        s.matchResolved[size_t(n - 1)] += maps.at(l, h, t, j);
                        ++s.resolving[size_t(n - 1)];
                    }
                }
            }
            const double q = queryEnd - queryBegin;
            s.previousToken /= q;
            s.currentToken /= q;
            s.firstToken /= q;
            s.entropy /= q;
            for (int n = 1; n <= kMaxLookupOrder; ++n) {
                if (s.scored[size_t(n)] > 0) {
                    s.lookup[size_t(n)] /= s.scored[size_t(n)];
                    s.match[size_t(n)] /= s.scored[size_t(n)];
                }
                if (s.resolving[size_t(n)] > 0) {
                    s.resolved[size_t(n)] /= s.resolving[size_t(n)];
                    s.matchResolved[size_t(n)] /= s.resolving[size_t(n)];
                }
            }
            labelHead(s);
            a.heads.push_back(s);
        }
    return a;
}

}  // namespace parrot
