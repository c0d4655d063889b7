#include "figures/figures.h"

#include "base/analysis/capacity.h"
#include "base/error.h"
#include "base/experiments/results.h"
#include "base/figurecatalog.h"
#include "base/io/textfile.h"
#include "base/modelcatalog.h"
#include "base/tasks/taskcatalog.h"
#include "base/tasks/tokentask.h"
#include "figures/export.h"
#include "figures/plotkit.h"

#include <qcustomplot.h>

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <cmath>
#include <stdexcept>
#include <limits>
#include <map>

namespace parrot {

QColor architectureColour(const QString& a) { return QColor::fromRgb(QRgb(architectureRgb(a))); }

namespace {

struct Series {
    QString label, architecture;
    std::vector<const RunRecord*> runs;
};

// Runs whose experiments differ only in seed (and name) form one series. A sweep's series is
// named by its run name without the seed ("hard-alibi", "mamba-suffix"), others by their model,
// with the task when the series do not all share one.
std::vector<Series> group(const std::vector<RunRecord>& runs)
{
    std::vector<Series> out;
    std::vector<QByteArray> keys;
    QStringList tasks;
    for (const RunRecord& r : runs) {
        ExperimentConfig c = r.config;
        c.seed = 0;
        c.name.clear();
        c.description.clear();
        const QByteArray key = QJsonDocument(toJson(c)).toJson(QJsonDocument::Compact);
        size_t i = 0;
        while (i < keys.size() && keys[i] != key) ++i;
        if (i == keys.size()) {
            keys.push_back(key);
            QString label = describeModel(r.config.model);
            const QString run = r.config.name.section('/', 1);
            if (!run.isEmpty() && run != "run") {
                QStringList parts = run.split('_');
                parts.removeIf([](const QString& p) { return p.startsWith("seed-"); });
                for (QString& p : parts)  // a thorough sweep's rate: "mamba lr 0.01"
                    if (p.startsWith("lr-")) p = "lr " + p.mid(3);
                if (!parts.isEmpty()) label = parts.join(' ');
            }
            out.push_back({label, r.architecture(), {}});
        }
        out[i].runs.push_back(&r);
        const QString task = evaluationTask(r.config.task).kind;
        if (!tasks.contains(task)) tasks << task;
    }
    for (Series& s : out) {
        if (tasks.size() > 1 && !s.runs.front()->config.name.contains('/'))
            s.label += " \u00b7 " + evaluationTask(s.runs.front()->config.task).kind;
        if (s.runs.size() > 1) s.label += QString(" (%1 seeds)").arg(s.runs.size());
    }
    return out;
}

// Series of one architecture share its hue, told apart by lightness and dashes, in the order they
// come (`seen` counts them per architecture).
struct SeriesStyle {
    QColor colour;
    Qt::PenStyle dash;
};
SeriesStyle seriesStyle(const QString& architecture, std::map<QString, int>& seen)
{
    static const Qt::PenStyle dashes[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine};
    static const int shades[] = {100, -150, 140, -210, 170};  // darker(-x) or lighter(x), in percent
    const int k = seen[architecture]++ % 5;
    const QColor base = architectureColour(architecture);
    return {shades[k] < 0 ? base.darker(-shades[k]) : base.lighter(shades[k]), dashes[k]};
}

struct Points {
    std::vector<double> x, mean, sd;
};

// Mean and standard deviation over the series' runs of y(x), at the x values of the first run.
template <class F> Points average(const Series& s, F valuesOf)
{
    Points p;
    std::vector<std::vector<std::pair<double, double>>> all;
    for (const RunRecord* r : s.runs) all.push_back(valuesOf(*r));
    if (all.empty() || all[0].empty()) return p;
    for (const auto& [x, y0] : all[0]) {
        double sum = 0, sumSq = 0;
        int n = 0;
        for (const auto& run : all)
            for (const auto& [xx, y] : run)
                if (xx == x) {
                    sum += y;
                    sumSq += y * y;
                    ++n;
                    break;
                }
        const double mean = sum / n;
        p.x.push_back(x);
        p.mean.push_back(mean);
        p.sd.push_back(n > 1 ? std::sqrt(std::max(0.0, (sumSq - n * mean * mean) / (n - 1))) : 0.0);
    }
    return p;
}

std::vector<std::pair<double, double>> finalCurve(const RunRecord& r, bool error)
{
    std::vector<std::pair<double, double>> v;
    if (r.curves.empty()) return v;
    const LengthCurve& c = r.curves.back();
    if (c.isError() != error) return v;
    // accuracies as the results table grades them (per answer token for MAD's tasks and MQAR)
    for (size_t i = 0; i < c.lengths.size(); ++i)
        v.push_back({double(c.lengths[i]), error ? c.valueAt(i) : gradedAccuracy(r, c, i)});
    return v;
}

// Seeds see different numbers of examples and take different times per step: evaluations are
// averaged by step, then placed at the step's mean examples seen or wall time.
std::vector<std::pair<double, double>> efficiencyByStep(const RunRecord& r)
{
    std::vector<std::pair<double, double>> v;
    for (const RunRecord::Row& row : r.metrics)
        if (row.target >= 0) v.push_back({double(row.step), row.target});
    return v;
}

std::vector<std::pair<double, double>> lossByStep(const RunRecord& r)
{
    std::vector<std::pair<double, double>> v;
    for (const RunRecord::Row& row : r.metrics) v.push_back({double(row.step), row.loss});
    return v;
}

// The small legend the comparison figures share: curves under it stay visible.
void showLegend(QCustomPlot& plot)
{
    plot.legend->setVisible(true);
    plot.legend->setFont(QFont("sans", 8));
    plot.legend->setBrush(QColor(255, 255, 255, 215));
}

void addTitle(QCustomPlot& plot, const QString& title)
{
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, title, QFont("sans", 11, QFont::Bold)));
}

// The size of the model `config` describes, measured by the caller's FigureOptions::measure.
ModelSize sizeOf(const FigureOptions& options, const ExperimentConfig& config)
{
    if (!options.measure) throw std::logic_error("the capacity and frontier figures need FigureOptions::measure");
    return options.measure(config);
}

// A series of the capacity view: its model's state and the longest length its runs copied
// (seeds averaged; -1 when none was evaluated).
struct CapacityRow {
    const Series* s;
    ModelSize size;
    double copied;
};

// The capacity view's rows; `maxLen` grows to the longest length evaluated and past the crossing
// of each fixed state, `smallest` gets the smallest fixed state in bits at precision p.
std::vector<CapacityRow> capacityRows(const std::vector<Series>& series, const FigureOptions& options, int vocab, double& maxLen,
                                      double& smallest)
{
    const int p = std::clamp(options.precision, 1, 64);  // as drawCapacity clamps it
    std::vector<CapacityRow> rows;
    for (const Series& s : series) {
        const ModelSize size = sizeOf(options, s.runs.front()->config);
        double copied = 0;
        int n = 0;
        for (const RunRecord* r : s.runs)
            if (!r->curves.empty()) {
                copied += longestCopied(r->curves.back());
                ++n;
                for (int L : r->curves.back().lengths) maxLen = std::max(maxLen, double(L));
            }
        rows.push_back({&s, size, n > 0 ? copied / n : -1});
        if (size.stateFloatsPerToken == 0 && size.stateFloats > 0) {
            smallest = std::min(smallest, double(size.stateFloats) * p);
            maxLen = std::max(maxLen, crossingLength(double(size.stateFloats) * 32, vocab) * 1.5);
        }
    }
    maxLen = std::min(maxLen, 1e7);
    return rows;
}

// The capacity view's graphs, each also written to its CSV (lines sampled at about 40 points).
class CapacityLines {
public:
    CapacityLines(QCustomPlot& plot, QString& csv) : m_plot(plot), m_csv(csv) {}
    QCPGraph* add(const QString& name, const QVector<double>& x, const QVector<double>& y, const QPen& pen, bool legend,
                  QCPAxis* valueAxis = nullptr)
    {
        QCPGraph* g = m_plot.addGraph(m_plot.xAxis, valueAxis ? valueAxis : m_plot.yAxis);
        g->setData(x, y, true);
        g->setPen(pen);
        g->setName(legendName(name));
        if (!legend) g->removeFromLegend();
        for (int i = 0; i < x.size(); i += std::max<int>(1, int(x.size()) / 40))
            m_csv += QString("\"%1\",line,%2,%3\n").arg(name).arg(x[i]).arg(y[i], 0, 'g', 6);
        return g;
    }
    // One point, no line: a marker of `style`.
    void mark(const QString& name, double x, double y, const QCPScatterStyle& style)
    {
        QCPGraph* g = add(name, {x}, {y}, Qt::NoPen, false);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(style);
    }

private:
    QCustomPlot& m_plot;
    QString& m_csv;
};

// Row i of the capacity view: its state's lines (once for the rows with the same state), where a
// fixed state is outgrown, and the longest length it copied.
void drawCapacityRow(CapacityLines& lines, QString& csv, const std::vector<CapacityRow>& rows, size_t i, const QColor& colour,
                     const QVector<double>& xs, int p, int vocab)
{
    const auto sameState = [](const CapacityRow& a, const CapacityRow& b) {
        return a.size.stateFloats == b.size.stateFloats && a.size.stateFloatsPerToken == b.size.stateFloatsPerToken;
    };
    const CapacityRow& r = rows[i];
    const QString label = r.s->label;
    // Series with the same state (Transformers with any positions: the same KV cache) share one
    // line, named by all of them, instead of lines drawn over each other with one colour showing.
    const bool drawn = std::any_of(rows.begin(), rows.begin() + ptrdiff_t(i), [&](const CapacityRow& o) { return sameState(o, r); });
    if (!drawn) {
        QStringList sharing;
        for (const CapacityRow& o : rows)
            if (sameState(o, r)) sharing << o.s->label;
        QVector<double> y32, yp;
        for (double L : xs) {
            const double floats = double(r.size.stateFloats) + double(r.size.stateFloatsPerToken) * L;
            y32 << floats * 32;
            yp << floats * p;
        }
        lines.add(sharing.join(", ") + ": state at 32 bits", xs, y32, QPen(colour, 2), true);
        QPen dashed(colour, 1.5, Qt::DashLine);
        lines.add(QString("%1: at %2 bits").arg(sharing.join(", ")).arg(p), xs, yp, dashed, false);
    }
    if (!drawn && r.size.stateFloatsPerToken == 0 && r.size.stateFloats > 0) {  // where the string outgrows the state
        const double cross = crossingLength(double(r.size.stateFloats) * p, vocab);
        lines.mark(QString(), cross, double(r.size.stateFloats) * p, QCPScatterStyle(QCPScatterStyle::ssCross, colour, 9));
        csv += QString("\"%1\",crossing,%2,%3\n").arg(label).arg(cross).arg(double(r.size.stateFloats) * p);
    }
    if (r.copied > 0) {  // measured: the longest copied length, on the effective-precision line
        const double m = (double(r.size.stateFloats) + double(r.size.stateFloatsPerToken) * r.copied) * p;
        lines.mark(label + ": longest copied (\u2265 90%)", r.copied, m, QCPScatterStyle(QCPScatterStyle::ssCircle, colour, colour, 10));
        csv += QString("\"%1\",measured,%2,%3\n").arg(label).arg(r.copied).arg(m);
    }
}

// The capacity view: bits against string length, log-log. The string's bits L log2|V| (black),
// each series' state in bits at 32-bit floats (solid) and at the effective precision (dashed;
// a Transformer's KV cache grows with L), the crossing where the string outgrows the state
// (marked), the longest length each series copied (>= 90% strings, seeds averaged; a filled
// dot on its effective-precision line), and on the right axis the bound on the copy error,
// 1 - 2^m / |V|^L, for the smallest state.
QString drawCapacity(QCustomPlot& plot, const std::vector<Series>& series, const FigureOptions& options)
{
    const int vocab = series.front().runs.front()->config.task.vocabSize;
    const int p = std::clamp(options.precision, 1, 64);
    QString csv = "series,kind,x,y\n";
    showLegend(plot);
    double maxLen = 8, smallest = std::numeric_limits<double>::infinity();
    const std::vector<CapacityRow> rows = capacityRows(series, options, vocab, maxLen, smallest);
    QVector<double> xs;
    for (double L = 1; L <= maxLen * 1.0001; L *= 1.05) xs << L;
    CapacityLines lines(plot, csv);
    QVector<double> bits;
    for (double L : xs) bits << L * std::log2(double(vocab));
    lines.add(QString("bits in the string (L log2 %1)").arg(vocab), xs, bits, QPen(Qt::black, 2), true);
    std::map<QString, int> perColour;
    for (size_t i = 0; i < rows.size(); ++i)
        drawCapacityRow(lines, csv, rows, i, seriesStyle(rows[i].s->architecture, perColour).colour, xs, p, vocab);
    if (std::isfinite(smallest)) {  // the probability bound, for the smallest fixed state
        QVector<double> err;
        for (double L : xs) err << minimumCopyError(smallest, int(std::lround(L)), vocab);
        plot.yAxis2->setVisible(true);
        plot.yAxis2->setLabel("minimum copy error (smallest state)");
        plot.yAxis2->setRange(0, 1.05);
        lines.add(QString("copy error bound, %1 bits").arg(smallest, 0, 'g', 4), xs, err, QPen(QColor(120, 120, 120), 1.5, Qt::DotLine), true,
                  plot.yAxis2);
    }
    for (QCPAxis* axis : {plot.xAxis, plot.yAxis}) axis->setScaleType(QCPAxis::stLogarithmic);
    plot.xAxis->setTicker(integerTicker(true));  // lengths
    plot.yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot.yAxis->setNumberFormat("eb");  // every bit count as a power of ten, not 10000 below 10^6
    plot.yAxis->setNumberPrecision(0);
    plot.xAxis->setLabel(QString("string length L (alphabet of %1)").arg(vocab));
    plot.yAxis->setLabel(QString("bits (dashed: state at %1 bits per float)").arg(p));
    plot.xAxis->setRange(1, maxLen);
    plot.yAxis->rescale();
    plot.yAxis->setRange(std::max(1.0, plot.yAxis->range().lower / 2), plot.yAxis->range().upper * 2);
    addTitle(plot, "State capacity against the bits of the string");
    plot.replot();
    return csv;
}

// Zoology / Based (Arora et al. 2023, 2024): recall accuracy against the state a model carries,
// one point per series (mean over seeds) at the largest number of key-value pairs evaluated.
// A Transformer's state is its KV cache at that prompt's length; a fixed state is counted at
// 32 bits a float. The bound: P values of log2|values| bits each cannot all be kept in fewer
// bits, so at most m / (P log2|values|) of them are recalled and the rest guessed; drawn at 32
// bits a float and at the effective precision.
QString drawFrontier(QCustomPlot& plot, const std::vector<Series>& series, const FigureOptions& options)
{
    const TaskConfig task = evaluationTask(series.front().runs.front()->config.task);
    if (!isRecallTask(task.kind))
        throw Error(QString("--figure frontier: needs associative-recall runs (%1), not %2").arg(recallTaskIds().join(" or "), task.kind));
    const int p = std::clamp(options.precision, 1, 64);
    const int values = task.vocabSize - task.vocabSize / 2;
    QString csv = "series,state_bits,accuracy,pairs\n";
    showLegend(plot);
    std::map<QString, int> perColour;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    int pairs = 0;
    for (const Series& s : series) {
        double acc = 0;
        int n = 0, at = 0;
        for (const RunRecord* r : s.runs) {
            if (r->curves.empty() || r->curves.back().lengths.empty()) continue;
            const LengthCurve& c = r->curves.back();
            const size_t last = c.lengths.size() - 1;
            acc += c.charAccuracy.size() > last ? c.charAccuracy[last] : c.stringAccuracy[last];
            at = c.lengths[last];
            ++n;
        }
        if (n == 0) continue;
        pairs = std::max(pairs, at);
        const RunRecord& r = *s.runs.front();
        const ModelSize size = sizeOf(options, r.config);
        const int tokens = TokenTask::create(evaluationTask(r.config.task))->maxTokens(at);
        const double bits = (double(size.stateFloats) + double(size.stateFloatsPerToken) * tokens) * 32;
        lo = std::min(lo, bits);
        hi = std::max(hi, bits);
        const QColor colour = seriesStyle(s.architecture, perColour).colour;
        QCPGraph* dot = plot.addGraph();
        dot->setName(legendName(s.label));  // (the pairs are on the axis: short entries, more legend columns)
        dot->setLineStyle(QCPGraph::lsNone);
        dot->setScatterStyle(QCPScatterStyle(size.stateFloatsPerToken > 0 ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, colour,
                                             colour, 10));
        dot->setData(QVector<double>{bits}, QVector<double>{acc / n});
        csv += QString("\"%1\",%2,%3,%4\n").arg(s.label).arg(bits, 0, 'g', 8).arg(acc / n, 0, 'g', 6).arg(at);
    }
    if (pairs == 0) throw Error("--figure frontier: the runs have no evaluation yet");
    const double need = pairs * std::log2(double(values));  // bits to hold every value
    lo = std::max(1.0, std::min(lo, need) / 4);  // the bound's knee in view, however far above it the models are
    hi = std::max(lo * 16, hi * 4);
    for (const int bitsPerFloat : {32, p}) {
        QVector<double> x, y;
        for (double m = lo; m <= hi * 1.0001; m *= 1.1) {
            const double kept = std::min(1.0, m * bitsPerFloat / 32.0 / need);
            x << m;
            y << kept + (1 - kept) / values;
        }
        QCPGraph* g = plot.addGraph();
        g->setData(x, y, true);
        g->setPen(QPen(QColor(90, 90, 90), 1.5, bitsPerFloat == 32 ? Qt::SolidLine : Qt::DashLine));
        g->setName(QString("bound (%1 \u00d7 %2 bits), %3-bit floats").arg(pairs).arg(std::log2(double(values)), 0, 'g', 3).arg(bitsPerFloat));
        for (int i = 0; i < x.size(); i += std::max<int>(1, int(x.size()) / 30))
            csv += QString("\"bound at %1 bits\",%2,%3,%4\n").arg(bitsPerFloat).arg(x[i], 0, 'g', 6).arg(y[i], 0, 'g', 6).arg(pairs);
        if (p == 32) break;
    }
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot.xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot.xAxis->setNumberFormat("eb");
    plot.xAxis->setNumberPrecision(0);
    plot.xAxis->setLabel("recurrent state at the prompt's end (bits, float32; squares: a KV cache)");
    plot.yAxis->setLabel(QString("accuracy at %1 pairs").arg(pairs));
    plot.xAxis->setRange(lo, hi);
    plot.yAxis->setRange(0, 1.05);
    addTitle(plot, "Recall against state size");
    plot.replot();
    return csv;
}

// Back to QCustomPlot's linear axes, no graphs, items or title: a plot may be drawn on again.
void resetPlot(QCustomPlot& plot)
{
    plot.clearPlottables();  // graphs, and the training range's legend key
    plot.clearItems();
    for (QCPAxis* axis : {plot.xAxis, plot.yAxis, plot.yAxis2}) {  // linear unless asked again
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        axis->setNumberFormat("gb");  // QCustomPlot's defaults (the capacity figure writes powers of ten)
        axis->setNumberPrecision(6);
    }
    plot.yAxis2->setVisible(false);
    for (QCPLayoutElement* e : plot.plotLayout()->elements(false))  // a title from an earlier drawing
        if (qobject_cast<QCPTextElement*>(e)) plot.plotLayout()->remove(e);
    plot.plotLayout()->simplify();
    keepLegendOffData(plot);
}

// A series' points on the curve figures (length, icl, loss, efficiency, efficiency-time), seeds averaged.
Points seriesPoints(const Series& s, const QString& figure)
{
    const bool error = figure == "icl";
    Points p = figure.startsWith("efficiency") ? average(s, efficiencyByStep)
               : figure == "loss"              ? average(s, lossByStep)
                                               : average(s, [&](const RunRecord& r) { return finalCurve(r, error); });
    if (figure.startsWith("efficiency")) {  // steps -> the runs' mean examples seen or wall time at that step
        for (double& x : p.x) {
            double sum = 0;
            int n = 0;
            for (const RunRecord* r : s.runs)
                for (const RunRecord::Row& row : r->metrics)
                    if (double(row.step) == x) {
                        sum += figure == "efficiency" ? double(row.examples) : row.wallSeconds;
                        ++n;
                        break;
                    }
            x = n > 0 ? sum / n : x;
        }
    }
    return p;
}

// A series' curve, with the band between mean - std and mean + std over its seeds; its points into `csv`.
void drawSeries(QCustomPlot& plot, const Series& s, const Points& p, const SeriesStyle& style, const QString& figure, QString& csv)
{
    const bool error = figure == "icl";
    QVector<double> x(p.x.begin(), p.x.end()), y(p.mean.begin(), p.mean.end()), lo, hi;
    for (size_t i = 0; i < p.x.size(); ++i) {
        // accuracies stay in [0, 1]; errors above 0
        lo << std::max(0.0, p.mean[i] - p.sd[i]);
        hi << (error || figure == "loss" ? p.mean[i] + p.sd[i] : std::min(1.0, p.mean[i] + p.sd[i]));
        csv += QString("\"%1\",%2,%3,%4\n").arg(s.label).arg(p.x[i]).arg(p.mean[i], 0, 'g', 6).arg(p.sd[i], 0, 'g', 6);
    }
    if (s.runs.size() > 1) {  // the seed band
        QColor fill = style.colour;
        fill.setAlpha(45);
        QCPGraph* low = plot.addGraph();
        low->setData(x, lo, true);
        low->setPen(Qt::NoPen);
        low->removeFromLegend();
        QCPGraph* high = plot.addGraph();
        high->setData(x, hi, true);
        high->setPen(Qt::NoPen);
        high->setBrush(fill);
        high->setChannelFillGraph(low);
        high->removeFromLegend();
    }
    QCPGraph* g = plot.addGraph();
    g->setName(legendName(s.label));
    g->setData(x, y, true);
    QPen pen(style.colour, 2);
    pen.setStyle(style.dash);
    g->setPen(pen);
    if (figure != "loss") g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, style.colour, Qt::white, 5));
}

// The in-context figure: the run's baselines (least squares, ...), grey.
void drawBaselines(QCustomPlot& plot, const RunRecord& run, QString& csv)
{
    if (run.curves.empty()) return;
    const LengthCurve& c = run.curves.back();
    for (size_t b = 0; b < c.baselineNames.size(); ++b) {
        QCPGraph* g = plot.addGraph();
        QPen pen(QColor(70 + 35 * int(b), 70 + 35 * int(b), 70 + 35 * int(b)), 1.2);
        pen.setStyle(b % 2 ? Qt::DashLine : Qt::DotLine);
        g->setPen(pen);
        g->setName(c.baselineNames[b]);
        QVector<double> x, y;
        for (size_t i = 0; i < c.lengths.size(); ++i) {
            x << c.lengths[i];
            y << c.baselineError[b][i];
            csv += QString("\"%1\",%2,%3,\n").arg(c.baselineNames[b]).arg(c.lengths[i]).arg(c.baselineError[b][i], 0, 'g', 6);
        }
        g->setData(x, y, true);
    }
}

// The axes' labels of a curve figure; for the length figure also the first run's training range,
// returned as a band (nullptr for the others).
QCPItemRect* labelAxes(QCustomPlot& plot, const std::vector<RunRecord>& runs, const QString& figure)
{
    const TaskConfig& t = runs.front().config.task;
    if (figure == "length") {
        // What the x axis counts (string length, entries, pairs), and the task when it is only one.
        QStringList kinds;
        for (const RunRecord& r : runs)
            if (!kinds.contains(evaluationTask(r.config.task).kind)) kinds << evaluationTask(r.config.task).kind;
        const TaskInfo* info = findTask(kinds.front());
        const QString counts = info ? info->difficulty : QString("length");
        plot.xAxis->setLabel(kinds.size() == 1 ? QString("%1 (task %2)").arg(counts, kinds.front()) : counts);
        plot.yAxis->setLabel("answer accuracy");
        plot.yAxis->setRange(-0.02, 1.02);
        auto* band = new QCPItemRect(&plot);
        band->setPen(Qt::NoPen);
        band->setBrush(QColor(0, 0, 0, 22));
        band->setLayer("background");
        band->topLeft->setCoords(t.minLen - 0.5, 1.02);
        band->bottomRight->setCoords(t.maxLen + 0.5, -0.02);
        addBandKey(plot, band, "training range");
        return band;
    }
    if (figure == "efficiency" || figure == "efficiency-time") {
        plot.xAxis->setLabel(figure == "efficiency" ? "examples seen" : "wall time of training (s)");
        plot.yAxis->setLabel(QString("answer accuracy at length %1").arg(t.maxLen));
        plot.yAxis->setRange(-0.02, 1.02);
    } else if (figure == "loss") {
        plot.xAxis->setLabel("training step");
        plot.yAxis->setLabel("training loss (cross-entropy, nats)");
    } else {
        plot.xAxis->setLabel("in-context examples");
        plot.yAxis->setLabel("squared error / d");
    }
    return nullptr;
}

// Chance, where it is visibly above zero: sparse parity's sign, or a one-letter lookup answer.
void drawChance(QCustomPlot& plot, double chance)
{
    auto* line = new QCPItemStraightLine(&plot);
    line->point1->setCoords(0, chance);
    line->point2->setCoords(1, chance);
    line->setPen(QPen(QColor(90, 90, 90), 1, Qt::DotLine));
    auto* label = new QCPItemText(&plot);
    label->position->setType(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(plot.xAxis->range().upper, chance);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    label->setText(QString("chance %1%").arg(100 * chance, 0, 'g', 3));
    label->setFont(QFont("sans", 8));
    label->setColor(QColor(90, 90, 90));
}

// A log axis from just below the smallest positive value drawn (zeros and negatives are not
// drawn): the keys' (x) or the values'; whole-number ticks for counted keys.
void logAxis(QCustomPlot& plot, QCPAxis* axis, bool keys, bool counts)
{
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int g = 0; g < plot.graphCount(); ++g)
        for (auto it = plot.graph(g)->data()->constBegin(); it != plot.graph(g)->data()->constEnd(); ++it) {
            const double v = keys ? it->key : it->value;
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    if (!(hi > 0)) return;
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(keys && counts ? integerTicker(true) : QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
    axis->setRange(std::max(lo * 0.8, hi * 1e-6), hi * 1.25);
}

// The ranges of a curve figure once its graphs are drawn, the training range's band kept inside them.
void fitRanges(QCustomPlot& plot, const QString& figure, QCPItemRect* band, const TaskConfig& t)
{
    plot.rescaleAxes(true);
    if (figure == "loss") plot.yAxis->setRange(0, plot.yAxis->range().upper * 1.05);
    else if (figure != "icl") plot.yAxis->setRange(-0.02, 1.02);
    else plot.yAxis->setRange(0, std::min(plot.yAxis->range().upper, 4.0) * 1.05);
    plot.xAxis->setRange(figure.startsWith("efficiency") || figure == "loss" ? 0 : plot.xAxis->range().lower - 0.5,
                         plot.xAxis->range().upper * 1.03 + 0.5);
    if (band)  // inside the axes: SVG has no clipping, so the band must not reach past them
        band->topLeft->setCoords(std::max(t.minLen - 0.5, plot.xAxis->range().lower), 1.02);
}

// What a curve figure needs from a run, for the message when none has it.
QString curveNeeds(const QString& figure)
{
    return figure.startsWith("efficiency") ? "evaluations during training"
           : figure == "icl"              ? "an in-context error curve"
           : figure == "loss"             ? "metrics.csv rows"
                                          : "a final accuracy curve";
}

QString curveTitle(const QString& figure)
{
    return figure == "length"                ? "Accuracy against length"
           : figure.startsWith("efficiency") ? "Training efficiency"
           : figure == "loss"                ? "Training loss"
                                             : "In-context error against examples";
}

}  // namespace

QString drawComparison(QCustomPlot& plot, const std::vector<RunRecord>& runs, const QString& figure, const FigureOptions& options)
{
    if (runs.empty()) throw Error("compare: no runs given");
    checkFigure(figure, CompareFigure);
    resetPlot(plot);
    const std::vector<Series> series = group(runs);
    if (figure == "capacity") return drawCapacity(plot, series, options);
    if (figure == "frontier") return drawFrontier(plot, series, options);
    std::map<QString, int> perColour;  // series sharing an architecture's colour get their own dashes
    showLegend(plot);
    QString csv = "series,x,y,std\n";
    int drawn = 0;
    for (const Series& s : series) {
        const Points p = seriesPoints(s, figure);
        if (p.x.empty()) continue;
        ++drawn;
        drawSeries(plot, s, p, seriesStyle(s.architecture, perColour), figure, csv);
    }
    if (drawn == 0)
        throw Error(QString("compare: none of the runs has what the %1 figure needs (%2)").arg(figure, curveNeeds(figure)));
    const RunRecord& first = runs.front();
    if (figure == "icl") drawBaselines(plot, first, csv);
    QCPItemRect* band = labelAxes(plot, runs, figure);
    fitRanges(plot, figure, band, first.config.task);
    const double chance = chanceLevel(first.config.task);
    if (figure != "icl" && figure != "loss" && chance > 0.005) drawChance(plot, chance);
    const bool counts = figure != "efficiency-time";  // lengths, examples, steps: whole numbers
    if (counts) plot.xAxis->setTicker(integerTicker());
    if (options.logX) logAxis(plot, plot.xAxis, true, counts);
    if (options.logY) logAxis(plot, plot.yAxis, false, counts);
    addTitle(plot, curveTitle(figure));
    plot.replot();
    return csv;
}

void checkFigureFile(const QString& outFile, int width, int height)
{
    ExportOptions o;
    o.width = width;
    o.height = height;
    checkExport(outFile, o);
}

void savePlot(QCustomPlot& plot, const QString& outFile, int width, int height, const QString& title, const QString& csv,
              const ExportOptions& style)
{
    ExportOptions o = style;
    o.width = width;
    o.height = height;
    checkExport(outFile, o);
    if (QFileInfo(outFile).suffix().toLower() != "csv") return exportPlot(plot, outFile, o, title);
    writeTextFile(outFile, csv, "the figure");
}

void renderComparison(const std::vector<RunRecord>& runs, const QString& figure, const QString& outFile, int width, int height,
                      const FigureOptions& options, const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(width, height));
    const QString csv = drawComparison(plot, runs, figure, options);
    savePlot(plot, outFile, width, height, figure, csv, style);
}

}  // namespace parrot
