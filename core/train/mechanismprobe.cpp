#include "core/train/mechanismprobe.h"

#include "base/analysis/mechanisms.h"
#include "base/error.h"
#include "base/modelcatalog.h"
#include "core/modelimpl.h"
#include "core/train/losses.h"

namespace parrot {

namespace {

// Row `b` of every layer's maps, all (layers, B, H, T, T) on the CPU: layers x H x T x T.
AttentionMaps rowMaps(const torch::Tensor& all, int64_t b)
{
    AttentionMaps a;
    const auto row = all.select(1, b).contiguous();  // (layers, H, T, T)
    a.layers = int(row.size(0));
    a.heads = int(row.size(1));
    a.length = int(row.size(2));
    a.weights.assign(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
    return a;
}

}  // namespace

MechanismProbe::MechanismProbe(const ExperimentConfig& c)
{
    if (!mechanismsApply(c)) throw Error(QString("mechanism scores: nothing to score in a %1 on %2").arg(c.model.kind, c.task.kind));
    const auto task = TokenTask::create(c.task);
    std::mt19937_64 rng(kSeed);
    const ModelFamily& family = familyOf(c.model);
    // the maps a probe keeps per example: every attention head's and each selective block's, T x T
    const double maps = double(c.model.layers) * headsPerLayer(c.model) + (family.selectiveScan ? c.model.layers : 0);
    std::vector<Example> examples;
    for (int i = 0; i < kExamples; ++i) {
        examples.push_back(task->evalExample(c.task.maxLen, rng));
        m_length = std::max(m_length, int(examples.back().tokens.size()));
        if (double(examples.size()) * maps * m_length * m_length >= kMapFloats) break;
    }
    for (const Example& e : examples) {
        const auto q = scoredQueries(e);
        if (q.second <= q.first) throw Error(QString("mechanism scores: a %1 example has no answers to score").arg(c.task.kind));
        std::vector<int> row = task->modelInput(e);  // what the model reads (MQAR's answers are filler)
        row.resize(size_t(m_length), CopyVocab::Pad);  // after the example: causal maps before it are unchanged
        m_rows.push_back(std::move(row));
        m_queries.push_back(q);
    }
}

MechanismScores MechanismProbe::score(Model::Impl& m) const
{
    MechanismScores out;
    out.step = m.step;
    std::vector<int64_t> ids;
    for (const auto& row : m_rows) ids.insert(ids.end(), row.begin(), row.end());
    Probes probes;
    probes.mapsOnly = true;
    probes.implicitRows = kImplicitExamples;
    {
        torch::NoGradGuard noGrad;
        const bool training = m.net->is_training();
        m.net->eval();
        const auto idx = toTensor(ids, int(m_rows.size()), m_length, m.device);  // (B, T)
        m.net->hidden(m.net->embed(idx), &probes);                              // the head's logits are not needed
        m.net->train(training);
    }
    // each kind of map analysed row by row on its own example's queries, then pooled over the rows
    const auto analyse = [&](std::vector<torch::Tensor> layers, const std::vector<int>& blocks, bool implicit) {
        if (layers.empty()) return;
        // implicit attention: |alpha| rows as shares of the row, so that a block's scores read as an
        // attention head's (the share of the row on the token to copy); one head per block
        if (implicit)
            for (auto& t : layers) t = (t / t.sum(-1, true).clamp_min(1e-12)).unsqueeze(1);  // (B, T, T) -> (B, 1, T, T)
        const auto all = torch::stack(layers).to(torch::kCPU, torch::kFloat).contiguous();  // (layers, B, H, T, T)
        std::vector<LookupAnalysis> rows;
        for (size_t b = 0; b < size_t(all.size(1)); ++b)  // every example, or the implicit maps' first few
            rows.push_back(analyseLookup(rowMaps(all, int64_t(b)), m_rows[b], m_queries[b].first, m_queries[b].second));
        for (const HeadLookup& h : poolLookups(rows)) out.heads.push_back(headScore(h, blocks.at(size_t(h.layer)), implicit));
    };
    analyse(probes.attention, probes.attentionLayer, false);
    analyse(probes.implicitAttention, probes.implicitLayer, true);
    return out;
}

}  // namespace parrot
