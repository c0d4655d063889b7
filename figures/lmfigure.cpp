#include "figures/lmfigure.h"

#include "base/io/textfile.h"
#include "core/eval/lmtests.h"
#include "figures/export.h"
#include "figures/figures.h"
#include "figures/plotkit.h"
#include "qcustomplot.h"

#include <map>

namespace parrot {

QString drawLmCurves(QCustomPlot& plot, const std::vector<LmSeries>& series, const QString& testId)
{
    plot.clearGraphs();
    plot.clearItems();
    plot.clearPlottables();
    const LmTestInfo* test = findLmTest(testId);
    // question answering is drawn by F1 (its second measure), the others by whole answers right
    const bool second = test && test->readsData;
    QString csv = second ? "model,size,exact_match,stderr,f1,f1_stderr\n" : "model,size,accuracy,stderr,token_accuracy,token_stderr\n";
    std::map<QString, int> seen;  // shades within an architecture: Pythias in one hue, Mambas in another
    double lo = 1e300, hi = -1e300;
    for (const LmSeries& s : series) {
        const int k = seen[s.architecture]++;
        const QColor base = architectureColour(s.architecture == "Mamba" ? "mamba" : "transformer");
        const QColor colour = k % 2 ? base.lighter(100 + 35 * ((k + 1) / 2)) : base.darker(100 + 30 * (k / 2));
        QCPGraph* g = plot.addGraph();
        g->setName(s.name);
        g->setPen(QPen(colour, 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colour, colour, 6));
        auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
        bars->removeFromLegend();
        bars->setPen(QPen(colour, 1));
        bars->setDataPlottable(g);
        QVector<double> err;
        for (size_t i = 0; i < s.curve.lengths.size(); ++i) {
            const double x = s.curve.lengths[i];
            g->addData(x, second ? s.curve.charAccuracy[i] : s.curve.stringAccuracy[i]);
            err << (second ? s.curve.charStdErr[i] : s.curve.stringStdErr[i]);
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            csv += QString("%1,%2,%3,%4,%5,%6\n").arg(s.name).arg(s.curve.lengths[i]).arg(s.curve.stringAccuracy[i]).arg(s.curve.stringStdErr[i])
                       .arg(s.curve.charAccuracy[i]).arg(s.curve.charStdErr[i]);
        }
        bars->setData(err);
    }
    plot.xAxis->setLabel(second ? QString("paragraph length in tokens (each point: the bucket from there to the next size)")
                         : test ? QString("%1 (%2)").arg(test->size, test->label.toLower()) : testId);
    plot.yAxis->setLabel(test ? (second ? test->secondMeasure : test->measure) : QString("answer accuracy"));
    plot.yAxis->setRange(-0.02, 1.02);
    if (lo <= hi) {
        // sizes spanning an order of magnitude read better on a log axis (not buckets: they start at their lower edge)
        const bool wide = !second && lo > 0 && hi / lo >= 8;
        plot.xAxis->setScaleType(wide ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        plot.xAxis->setTicker(integerTicker(wide));  // sizes are counts (lines, tokens)
        if (wide) plot.xAxis->setRange(lo / 1.25, hi * 1.25);
        else plot.xAxis->setRange(lo - 0.05 * (hi - lo) - 0.5, hi + 0.05 * (hi - lo) + 0.5);
    }
    plot.legend->setVisible(!series.empty());
    keepLegendOffData(plot);
    return csv;
}

bool measureAt(const LmSeries& s, const QString& testId, int size, double* value, double* stdErr)
{
    const LmTestInfo* test = findLmTest(testId);
    const bool second = test && test->readsData;
    for (size_t i = 0; i < s.curve.lengths.size(); ++i)
        if (s.curve.lengths[i] == size) {
            *value = second ? s.curve.charAccuracy[i] : s.curve.stringAccuracy[i];
            *stdErr = second ? s.curve.charStdErr[i] : s.curve.stringStdErr[i];
            return true;
        }
    return false;
}

int largestCommonSize(const std::vector<LmSeries>& series, const QString& testId)
{
    if (series.empty()) return 0;
    const std::vector<int>& sizes = series.front().curve.lengths;
    for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
        bool everywhere = true;
        double v = 0, e = 0;
        for (const LmSeries& s : series) everywhere = everywhere && measureAt(s, testId, *it, &v, &e);
        if (everywhere) return *it;
    }
    return 0;
}

QString drawLossVsRetrieval(QCustomPlot& plot, const std::vector<LossRetrievalPoint>& points, const QString& testId, int size)
{
    plot.clearGraphs();
    plot.clearItems();
    plot.clearPlottables();
    const LmTestInfo* test = findLmTest(testId);
    const bool second = test && test->readsData;
    QString csv = "model,architecture,perplexity,loss,size,accuracy,stderr\n";
    std::map<QString, int> seen;
    double lo = 1e300, hi = 0;
    for (const LossRetrievalPoint& p : points) {
        const int k = seen[p.architecture]++;
        const QColor base = architectureColour(p.architecture == "Mamba" ? "mamba" : "transformer");
        const QColor colour = k % 2 ? base.lighter(100 + 35 * ((k + 1) / 2)) : base.darker(100 + 30 * (k / 2));
        QCPGraph* g = plot.addGraph();
        g->setName(p.name);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(p.architecture == "Mamba" ? QCPScatterStyle::ssDiamond : QCPScatterStyle::ssCircle,
                                           colour, colour, 11));
        g->addData(p.perplexity, p.accuracy);
        auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
        bars->removeFromLegend();
        bars->setPen(QPen(colour, 1.2));
        bars->setDataPlottable(g);
        bars->setData(QVector<double>{p.stdErr});
        auto* label = new QCPItemText(&plot);
        label->position->setCoords(p.perplexity, p.accuracy);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(8, 0, 0, 4));
        label->setText(p.name);
        label->setColor(colour);
        lo = std::min(lo, p.perplexity);
        hi = std::max(hi, p.perplexity);
        csv += QString("%1,%2,%3,%4,%5,%6,%7\n").arg(csvField(p.name), p.architecture).arg(p.perplexity, 0, 'g', 8).arg(p.loss, 0, 'g', 8)
                   .arg(size).arg(p.accuracy).arg(p.stdErr);
    }
    plot.xAxis->setLabel("perplexity on the text (lower: better language model)");
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot.xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    if (lo <= hi) plot.xAxis->setRange(lo / 1.5, hi * 1.5);
    const QString measure = test ? (second ? test->secondMeasure : test->measure) : QString("accuracy");
    plot.yAxis->setLabel(QString("%1, %2 at %3 %4").arg(measure, test ? test->label.toLower() : testId).arg(size).arg(test ? test->size : QString()));
    plot.yAxis->setRange(-0.02, 1.05);
    plot.legend->setVisible(!points.empty());
    keepLegendOffData(plot);
    return csv;
}

void renderLossVsRetrieval(const std::vector<LossRetrievalPoint>& points, const QString& testId, int size, const QString& outFile,
                           int width, int height, const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    QCustomPlot plot;
    plot.resize(layoutSize(width, height));
    const QString csv = drawLossVsRetrieval(plot, points, testId, size);
    savePlot(plot, outFile, width, height, "Perplexity against retrieval (Jelassi et al. 2024, section 5)", csv, style);
}

void renderLmCurves(const std::vector<LmSeries>& series, const QString& testId, const QString& outFile, int width, int height,
                    const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    QCustomPlot plot;
    plot.resize(layoutSize(width, height));  // width x height points
    const QString csv = drawLmCurves(plot, series, testId);
    const LmTestInfo* test = findLmTest(testId);
    savePlot(plot, outFile, width, height, test ? test->label + ", zero-shot, greedy" : testId, csv, style);
}

}  // namespace parrot
