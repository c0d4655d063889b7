#include "figures/causalfigure.h"

#include "base/analysis/capacity.h"
#include "figures/figures.h"
#include "figures/plotkit.h"

#include <qcustomplot.h>

#include <algorithm>
#include <functional>
#include <cmath>

namespace parrot {

QString drawHeadImportance(QCustomPlot& plot, const HeadImportance& hi)
{
    plot.clearPlottables();
    plot.clearItems();
    plot.plotLayout()->clear();
    auto* rect = new QCPAxisRect(&plot);
    plot.plotLayout()->addElement(0, 0, rect);
    plot.xAxis = rect->axis(QCPAxis::atBottom);
    plot.yAxis = rect->axis(QCPAxis::atLeft);
    auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
    map->data()->setSize(hi.heads, hi.layers);
    map->data()->setRange(QCPRange(0, hi.heads - 1), QCPRange(0, hi.layers - 1));
    double extent = 0.05;
    for (const HeadImportanceRow& r : hi.rows) {
        map->data()->setCell(r.head, r.layer, r.answerDrop);
        extent = std::max(extent, std::abs(r.answerDrop));
    }
    QCPColorGradient diverging;
    diverging.setColorStopAt(0, QColor(33, 102, 172));
    diverging.setColorStopAt(0.5, QColor(247, 247, 247));
    diverging.setColorStopAt(1, QColor(178, 24, 43));
    diverging.setNanHandling(QCPColorGradient::nhNanColor);
    diverging.setNanColor(QColor(220, 220, 220));
    map->setGradient(diverging);
    map->setDataRange(QCPRange(-extent, extent));
    map->setInterpolate(false);
    auto* scale = new QCPColorScale(&plot);
    plot.plotLayout()->addElement(0, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->setLabel("drop in whole answers right");
    map->setColorScale(scale);  // the scale's gradient and range are the map's from here on
    scale->setGradient(diverging);
    scale->setDataRange(QCPRange(-extent, extent));
    auto* group = new QCPMarginGroup(&plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    // each cell's drop in percent, and the lookup heads' order, while the cells are large enough
    if (hi.layers * hi.heads <= 96)
        for (const HeadImportanceRow& r : hi.rows) {
            auto* text = new QCPItemText(&plot);
            text->position->setCoords(r.head, r.layer);
            QString s = QString::number(std::lround(r.answerDrop * 100));
            if (r.label.contains("lookup")) s += QString("\nlookup n=%1").arg(r.order);
            text->setText(s);
            text->setFont(QFont("sans", hi.layers * hi.heads <= 32 ? 9 : 7));
            text->setColor(std::abs(r.answerDrop) > 0.6 * extent ? Qt::white : Qt::black);
            text->setClipToAxisRect(true);
        }
    plot.xAxis->setLabel("head");
    plot.yAxis->setLabel("layer");
    for (QCPAxis* a : {plot.xAxis, plot.yAxis}) {
        a->setTicker(integerTicker());
        a->grid()->setVisible(false);
    }
    plot.xAxis->setRange(-0.5, hi.heads - 0.5);
    plot.yAxis->setRange(-0.5, hi.layers - 0.5);
    plot.yAxis->setRangeReversed(true);  // layer 0 on top, as the Explore tab's rows
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, QString("Head importance: %1, %2 at length %3, %4 examples, heads %5")
                                                                    .arg(hi.subject, hi.task).arg(hi.length).arg(hi.samples)
                                                                    .arg(hi.method == "zero" ? "zeroed" : "mean-ablated"),
                                                          QFont("sans", 10, QFont::Bold)));
    plot.plotLayout()->insertRow(1);
    plot.plotLayout()->addElement(1, 0, new QCPTextElement(&plot, QString("full model: %1% of answers right (± %2)")
                                                                    .arg(hi.answer * 100, 0, 'f', 1).arg(hi.answerErr * 100, 0, 'f', 1),
                                                          QFont("sans", 9)));
    plot.replot();
    return hi.csv();
}

QString drawStateSweep(QCustomPlot& plot, const StateSweep& sweep)
{
    plot.clearPlottables();
    plot.clearItems();
    plot.legend->setVisible(true);
    plot.legend->setFont(QFont("sans", 8));
    plot.legend->setBrush(Qt::NoBrush);
    plot.legend->setBorderPen(Qt::NoPen);
    const QList<QColor> colours{QColor(0, 0, 0), QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                                QColor(214, 39, 40), QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194)};
    double lo = 1e9, hi = 1;
    for (const StateSweepPoint& p : sweep.points) {
        for (int L : p.curve.lengths) lo = std::min(lo, double(L)), hi = std::max(hi, double(L));
        if (sweep.copyTask && p.boundLength > 0) hi = std::max(hi, p.boundLength * 1.6);
    }
    hi = std::min(hi, 1e7);
    const double logV = std::log2(double(std::max(2, sweep.vocab)));
    for (size_t i = 0; i < sweep.points.size(); ++i) {
        const StateSweepPoint& p = sweep.points[i];
        const QColor c = colours[int(i) % colours.size()];
        QVector<double> x, y;
        for (size_t j = 0; j < p.curve.lengths.size(); ++j) x << p.curve.lengths[j], y << p.curve.stringAccuracy[j];
        QCPGraph* g = plot.addGraph();
        g->setData(x, y, true);
        g->setPen(QPen(c, 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 6));
        QString name = p.label;
        if (sweep.copyTask && p.boundLength > 0)
            name += QString(": %1 bits, bound %2").arg(QLocale(QLocale::English).toString(p.stateBits, 'f', 0))
                        .arg(QLocale(QLocale::English).toString(p.boundLength, 'f', 0));
        g->setName(legendName(name, 60));
        if (!sweep.copyTask || p.boundLength <= 0) continue;
        // accuracy <= 2^(m - L log2|V|): a cliff at the crossing length, dashed in the same colour
        QVector<double> bx, by;
        for (double L = std::max(1.0, lo / 1.5); L <= hi; L *= 1.02) {
            bx << L;
            by << std::min(1.0, std::exp2(std::min(60.0, p.stateBits - L * logV)));
        }
        QCPGraph* b = plot.addGraph();
        b->setData(bx, by, true);
        b->setPen(QPen(c, 1.5, Qt::DashLine));
        b->removeFromLegend();
    }
    if (sweep.copyTask) {
        QCPGraph* key = plot.addGraph();
        key->setPen(QPen(Qt::gray, 1.5, Qt::DashLine));
        key->setName("dashed: each state's bound, accuracy \u2264 2^(m \u2212 L log2|V|)");
    }
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot.xAxis->setTicker(integerTicker(true));
    plot.xAxis->setRange(std::max(1.0, lo / 1.5), hi);
    plot.yAxis->setRange(-0.02, 1.05);
    plot.xAxis->setLabel(QString("string length L (%1, alphabet of %2)").arg(sweep.task).arg(sweep.vocab));
    plot.yAxis->setLabel("strings copied exactly");
    if (plot.plotLayout()->rowCount() < 2 || !qobject_cast<QCPTextElement*>(plot.plotLayout()->element(0, 0))) {
        plot.plotLayout()->insertRow(0);
        plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, QString(), QFont("sans", 10, QFont::Bold)));
    }
    // the legend under the axes, two columns: inside them it would hide the curves or the bounds
    if (plot.legend->layout() != plot.plotLayout()) {
        const int row = plot.plotLayout()->rowCount();
        plot.plotLayout()->addElement(row, 0, plot.legend);
        plot.plotLayout()->setRowStretchFactor(row, 0.001);
    }
    plot.legend->setWrap(2);
    plot.legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    static_cast<QCPTextElement*>(plot.plotLayout()->element(0, 0))
        ->setText(QString("State sweep (%1): %2, %3 examples a length").arg(sweep.mode, sweep.subject).arg(sweep.samples));
    plot.replot();
    return sweep.csv();
}

namespace {

// A figure drawn by `draw(plot)` (which returns its CSV) and written to the file.
void render(const std::function<QString(QCustomPlot&)>& draw, const QString& title, const QString& outFile, int width, int height,
            const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(width, height));
    const QString csv = draw(plot);
    savePlot(plot, outFile, width, height, title, csv, style);
}

}  // namespace

void renderHeadImportance(const HeadImportance& importance, const QString& outFile, int width, int height, const ExportOptions& style)
{
    render([&](QCustomPlot& p) { return drawHeadImportance(p, importance); }, "head importance", outFile, width, height, style);
}

void renderStateSweep(const StateSweep& sweep, const QString& outFile, int width, int height, const ExportOptions& style)
{
    render([&](QCustomPlot& p) { return drawStateSweep(p, sweep); }, "state sweep", outFile, width, height, style);
}

}  // namespace parrot
