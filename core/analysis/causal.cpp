#include "core/analysis/causal.h"

#include "base/analysis/capacity.h"
#include "base/analysis/lookup.h"
#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/taskcatalog.h"
#include "base/tasks/tokentask.h"
#include "core/eval/lmtests.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace parrot {

namespace {

struct Measured {
    double answer = 0, answerErr = 0, token = 0, tokenErr = 0;
};

Measured fromCurve(const LengthCurve& c)
{
    if (c.lengths.empty()) throw Error("head importance: the evaluation returned no point");
    return {c.stringAccuracy[0], c.stringStdErr[0], c.charAccuracy[0], c.charStdErr[0]};
}

bool isCopyKind(const QString& kind) { return kind == "copy" || kind == "copy_dup_ngram"; }

}  // namespace

QString HeadImportance::csv() const
{
    QString out = "layer,head,label,order,lookup,answer_accuracy,answer_stderr,answer_drop,answer_drop_stderr,"
                  "token_accuracy,token_stderr,token_drop,token_drop_stderr\n";
    const auto q = [](QString t) { return "\"" + t.replace('"', "\"\"") + "\""; };
    for (const HeadImportanceRow& r : rows)
        out += QString("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13\n")
                   .arg(r.layer).arg(r.head).arg(q(r.label)).arg(r.order).arg(r.lookup, 0, 'g', 4)
                   .arg(r.answer, 0, 'g', 6).arg(r.answerErr, 0, 'g', 4).arg(r.answerDrop, 0, 'g', 6).arg(r.answerDropErr, 0, 'g', 4)
                   .arg(r.token, 0, 'g', 6).arg(r.tokenErr, 0, 'g', 4).arg(r.tokenDrop, 0, 'g', 6).arg(r.tokenDropErr, 0, 'g', 4);
    return out;
}

const HeadImportanceRow* HeadImportance::find(int layer, int head) const
{
    for (const HeadImportanceRow& r : rows)
        if (r.layer == layer && r.head == head) return &r;
    return nullptr;
}

QStringList headImportanceTasks(const InsideSubject& subject)
{
    QStringList out;
    if (subject.languageModel()) {
        for (const LmTestInfo& t : lmTests())
            if (!t.readsData) out << t.id;
    } else if (subject.isConstruction()) {
        out << "copy" << "copy_dup_ngram";
    } else if (!subject.isNull()) {
        const QString own = subject.model().config().task.kind;
        out << own;
        if (own == "copy") out << "copy_dup_ngram";
    }
    return out;
}

int defaultImportanceLength(const InsideSubject& subject, const QString& task)
{
    if (subject.languageModel()) return 20;
    if (subject.isConstruction()) return 40;
    if (subject.isNull()) return 0;
    const TaskConfig& own = subject.model().config().task;
    return task.isEmpty() || task == own.kind ? own.maxLen : std::max(own.maxLen, 2 * own.ngram);
}

namespace {

using Alive = std::function<bool(int, int)>;

// What measureHeadImportance measures, with every head on and with each head off, and one example
// of it for the heads' labels.
struct Measurement {
    std::function<Measured()> measure;
    std::vector<int> example;
};

// The layers and heads of `subject`, into `out`; throws when its heads cannot be switched off.
void countHeads(const InsideSubject& subject, HeadImportance& out)
{
    if (const CopyConstruction* c = subject.construction()) {
        out.layers = 2;
        out.heads = c->heads();
        return;
    }
    const ModelConfig& mc = subject.model().config().model;
    out.layers = mc.layers;
    out.heads = headsPerLayer(mc);
    HeadAblation probe;
    probe.heads = {{0, 0}};
    const QString why = subject.ablationProblem(probe);
    if (!why.isEmpty()) throw Error("head importance: " + why);
}

// A pretrained language model: one of its zero-shot tests (the phone book unless asked).
Measurement lmMeasurement(const InsideSubject& subject, const LanguageModel& lm, const HeadImportanceRequest& request,
                          HeadImportance& out, const Alive& alive)
{
    out.task = request.task.isEmpty() ? lmTests().front().id : request.task;
    checkLmTest(out.task);
    if (findLmTest(out.task)->readsData) throw Error("head importance: " + out.task + " reads a data file; use phonebook, copy-text or shuffled-text");
    out.length = request.length > 0 ? request.length : defaultImportanceLength(subject, out.task);
    Measurement m;
    m.measure = [&lm, &request, &out, &alive] {
        return fromCurve(runLmTest(lm, out.task, {out.length}, request.samples, request.seed, alive));
    };
    std::mt19937_64 rng(request.seed);
    m.example = makeLmPrompt(out.task, out.length, lm.tokenizer, rng).ids;
    return m;
}

// The construction: a copy task of its letters and n.
std::function<Measured()> constructionMeasure(const InsideSubject& subject, const CopyConstruction* c, const HeadImportanceRequest& request,
                                              HeadImportance& out, const Alive& alive, TaskConfig& task)
{
    task.kind = request.task.isEmpty() ? QString("copy") : request.task;
    if (!isCopyKind(task.kind)) throw Error("head importance: the construction copies; use --task copy or copy_dup_ngram, not " + task.kind);
    task.vocabSize = c->options().letters;
    task.ngram = c->options().n;
    out.length = request.length > 0 ? request.length : defaultImportanceLength(subject, task.kind);
    task.minLen = task.maxLen = out.length;
    task.contextLen = 2 * out.length + 4;
    return [&request, &out, &alive, c, kind = task.kind] {
        return fromCurve(c->evaluate({out.length}, request.samples, request.seed, kind, alive));
    };
}

// A model: its own task, or another token task of its vocabulary.
std::function<Measured()> modelMeasure(const InsideSubject& subject, const HeadImportanceRequest& request, HeadImportance& out,
                                       const Alive& alive, TaskConfig& task)
{
    const Model& m = subject.model();
    task = evaluationTask(m.config().task);
    if (!request.task.isEmpty() && request.task != task.kind) {
        task.kind = request.task;
        task.evalKind.clear();
        if (!findTask(request.task)) throw Error(QString("head importance: no task %1 (tasks: %2)").arg(request.task, taskIds().join(", ")));
        if (isVectorTask(request.task)) throw Error(QString("head importance: %1 reads vectors; heads are measured on token tasks").arg(request.task));
        task.contextLen = 65536;  // the examples' own lengths, not the room the model trained with
        if (taskVocabSize(task) != taskVocabSize(m.config().task))
            throw Error(QString("head importance: task %1 reads a vocabulary of %2 tokens, the model %3")
                            .arg(task.kind).arg(taskVocabSize(task)).arg(taskVocabSize(m.config().task)));
    }
    out.length = request.length > 0 ? request.length : defaultImportanceLength(subject, task.kind);
    if (task.kind != m.config().task.kind) task.minLen = task.maxLen = out.length;  // only this length is generated
    return [&request, &out, &alive, model = m, task] {
        return fromCurve(model.evaluate(task, {out.length}, request.samples, request.seed, alive));
    };
}

// The construction or a model, on a token task; the example is one of its evaluation rows, unpadded.
Measurement tokenMeasurement(const InsideSubject& subject, const HeadImportanceRequest& request, HeadImportance& out, const Alive& alive)
{
    TaskConfig task;
    Measurement m;
    if (const CopyConstruction* c = subject.construction()) m.measure = constructionMeasure(subject, c, request, out, alive, task);
    else m.measure = modelMeasure(subject, request, out, alive, task);
    out.task = task.kind;
    const std::unique_ptr<TokenTask> t = TokenTask::create(task);
    const QString problem = t->checkDifficulty(out.length);
    if (!problem.isEmpty()) throw Error("head importance: " + problem);
    std::mt19937_64 rng(request.seed);
    const TokenBatch b = t->evalBatch(out.length, 1, rng);
    m.example.assign(b.input.begin(), b.input.end());
    while (!m.example.empty() && m.example.back() == CopyVocab::Pad) m.example.pop_back();
    return m;
}

// The heads' labels, from the lookup analysis of one example (as the Explore tab shows it).
struct HeadLabels {
    std::unique_ptr<LookupAnalysis> analysis;  // null: heads unlabelled
    ModelProbes probes;

    HeadLabels(const InsideSubject& subject, const std::vector<int>& example)
    {
        try {
            probes = subject.probe(example);
            const auto [begin, end] = subject.lookupQueries(example);
            if (probes.attention.layers > 0) analysis = std::make_unique<LookupAnalysis>(analyseLookup(probes.attention, example, begin, end));
        } catch (const Error&) {
            // an example without the queries a lookup answers: heads unlabelled
        }
    }
    void label(HeadImportanceRow& r) const
    {
        if (!analysis) return;
        for (const HeadLookup& hl : analysis->heads) {
            if (probes.attentionLayers.size() > size_t(hl.layer) ? probes.attentionLayers[size_t(hl.layer)] != r.layer : hl.layer != r.layer) continue;
            if (hl.head != r.head) continue;
            r.label = hl.label;
            r.order = hl.order;
            int n = hl.order;
            if (n == 0)  // its best order
                for (int k = 1; k <= kMaxLookupOrder; ++k)
                    if (hl.scored[size_t(k)] > 0 && (n == 0 || hl.lookup[size_t(k)] > hl.lookup[size_t(n)])) n = k;
            r.lookup = n > 0 ? hl.lookup[size_t(n)] : 0;
        }
    }
};

// Head (l, h) measured off (`m`) against all heads on (`full`).
HeadImportanceRow importanceRow(int l, int h, const Measured& full, const Measured& m)
{
    HeadImportanceRow r;
    r.layer = l, r.head = h;
    r.answer = m.answer, r.answerErr = m.answerErr, r.token = m.token, r.tokenErr = m.tokenErr;
    r.answerDrop = full.answer - m.answer;
    r.tokenDrop = full.token - m.token;
    // independent errors added (the examples are the same, so this is on the safe side)
    r.answerDropErr = std::hypot(full.answerErr, m.answerErr);
    r.tokenDropErr = std::hypot(full.tokenErr, m.tokenErr);
    return r;
}

}  // namespace

HeadImportance measureHeadImportance(const InsideSubject& subject, const HeadImportanceRequest& request,
                                     const std::function<bool(int, int)>& keepGoing)
{
    if (subject.isNull()) throw Error("head importance: nothing to measure");
    if (request.samples < 1) throw Error(QString("head importance: %1 samples, expected at least 1").arg(request.samples));
    HeadImportance out;
    out.subject = subject.name();
    out.samples = request.samples;
    out.seed = request.seed;
    out.method = ablationMethodName(request.method);
    countHeads(subject, out);
    // the evaluations inside poll `alive` too, so that a stop does not wait for a whole head of a large model
    int done = 0;
    bool stopped = false;
    const Alive alive = [&](int, int) {
        if (keepGoing && !keepGoing(done, out.layers * out.heads + 1)) stopped = true;
        return !stopped;
    };
    const LanguageModel* lm = subject.languageModel();
    const Measurement measurement = lm ? lmMeasurement(subject, *lm, request, out, alive) : tokenMeasurement(subject, request, out, alive);
    Measured full;
    try {
        full = measurement.measure();
    } catch (const Error&) {
        if (!stopped) throw;
    }
    out.answer = full.answer, out.answerErr = full.answerErr, out.token = full.token, out.tokenErr = full.tokenErr;
    done = 1;
    if (stopped || !alive(0, 0)) {
        out.complete = false;
        return out;
    }
    const HeadLabels labels(subject, measurement.example);
    for (int l = 0; l < out.layers && !stopped; ++l)
        for (int h = 0; h < out.heads && !stopped; ++h) {
            HeadAblation off;
            off.method = request.method;
            off.heads = {{l, h}};
            Measured m;
            try {
                const SubjectHeadsOff scope(subject, off);
                m = measurement.measure();
            } catch (const Error&) {
                if (!stopped) throw;
            }
            if (stopped) break;  // this head measured in part: left out
            HeadImportanceRow r = importanceRow(l, h, full, m);
            labels.label(r);
            out.rows.push_back(r);
            done = int(out.rows.size()) + 1;
            if (!alive(0, 0)) break;
        }
    out.complete = !stopped;
    std::stable_sort(out.rows.begin(), out.rows.end(), [](const HeadImportanceRow& a, const HeadImportanceRow& b) {
        if (a.answerDrop != b.answerDrop) return a.answerDrop > b.answerDrop;
        return a.tokenDrop > b.tokenDrop;
    });
    return out;
}

QString StateSweep::csv() const
{
    QString out = "setting,state_bits,bound_length,length,answer_accuracy,answer_stderr,token_accuracy,token_stderr\n";
    for (const StateSweepPoint& p : points)
        for (size_t i = 0; i < p.curve.lengths.size(); ++i)
            out += QString("\"%1\",%2,%3,%4,%5,%6,%7,%8\n").arg(p.label).arg(p.stateBits, 0, 'f', 0).arg(p.boundLength, 0, 'g', 6)
                       .arg(p.curve.lengths[i]).arg(p.curve.stringAccuracy[i], 0, 'g', 6).arg(p.curve.stringStdErr[i], 0, 'g', 4)
                       .arg(p.curve.charAccuracy[i], 0, 'g', 6).arg(p.curve.charStdErr[i], 0, 'g', 4);
    return out;
}

std::vector<StateShrink> defaultStateSweep(StateShrink::Mode mode, int dState)
{
    std::vector<StateShrink> out;
    switch (mode) {
    case StateShrink::Mode::Dims:
        for (int k = dState / 2; k >= 1; k /= 2) out.push_back(StateShrink::keepDims(k));
        break;
    case StateShrink::Mode::Channels:
        for (double f : {0.5, 0.25, 0.125, 0.0625}) out.push_back(StateShrink::keepChannels(f));
        break;
    case StateShrink::Mode::Bits:
        for (int b : {16, 8, 4, 2, 1}) out.push_back(StateShrink::quantise(b));
        break;
    case StateShrink::Mode::None: break;
    }
    return out;
}

namespace {

QString settingLabel(const StateShrink& s, int dState)
{
    switch (s.mode) {
    case StateShrink::Mode::Dims: return QString("d_state %1 of %2").arg(s.dims).arg(dState);
    case StateShrink::Mode::Channels: return QString("%1% of channels").arg(s.fraction * 100, 0, 'g', 3);
    case StateShrink::Mode::Bits: return QString("%1-bit state").arg(s.bits);
    case StateShrink::Mode::None: break;
    }
    return "whole state (32-bit floats)";
}

}  // namespace

StateSweep measureStateSweep(const Model& model, const QString& name, StateShrink::Mode mode, const std::vector<StateShrink>& settings,
                             const std::vector<int>& lengths, int samples, unsigned long long seed,
                             const std::function<bool(int, int)>& keepGoing)
{
    if (model.isNull()) throw Error("state sweep: no model");
    const Model::StateLayout layout = model.stateLayout();
    if (layout.channels.empty())
        throw Error(QString("state sweep: %1 has no state-space layers to shrink (Mamba, S4D and the hybrids have)").arg(name));
    if (isVectorTask(model.config().task.kind)) throw Error("state sweep: the model reads vectors; the sweep scores token tasks");
    StateSweep out;
    out.subject = name;
    out.mode = stateShrinkModeName(mode);
    out.task = evaluationTask(model.config().task).kind;
    out.vocab = model.config().task.vocabSize;
    out.copyTask = isCopyKind(out.task);
    out.samples = samples;
    out.seed = seed;
    std::vector<StateShrink> all{StateShrink{}};
    for (const StateShrink& s : settings.empty() ? defaultStateSweep(mode, layout.dState) : settings) {
        if (s.mode != mode) throw Error(QString("state sweep: a %1 setting in a sweep of %2").arg(stateShrinkModeName(s.mode), out.mode));
        const QString why = model.shrinkProblem(s);
        if (!why.isEmpty()) throw Error("state sweep: " + why);
        all.push_back(s);
    }
    const std::vector<int> ls = lengths.empty() ? evaluationLengths(model.config().task) : lengths;
    for (size_t i = 0; i < all.size(); ++i) {
        StateSweepPoint p;
        p.shrink = all[i];
        p.label = settingLabel(all[i], layout.dState);
        p.stateBits = model.stateBits(all[i]);
        p.boundLength = p.stateBits > 0 ? crossingLength(p.stateBits, out.vocab) : 0;
        {
            const StateShrunk scope(model, all[i]);
            p.curve = model.evaluate(ls, samples, seed);
        }
        p.longestCopied = longestCopied(p.curve);
        out.points.push_back(p);
        if (keepGoing && !keepGoing(int(i) + 1, int(all.size())) && i + 1 < all.size()) {
            out.complete = false;
            break;
        }
    }
    return out;
}

}  // namespace parrot
