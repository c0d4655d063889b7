#include "figures/constructionfigure.h"

#include "core/analysis/construction.h"
#include "figures/plotkit.h"

#include <qcustomplot.h>

namespace parrot {

namespace {

QColor orderColour(int n)
{
    static const QColor palette[] = {QColor("#1f77b4"), QColor("#ff7f0e"), QColor("#2ca02c"), QColor("#d62728"),
                                     QColor("#9467bd"), QColor("#8c564b"), QColor("#e377c2"), QColor("#7f7f7f")};
    return palette[(n - 1) % 8];
}

}  // namespace

QString drawConstruction(QCustomPlot& plot, const ConstructionCurves& c)
{
    plot.clearGraphs();
    plot.clearItems();
    plot.legend->setVisible(true);
    keepLegendOffData(plot);
    plot.xAxis->setTicker(integerTicker());
    plot.xAxis->setLabel("string length L");
    plot.yAxis->setLabel("string accuracy (copied exactly)");
    QString csv = "n,length,string_accuracy,std_err,bound_accuracy\n";
    int longest = 1;
    for (size_t i = 0; i < c.orders.size(); ++i) {
        const int n = c.orders[i];
        const LengthCurve& curve = c.curves[i];
        QCPGraph* g = plot.addGraph();
        g->setName(QString("n = %1, measured").arg(n));
        g->setPen(QPen(orderColour(n), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
        QCPGraph* b = plot.addGraph();
        b->setName(QString("n = %1, bound 1 − L²/|V|^n").arg(n));
        b->setPen(QPen(orderColour(n), 1.5, Qt::DashLine));
        for (size_t k = 0; k < curve.lengths.size(); ++k) {
            const int L = curve.lengths[k];
            const double bound = 1 - CopyConstruction::boundError(L, n, c.letters);
            g->addData(L, curve.stringAccuracy[k]);
            longest = std::max(longest, L);
            csv += QString("%1,%2,%3,%4,%5\n").arg(n).arg(L).arg(curve.stringAccuracy[k]).arg(curve.stringStdErr[k]).arg(bound);
        }
        for (int L = 1; L <= longest; L += std::max(1, longest / 200)) b->addData(L, 1 - CopyConstruction::boundError(L, n, c.letters));
    }
    plot.xAxis->setRange(0, longest * 1.03);
    plot.yAxis->setRange(-0.03, 1.05);
    plot.legend->setBrush(QColor(255, 255, 255, 220));
    plot.replot();
    return csv;
}

}  // namespace parrot
