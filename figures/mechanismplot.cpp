#include "figures/mechanismplot.h"

#include "base/error.h"
#include "figures/figures.h"
#include "figures/plotkit.h"
#include "figures/plots.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>

namespace parrot {

namespace {

// One head's scores over the run.
struct HeadLine {
    HeadScore latest;
    QVector<double> steps, lookup, previous;
};

// The vertical line where the lookup forms, in `rect`, and its caption when `caption`.
QCPItemStraightLine* markFormed(QCustomPlot& plot, QCPAxisRect* rect, long long step, bool caption)
{
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    auto* line = new QCPItemStraightLine(&plot);
    line->setClipAxisRect(rect);
    for (QCPItemPosition* p : {line->point1, line->point2}) p->setAxes(x, y);
    line->point1->setCoords(double(step), 0.5);  // two points of the vertical, positive for a log axis too
    line->point2->setCoords(double(step), 1);
    line->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashDotLine));
    if (!caption) return line;
    auto* text = new QCPItemText(&plot);
    text->setClipAxisRect(rect);
    text->position->setAxes(x, y);
    text->position->setCoords(double(step), 1.0);
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->setPadding(QMargins(0, 0, 4, 0));
    text->setText(QString("lookup forms, step %1 ").arg(QLocale(QLocale::English).toString(step)));
    text->setFont(QFont("sans", 8));
    text->setColor(QColor(90, 90, 90));
    return line;
}

}  // namespace

TimelineDrawn drawMechanismTimeline(QCustomPlot& plot, QCPAxisRect* rect, const std::vector<MechanismScores>& scorings)
{
    TimelineDrawn drawn;
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    x->setLabel("step");
    x->setTicker(integerTicker());
    y->setLabel("lookup score (attention on the token to copy)");
    y->setRange(-0.02, 1.02);
    std::vector<HeadLine> lines;
    for (const MechanismScores& s : scorings)
        for (const HeadScore& h : s.heads) {
            auto it = std::find_if(lines.begin(), lines.end(), [&](const HeadLine& l) {
                return l.latest.implicit == h.implicit && l.latest.layer == h.layer && l.latest.head == h.head;
            });
            if (it == lines.end()) it = lines.insert(lines.end(), HeadLine{});
            it->latest = h;
            it->steps << double(s.step);
            it->lookup << h.bestLookup();
            it->previous << h.previousToken;
        }
    if (lines.empty()) return drawn;
    const auto byLatest = [](auto score) {
        return [score](const HeadLine& a, const HeadLine& b) { return score(a.latest) < score(b.latest); };
    };
    const auto strongest = std::max_element(lines.begin(), lines.end(), byLatest([](const HeadScore& h) { return h.bestLookup(); }));
    const auto previous = std::max_element(lines.begin(), lines.end(), byLatest([](const HeadScore& h) {
        return h.implicit ? -1.0 : h.previousToken;  // implicit attention has no previous-token reading to follow
    }));
    QColor pale(130, 130, 130, 80);
    for (auto it = lines.begin(); it != lines.end(); ++it) {
        if (it == strongest) continue;
        QCPGraph* g = plot.addGraph(x, y);
        g->setData(it->steps, it->lookup, true);
        g->setPen(QPen(pale, 1));
        g->setName(it->latest.name());
        g->removeFromLegend();
    }
    drawn.others = int(lines.size()) - 1;
    if (drawn.others > 0) {  // one legend entry for all of them
        QCPGraph* key = plot.addGraph(x, y);
        key->setPen(QPen(pale, 1));
        key->setName(QString("the other %1 heads").arg(drawn.others));
    }
    if (!previous->latest.implicit) {
        QCPGraph* g = plot.addGraph(x, y);
        g->setData(previous->steps, previous->previous, true);
        g->setPen(QPen(seriesColour(0), 1.5, Qt::DashLine));
        drawn.previous = QString("%1 · previous-token: %2").arg(previous->latest.name()).arg(previous->latest.previousToken, 0, 'f', 2);
        g->setName(legendName(drawn.previous));
    }
    QCPGraph* top = plot.addGraph(x, y);  // drawn last: over the pale ones
    top->setData(strongest->steps, strongest->lookup, true);
    top->setPen(QPen(seriesColour(1), 2.5));
    drawn.strongest = QString("%1 · %2: %3").arg(strongest->latest.name(), strongest->latest.label).arg(strongest->latest.bestLookup(), 0, 'f', 2);
    top->setName(legendName(drawn.strongest));
    drawn.formedAt = lookupFormsAt(scorings);
    if (drawn.formedAt >= 0) markFormed(plot, rect, drawn.formedAt, true);
    return drawn;
}

MechanismPlot::MechanismPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    setObjectName("mechanismPlot");
    m_plot->setObjectName("mechanisms");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot, 1);
    m_plot->setBackground(Qt::white);
    m_plot->axisRect()->setBackground(Qt::white);
    m_plot->setAntialiasedElements(QCP::aeAll);
    m_plot->setMinimumSize(280, 150);
    m_plot->setToolTip(tr("Every head's lookup score (attention on the token after the earlier occurrence of the current "
                          "n-gram, the best of n = 1, 2, 3) on a fixed probe batch, every train.mechanism_every steps; the "
                          "strongest head now thick, the others pale, the best previous-token head dashed"));
    m_plot->plotLayout()->insertRow(0);
    m_key = new QCPTextElement(m_plot, QString(), QFont("sans", 8));
    m_key->setMargins(QMargins(4, 2, 4, 0));
    m_plot->plotLayout()->addElement(0, 0, m_key);
    m_replot.setSingleShot(true);
    m_replot.setInterval(40);
    connect(&m_replot, &QTimer::timeout, this, &MechanismPlot::redraw);
    redraw();
}

void MechanismPlot::clear()
{
    m_scorings.clear();
    if (!m_replot.isActive()) m_replot.start();
}

void MechanismPlot::addScores(const MechanismScores& s)
{
    m_scorings.push_back(s);
    if (!m_replot.isActive()) m_replot.start();
}

void MechanismPlot::followSteps(QCustomPlot* loss)
{
    m_loss = loss;
    loss->setMinimumHeight(m_plot->minimumHeight());  // the two share the column's height on a laptop's screen
    connect(loss->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
        m_plot->xAxis->setRange(r);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    lineUpAxisRects(*loss, *m_plot);
    redraw();
}

QString MechanismPlot::key() const { return m_key->text(); }

QString MechanismPlot::strongestHead() const
{
    if (m_scorings.empty() || m_scorings.back().heads.empty()) return {};
    const auto& heads = m_scorings.back().heads;
    const HeadScore& h = *std::max_element(heads.begin(), heads.end(), [](const HeadScore& a, const HeadScore& b) {
        return a.bestLookup() < b.bestLookup();
    });
    return QString("%1 · %2").arg(h.name(), h.label);
}

void MechanismPlot::redraw()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    const TimelineDrawn drawn = drawMechanismTimeline(*m_plot, m_plot->axisRect(), m_scorings);
    m_formedAt = drawn.formedAt;
    m_plot->yAxis->setLabel(tr("lookup score"));  // short: the plot is half the loss's column high
    m_plot->legend->setVisible(false);
    m_key->setText(drawn.strongest.isEmpty()
                       ? tr("Lookup score of each head: drawn here\nwhile a token task trains")
                       : QStringList{tr("thick: %1").arg(drawn.strongest), drawn.previous.isEmpty() ? QString() : tr("dashed: %1").arg(drawn.previous),
                                     drawn.others > 0 ? tr("pale: the other %1 heads").arg(drawn.others) : QString()}
                             .filter(QRegularExpression(".")).join('\n'));  // short lines: the plot may be a third of the tab wide
    if (m_loss) {
        m_plot->xAxis->setRange(m_loss->xAxis->range());
        // the same step marked on the loss plot, so its plateau and the jump line up by eye
        if (m_lossMarker && m_loss->hasItem(m_lossMarker)) m_loss->removeItem(m_lossMarker);
        m_lossMarker = nullptr;
        if (m_formedAt >= 0) m_lossMarker = markFormed(*m_loss, m_loss->axisRect(), m_formedAt, false);
        m_loss->replot(QCustomPlot::rpQueuedReplot);
    } else if (!m_scorings.empty()) {
        m_plot->xAxis->setRange(0, std::max(10.0, double(m_scorings.back().step) * 1.02));
    } else {
        m_plot->xAxis->setRange(0, 10);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit redrawn();
}

void renderMechanisms(const RunRecord& run, const std::vector<MechanismScores>& scorings, const QString& outFile, int width,
                      int height, const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    if (run.metrics.empty()) throw Error(QString("%1: metrics.csv has no rows to draw the loss from").arg(QDir(run.dir).filePath("metrics.csv")));
    if (scorings.empty()) throw Error(QString("%1: has no scorings").arg(QDir(run.dir).filePath("mechanisms.csv")));
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(width, height));
    // rows: the title, the loss, the timeline, the legend; the axis rects share their left and
    // right margins, so a step is at the same x in both
    QCPAxisRect* loss = plot.axisRect();
    auto* timeline = new QCPAxisRect(&plot);
    plot.plotLayout()->addElement(1, 0, timeline);
    auto* margins = new QCPMarginGroup(&plot);
    for (QCPAxisRect* r : {loss, timeline}) r->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, QString("Training loss and the lookup score of each head: %1")
                                                                      .arg(QFileInfo(run.dir).fileName()),
                                                           QFont("sans", 11, QFont::Bold)));
    QVector<double> steps, losses;
    for (const RunRecord::Row& r : run.metrics)
        if (r.loss > 0) steps << double(r.step), losses << r.loss;
    QCPGraph* lossGraph = plot.addGraph(loss->axis(QCPAxis::atBottom), loss->axis(QCPAxis::atLeft));
    lossGraph->setData(steps, losses, true);
    lossGraph->setPen(QPen(seriesColour(0), 1.5));
    lossGraph->setName(QString("training loss (every %1 steps)").arg(run.config.train.logEvery));
    QCPAxis* lossY = loss->axis(QCPAxis::atLeft);
    lossY->setScaleType(QCPAxis::stLogarithmic);
    lossY->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    lossY->setLabel("training loss");
    bool found = false;
    const QCPRange lossRange = lossGraph->getValueRange(found);
    if (found) lossY->setRange(lossRange.lower / 1.3, lossRange.upper * 1.3);
    loss->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    const long long formed = drawMechanismTimeline(plot, timeline, scorings).formedAt;
    if (formed >= 0) markFormed(plot, loss, formed, false);
    const double last = std::max(steps.isEmpty() ? 0.0 : steps.back(), double(scorings.back().step));
    for (QCPAxisRect* r : {loss, timeline}) r->axis(QCPAxis::atBottom)->setRange(0, std::max(10.0, last * 1.02));
    // the legend under both, off the data whatever its size, as wide as the axes
    loss->insetLayout()->take(plot.legend);
    auto* holder = new QCPLayoutGrid;
    plot.plotLayout()->addElement(3, 0, holder);
    plot.plotLayout()->setRowStretchFactor(3, 0.001);
    holder->setAutoMargins(QCP::msLeft | QCP::msRight);
    holder->setMargins(QMargins(0, 6, 0, 6));
    holder->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    holder->addElement(0, 0, plot.legend);
    plot.legend->setVisible(true);
    plot.legend->setFont(QFont("sans", 8));
    plot.legend->setWrap(2);
    plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    plot.legend->setMargins(QMargins(8, 4, 8, 4));
    plot.replot();
    savePlot(plot, outFile, width, height, "mechanisms", plotCsv(plot), style);
}

}  // namespace parrot
