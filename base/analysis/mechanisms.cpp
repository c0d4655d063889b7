#include "base/analysis/mechanisms.h"

#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/taskcatalog.h"

#include <algorithm>

namespace parrot {

bool mechanismsApply(const ExperimentConfig& c)
{
    const ModelFamily* family = findFamily(c.model.kind);
    return c.train.mechanismEvery > 0 && !isVectorTask(c.task.kind) && !isTextTask(c.task.kind) && family
           && (family->attention || family->selectiveScan || family->effectiveAttention);
}

std::pair<int, int> scoredQueries(const Example& e)
{
    int begin = -1, end = -1;
    for (size_t t = 0; t + 1 < e.roles.size(); ++t)
        if (e.roles[t + 1] == Role::Answer || (e.roles[t + 1] == Role::End && e.roles[t] == Role::Answer)) {
            if (begin < 0) begin = int(t);
            end = int(t) + 1;
        }
    return begin < 0 ? std::pair{0, 0} : std::pair{begin, end};
}

std::vector<HeadLookup> poolLookups(const std::vector<LookupAnalysis>& analyses)
{
    std::vector<HeadLookup> pooled;
    if (analyses.empty()) return pooled;
    const size_t heads = analyses.front().heads.size();
    std::vector<double> queries(heads, 0.0);
    pooled.resize(heads);
    for (const LookupAnalysis& a : analyses) {
        if (a.heads.size() != heads) throw Error("pooling lookup analyses of different models");
        const double q = a.queryEnd - a.queryBegin;
        for (size_t i = 0; i < heads; ++i) {
            const HeadLookup& h = a.heads[i];
            HeadLookup& p = pooled[i];
            p.layer = h.layer;
            p.head = h.head;
            // sums weighted by what each mean was taken over, divided out below
            p.previousToken += h.previousToken * q;
            p.currentToken += h.currentToken * q;
            p.firstToken += h.firstToken * q;
            p.entropy += h.entropy * q;
            queries[i] += q;
            for (size_t n = 1; n <= size_t(kMaxLookupOrder); ++n) {
                p.lookup[n] += h.lookup[n] * h.scored[n];
                p.match[n] += h.match[n] * h.scored[n];
                p.scored[n] += h.scored[n];
                p.resolved[n] += h.resolved[n] * h.resolving[n];
                p.matchResolved[n] += h.matchResolved[n] * h.resolving[n];
                p.resolving[n] += h.resolving[n];
            }
        }
    }
    for (size_t i = 0; i < heads; ++i) {
        HeadLookup& p = pooled[i];
        const double q = std::max(1.0, queries[i]);
        p.previousToken /= q;
        p.currentToken /= q;
        p.firstToken /= q;
        p.entropy /= q;
        for (size_t n = 1; n <= size_t(kMaxLookupOrder); ++n) {
            if (p.scored[n] > 0) p.lookup[n] /= p.scored[n], p.match[n] /= p.scored[n];
            if (p.resolving[n] > 0) p.resolved[n] /= p.resolving[n], p.matchResolved[n] /= p.resolving[n];
        }
        labelHead(p);
    }
    return pooled;
}

HeadScore headScore(const HeadLookup& h, int block, bool implicit)
{
    HeadScore s;
    s.layer = block;
    s.head = implicit ? 0 : h.head;
    s.implicit = implicit;
    for (size_t n = 1; n <= 3; ++n) s.lookup[n - 1] = std::clamp(h.lookup[n], 0.0, 1.0);
    s.previousToken = std::clamp(h.previousToken, 0.0, 1.0);
    s.label = h.label;
    return s;
}

}  // namespace parrot
