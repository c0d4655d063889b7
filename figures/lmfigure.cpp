#include "figures/lmfigure.h"

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
    QString csv = "model,size,accuracy,stderr,token_accuracy,token_stderr\n";
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
            const double x = s.curve.lengths[i], y = s.curve.stringAccuracy[i];
            g->addData(x, y);
            err << s.curve.stringStdErr[i];
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            csv += QString("%1,%2,%3,%4,%5,%6\n").arg(s.name).arg(s.curve.lengths[i]).arg(y).arg(s.curve.stringStdErr[i])
                       .arg(s.curve.charAccuracy[i]).arg(s.curve.charStdErr[i]);
        }
        bars->setData(err);
    }
    plot.xAxis->setLabel(test ? QString("%1 (%2)").arg(test->size, test->label.toLower()) : testId);
    plot.yAxis->setLabel("answer accuracy");
    plot.yAxis->setRange(-0.02, 1.02);
    if (lo <= hi) {
        const bool wide = lo > 0 && hi / lo >= 8;  // sizes spanning an order of magnitude read better on a log axis
        plot.xAxis->setScaleType(wide ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        plot.xAxis->setTicker(integerTicker(wide));  // sizes are counts (lines, tokens)
        if (wide) plot.xAxis->setRange(lo / 1.25, hi * 1.25);
        else plot.xAxis->setRange(lo - 0.05 * (hi - lo) - 0.5, hi + 0.05 * (hi - lo) + 0.5);
    }
    plot.legend->setVisible(!series.empty());
    keepLegendOffData(plot);
    return csv;
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
