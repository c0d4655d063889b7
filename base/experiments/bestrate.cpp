#include "base/experiments/bestrate.h"

#include "base/error.h"
#include "base/experiments/results.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace parrot {

namespace {

constexpr double kWorst = -std::numeric_limits<double>::infinity();

// A finished run's held-out score (higher is better); nullopt without a held-out check.
std::optional<double> heldOutScore(const RunRecord& r)
{
    const LengthCurve& v = r.validation;
    if (v.empty()) return std::nullopt;
    const size_t last = v.lengths.size() - 1;
    if (v.isError()) return v.error.size() > last && std::isfinite(v.error[last]) ? -v.error[last] : kWorst;
    return gradedAccuracy(r, v, last);
}

// The rate a thorough run trains at: its last train.lr override (the thorough grid's).
double rateOf(const SweepRun& run)
{
    for (qsizetype i = run.overrides.size() - 1; i >= 0; --i)
        if (run.overrides[i].startsWith("train.lr=")) return run.overrides[i].section('=', 1).toDouble();
    return run.config.train.lr;
}

double finalLoss(const RunRecord& r) { return r.metrics.empty() ? std::numeric_limits<double>::infinity() : r.metrics.back().loss; }

QString rateNumber(double lr) { return QString::number(lr, 'g', 3); }

using RunsByRate = std::map<double, std::vector<const RunRecord*>>;

// The mean final training loss of a rate's finished runs; infinite without one.
double meanFinalLoss(const RunsByRate& runs, double lr)
{
    const auto it = runs.find(lr);
    if (it == runs.end() || it->second.empty()) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (const RunRecord* r : it->second) sum += finalLoss(*r);
    return sum / double(it->second.size());
}

// The rate with the best mean held-out score; ties go to the lower mean final training loss.
void choose(RateChoice& c, const RunsByRate& runs)
{
    double best = kWorst;
    for (const RateTrial& t : c.trials) {
        const double m = t.mean();
        if (std::isnan(m)) continue;
        const bool better = c.lr == 0 || m > best + 1e-12
                            || (std::abs(m - best) <= 1e-12 && meanFinalLoss(runs, t.lr) < meanFinalLoss(runs, c.lr));
        if (better) {
            best = m;
            c.lr = t.lr;
        }
    }
    c.atEdge = c.trials.size() > 1 && c.lr > 0 && (c.lr == c.trials.front().lr || c.lr == c.trials.back().lr);
}

}  // namespace

double RateTrial::mean() const
{
    const size_t ended = scores.size() + size_t(diverged);
    if (ended == 0) return std::nan("");
    if (diverged > 0) return kWorst;
    double sum = 0;
    for (double s : scores) sum += s;
    return sum / double(ended);
}

QString RateChoice::rateText() const
{
    if (lr == 0) return QString();
    QString s = rateNumber(lr);
    if (atEdge) s += lr == trials.front().lr ? " (bottom of the grid)" : " (top of the grid)";
    if (!complete) {
        int ended = 0, all = 0;
        for (const RateTrial& t : trials) {
            ended += int(t.scores.size()) + t.diverged + t.unchecked;
            all += int(t.scores.size()) + t.diverged + t.unchecked + t.pending;
        }
        s += QString(" (so far: %1 of %2 runs)").arg(ended).arg(all);
    }
    return s;
}

QString RateChoice::trialsText() const
{
    QStringList parts;
    for (const RateTrial& t : trials) {
        QString s = rateNumber(t.lr) + ": ";
        const double m = t.mean();
        if (t.diverged > 0) s += QString("diverged %1 of %2").arg(t.diverged).arg(int(t.scores.size()) + t.diverged + t.pending + t.unchecked);
        else if (std::isnan(m)) s += t.unchecked > 0 ? QString("no held-out check") : QString("pending");
        else s += error ? QString("error %1").arg(-m, 0, 'f', 3) : QString("%1%").arg(100 * m, 0, 'f', 1);
        if (t.pending > 0 && !std::isnan(m)) s += QString(" (%1 pending)").arg(t.pending);
        parts << s;
    }
    return parts.join(" \u00b7 ");
}

QString BestRates::toText() const
{
    if (choices.empty()) return QString();
    QString out = "learning rate chosen per model on held-out prompts (mean over seeds at each rate):\n";
    for (const RateChoice& c : choices)
        out += QString("  %1: %2   [%3]\n").arg(c.model, c.lr > 0 ? c.rateText() : QString("none yet"), c.trialsText());
    return out;
}

BestRates chooseBestRates(const SweepPlan& plan, const std::vector<RunRecord>& finished)
{
    std::map<QString, const RunRecord*> byName;
    for (const RunRecord& r : finished) byName[QFileInfo(r.dir).fileName()] = &r;
    BestRates out;
    std::map<QString, size_t> index;
    std::map<QString, RunsByRate> records;  // model -> rate -> its finished runs
    for (const SweepRun& run : plan.runs) {
        if (run.model.isEmpty()) continue;
        if (!index.count(run.model)) {
            index[run.model] = out.choices.size();
            RateChoice c;
            c.model = run.model;
            out.choices.push_back(c);
        }
        RateChoice& c = out.choices[index[run.model]];
        const double lr = rateOf(run);
        auto t = std::find_if(c.trials.begin(), c.trials.end(), [lr](const RateTrial& x) { return x.lr == lr; });
        if (t == c.trials.end()) {
            RateTrial trial;
            trial.lr = lr;
            const auto at = std::upper_bound(c.trials.begin(), c.trials.end(), lr, [](double a, const RateTrial& x) { return a < x.lr; });
            t = c.trials.insert(at, trial);
        }
        const auto found = byName.find(run.name);
        if (found != byName.end()) {
            const RunRecord& r = *found->second;
            c.error = !r.validation.empty() && r.validation.isError();
            if (const auto s = heldOutScore(r)) t->scores.push_back(*s);
            else ++t->unchecked;
            records[run.model][lr].push_back(&r);
        } else if (runStatus(run.runDir) == "diverged") {
            ++t->diverged;
        } else {
            ++t->pending;
        }
    }
    for (RateChoice& c : out.choices) {
        c.complete = std::all_of(c.trials.begin(), c.trials.end(), [](const RateTrial& t) { return t.pending == 0; });
        choose(c, records[c.model]);
        if (c.lr == 0) continue;
        for (const RunRecord* r : records[c.model][c.lr]) {
            out.runs.push_back(*r);
            out.rateOfRunDir[r->dir] = c.rateText();
        }
    }
    return out;
}

std::vector<RunRecord> loadResultRuns(const QString& dir, BestRates* rates, int* skipped)
{
    std::vector<RunRecord> all = loadRunsUnder(dir, skipped);
    if (rates) *rates = BestRates{};
    std::optional<SweepPlan> index;
    try {
        index = readSweepIndex(dir);
    } catch (const Error&) {  // a damaged index: the folder's runs as they are
    }
    if (!index || !index->thorough) return all;
    std::vector<RunRecord> finished;
    std::copy_if(all.begin(), all.end(), std::back_inserter(finished), [](const RunRecord& r) { return r.status == "finished"; });
    BestRates chosen = chooseBestRates(*index, finished);
    std::vector<RunRecord> runs = chosen.runs;
    if (rates) *rates = std::move(chosen);
    return runs;
}

}  // namespace parrot
