#include "base/experiments/results.h"

#include "base/io/textfile.h"
#include "base/modelcatalog.h"
#include "base/tasks/tokentask.h"

#include <algorithm>
#include <map>
#include <set>

namespace parrot {

QString gradeSymbol(Grade g)
{
    switch (g) {
    case Grade::Pass: return QStringLiteral("\u2713");
    case Grade::Partial: return QStringLiteral("\u25B2");
    case Grade::Fail: return QStringLiteral("\u2717");
    default: return QString();
    }
}

QString gradeRules()
{
    return QStringLiteral(
        "Accuracy tasks: \u2713 mean answer accuracy >= 90% (MAD's tasks and MQAR: per answer token, as MAD and Zoology "
        "score them); "
        "\u25B2 at least halfway from chance to perfect (chance: 50% for sparse parity, one in the values or letters for a "
        "single-token guess, else 0%); \u2717 below. In-context regression (squared error / d after the "
        "most examples): \u2713 within 0.1 x the zero predictor's error of the best baseline; \u25B2 below half the "
        "zero predictor's error; \u2717 otherwise. Seeds are averaged.");
}

namespace {

QString taskLabel(const TaskConfig& t)
{
    const TaskConfig e = evaluationTask(t);
    QString label = e.kind;
    if (e.kind.contains("ngram")) label += QString(" (n=%1)").arg(e.ngram);
    if (!t.evalKind.isEmpty()) label = t.kind + " \u2192 " + label;
    return label;
}

struct Measured {
    double value = 0;
    bool error = false;
    double chance = 0;          // accuracy
    double zero = 0, best = 0;  // error: the zero predictor's and the best other baseline's
    bool baselines = false;
    QString where;
};

bool measure(const RunRecord& r, ResultPoint point, Measured& m)
{
    if (r.curves.empty() || r.curves.back().empty()) return false;
    const LengthCurve& c = r.curves.back();
    const size_t last = c.lengths.size() - 1;
    m.error = c.isError();
    if (m.error) {
        m.value = c.error[last];
        m.where = QString("after %1 examples").arg(c.lengths[last]);
        for (size_t b = 0; b < c.baselineNames.size(); ++b) {
            if (c.baselineError[b].size() <= last) continue;
            const double e = c.baselineError[b][last];
            if (c.baselineNames[b] == "zero") {
                m.zero = e;
                m.baselines = true;
            } else {
                m.best = m.best > 0 ? std::min(m.best, e) : e;
            }
        }
        return true;
    }
    m.chance = chanceLevel(r.config.task);
    size_t i = last;
    if (point == ResultPoint::InRange) {
        const auto it = std::find(c.lengths.begin(), c.lengths.end(), r.config.task.maxLen);
        if (it != c.lengths.end()) i = size_t(it - c.lengths.begin());
    }
    const TaskInfo* info = findTask(r.config.task.kind);
    m.value = gradedAccuracy(r, c, i);
    m.where = QString("at %1 %2").arg(info ? info->difficulty : QString("length")).arg(c.lengths[i]);
    return true;
}

Grade grade(const Measured& m, double value)
{
    if (m.error) {
        if (!m.baselines || m.zero <= 0) return Grade::None;
        if (value <= m.best + 0.1 * m.zero) return Grade::Pass;
        return value <= 0.5 * m.zero ? Grade::Partial : Grade::Fail;
    }
    if (value >= 0.9) return Grade::Pass;
    return value >= m.chance + 0.5 * (1 - m.chance) ? Grade::Partial : Grade::Fail;
}

// "mamba d64 N2", "transformer/hard_alibi d128 L2", "lstm d160": the sizes that tell models apart.
QString shortModel(const RunRecord& r)
{
    const ModelConfig& m = r.config.model;
    QString s = QString("%1 d%2").arg(r.architecture()).arg(m.dModel);
    if (const ModelFamily* f = findFamily(m.kind); f && f->stateSpace) s += QString(" N%1").arg(m.dState);
    if (const ModelFamily* f = findFamily(m.kind); f && f->options.contains("forget_gate"))
        s += QString(" K%1%2").arg(m.headDim).arg(m.forgetGate ? "" : " ungated");
    if (m.layers != 2) s += QString(" L%1").arg(m.layers);
    if (m.init == "mimetic") s += " mimetic";
    return s;
}

QString thousands(long long n) { return n >= 1000 ? QString::number(n / 1000.0, 'f', n >= 100000 ? 0 : 1) + "k" : QString::number(n); }

}  // namespace

double gradedAccuracy(const RunRecord& r, const LengthCurve& c, size_t i)
{
    const TaskInfo* info = findTask(r.config.task.kind);
    return info && info->tokenScored && c.charAccuracy.size() > i ? c.charAccuracy[i] : c.stringAccuracy[i];
}

long long examplesToReach(const RunRecord& r, double threshold)
{
    if (r.curves.empty() || r.curves.back().isError()) return -1;
    for (const RunRecord::Row& row : r.metrics)
        if (row.target >= threshold) return row.examples;
    return -1;
}

QString examplesToText(const ResultCell& c)
{
    QStringList each;
    bool any = false;
    for (long long n : c.examplesTo90) {
        each << (n >= 0 ? thousands(n) : QString("never"));
        any = any || n >= 0;
    }
    if (!any) return QString("not within %1").arg(thousands(c.examplesSeen));
    return each.join(", ");
}

ResultsTable tabulate(const std::vector<RunRecord>& runs, ResultPoint point, const std::map<QString, QString>& rateOfRunDir)
{
    // One architecture that comes in several sizes is one column per size.
    std::map<QString, std::set<QString>> sizes;
    for (const RunRecord& r : runs) sizes[r.architecture()].insert(shortModel(r));
    auto modelLabel = [&](const RunRecord& r) { return sizes[r.architecture()].size() > 1 ? shortModel(r) : r.architecture(); };
    ResultsTable t;
    struct Acc {
        std::vector<double> values;
        std::vector<long long> to90;
        QStringList rates;
        long long seen = 0;
        int evaluatedDuringTraining = 0;
        Measured m;
    };
    std::map<std::pair<int, int>, Acc> acc;
    for (const RunRecord& r : runs) {
        Measured m;
        if (!measure(r, point, m)) continue;
        const QString task = taskLabel(r.config.task), model = modelLabel(r);
        if (!t.tasks.contains(task)) t.tasks << task;
        if (!t.models.contains(model)) t.models << model;
        Acc& a = acc[{int(t.tasks.indexOf(task)), int(t.models.indexOf(model))}];
        if (a.values.empty()) a.m = m;
        a.values.push_back(m.value);
        a.to90.push_back(examplesToReach(r));
        if (const auto rate = rateOfRunDir.find(r.dir); rate != rateOfRunDir.end() && !a.rates.contains(rate->second)) a.rates << rate->second;
        const auto evaluated = std::count_if(r.metrics.begin(), r.metrics.end(), [](const RunRecord::Row& row) { return row.target >= 0; });
        a.evaluatedDuringTraining += evaluated > 1;
        if (!r.metrics.empty()) a.seen = std::max(a.seen, r.metrics.back().examples);
    }
    t.cells.assign(size_t(t.tasks.size()), std::vector<ResultCell>(size_t(t.models.size())));
    for (const auto& [key, a] : acc) {
        ResultCell& cell = t.cells[size_t(key.first)][size_t(key.second)];
        double sum = 0;
        QStringList each;
        for (double v : a.values) {
            sum += v;
            each << (a.m.error ? QString::number(v, 'f', 3) : QString::number(100 * v, 'f', 0) + "%");
        }
        cell.runs = int(a.values.size());
        cell.value = sum / cell.runs;
        cell.grade = grade(a.m, cell.value);
        const QString value = a.m.error ? QString("error %1").arg(cell.value, 0, 'f', 3)
                                        : QString("accuracy %1%").arg(100 * cell.value, 0, 'f', 1);
        QString rule;
        if (a.m.error)
            rule = a.m.baselines ? QString("zero predictor %1, best baseline %2; \u2713 <= %3, \u25B2 <= %4")
                                       .arg(a.m.zero, 0, 'f', 3).arg(a.m.best, 0, 'f', 3)
                                       .arg(a.m.best + 0.1 * a.m.zero, 0, 'f', 3).arg(0.5 * a.m.zero, 0, 'f', 3)
                                 : QString("no baselines in the evaluation: not graded");
        else
            rule = QString("\u2713 >= 90%, \u25B2 >= %1%").arg(100 * (a.m.chance + 0.5 * (1 - a.m.chance)), 0, 'f', 0);
        cell.detail = QString("%1 %2 (%3 run%4: %5); %6").arg(value, a.m.where).arg(cell.runs).arg(cell.runs == 1 ? "" : "s")
                          .arg(each.join(", "), rule);
        cell.rate = a.rates.join(", ");
        if (!cell.rate.isEmpty()) cell.detail += QString("; learning rate %1, the best on held-out prompts").arg(cell.rate);
        if (!a.m.error && a.evaluatedDuringTraining == cell.runs) {
            cell.examplesTo90 = a.to90;
            cell.examplesSeen = a.seen;
            const bool reached = std::any_of(a.to90.begin(), a.to90.end(), [](long long n) { return n >= 0; });
            cell.detail += reached ? QString("; 90% reached after %1 examples").arg(examplesToText(cell))
                                   : QString("; 90% not reached within %1 examples").arg(thousands(cell.examplesSeen));
        }
    }
    return t;
}

namespace {

// "✓ 93.8%", "▲ 0.412", with " lr 0.01" in a thorough sweep ("!" at the grid's edge); "-" for no run.
QString cellText(const ResultCell& c)
{
    if (c.runs == 0) return "-";
    const bool isAccuracy = c.detail.startsWith("accuracy");
    QString s = (c.grade == Grade::None ? QString("?") : gradeSymbol(c.grade)) + " " +
                (isAccuracy ? QString::number(100 * c.value, 'f', 1) + "%" : QString::number(c.value, 'f', 3));
    if (!c.rate.isEmpty()) s += " lr " + c.rate.section(' ', 0, 0) + (c.rate.contains("of the grid") ? "!" : "");
    return s;
}

}  // namespace

QString ResultsTable::toText() const
{
    int w0 = 4;
    for (const QString& s : tasks) w0 = std::max(w0, int(s.size()));
    std::vector<int> w;
    for (int j = 0; j < models.size(); ++j) {
        int width = std::max(9, int(models[j].size()));
        for (const auto& row : cells) width = std::max(width, int(cellText(row[size_t(j)]).size()));
        w.push_back(width);
    }
    QString out = QString("%1").arg("task", -w0);
    for (int j = 0; j < models.size(); ++j) out += "  " + QString("%1").arg(models[j], -w[size_t(j)]);
    out += "\n";
    for (int i = 0; i < tasks.size(); ++i) {
        out += QString("%1").arg(tasks[i], -w0);
        for (int j = 0; j < models.size(); ++j) out += "  " + QString("%1").arg(cellText(cells[size_t(i)][size_t(j)]), -w[size_t(j)]);
        out += "\n";
    }
    // Training efficiency: the examples each model needed, per run, where it was evaluated during training.
    QStringList speed;
    for (int i = 0; i < tasks.size(); ++i)
        for (int j = 0; j < models.size(); ++j) {
            const ResultCell& c = cells[size_t(i)][size_t(j)];
            if (!c.examplesTo90.empty()) speed << QString("  %1, %2: %3").arg(tasks[i], models[j], examplesToText(c));
        }
    if (!speed.isEmpty()) out += "\nexamples seen when accuracy first reached 90% (per run):\n" + speed.join("\n") + "\n";
    if (std::any_of(cells.begin(), cells.end(), [](const auto& row) {
            return std::any_of(row.begin(), row.end(), [](const ResultCell& c) { return c.rate.contains("of the grid"); });
        }))
        out += "\nlr X!: the best rate is at the edge of the grid; a rate beyond it may do better\n";
    return out;
}

QString ResultsTable::toCsv() const
{
    static const char* grades[] = {"pass", "partial", "fail", "none"};
    QString out = "task,model,grade,value,runs,detail\n";
    for (int i = 0; i < tasks.size(); ++i)
        for (int j = 0; j < models.size(); ++j) {
            const ResultCell& c = cells[size_t(i)][size_t(j)];
            if (c.runs == 0) continue;
            out += QString("%1,%2,%3,%4,%5,%6\n")
                       .arg(csvField(tasks[i]), csvField(models[j]), grades[int(c.grade)], QString::number(c.value, 'g', 6))
                       .arg(c.runs)
                       .arg(csvField(c.detail));
        }
    return out;
}

}  // namespace parrot
