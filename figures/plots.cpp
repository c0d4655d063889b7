#include "figures/plots.h"

#include "figures/plotkit.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace parrot {

QColor seriesColour(int i)
{
    static const QColor colours[] = {QColor(0, 114, 178), QColor(213, 94, 0), QColor(0, 158, 115),
                                     QColor(204, 121, 167), QColor(230, 159, 0), QColor(86, 180, 233),
                                     QColor(0, 0, 0)};
    return colours[i % 7];
}

namespace {

// Whether a plot is drawn on a dark background now (the window's dark theme; exports may differ).
bool onDark(const QCustomPlot* p) { return p->axisRect()->backgroundBrush().color().lightness() < 128; }

void styleAxes(QCustomPlot* p, const QString& x, const QString& y)
{
    p->xAxis->setLabel(x);
    p->yAxis->setLabel(y);
    p->setBackground(Qt::white);
    p->axisRect()->setBackground(Qt::white);
    p->setAntialiasedElements(QCP::aeAll);
    p->setMinimumSize(320, 200);
}

}  // namespace

LossPlot::LossPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)), m_log(new QCheckBox(tr("Log scale"), this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_log, 0, Qt::AlignRight);
    styleAxes(m_plot, tr("step"), QString());
    setLossKind(LossKind::AnswerTokens);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, new QCPTextElement(m_plot, tr("Training loss"), QFont("sans", 10, QFont::Bold)));
    m_plot->xAxis->setTicker(integerTicker());
    m_graph = m_plot->addGraph();
    m_graph->setName(tr("loss per step"));
    m_smooth = m_plot->addGraph();
    m_smooth->setName(tr("moving average (20 steps)"));
    // The raw curve faint behind its average; on a dark background both take a lighter blue, and
    // the raw one more opacity, or it vanishes.
    const auto colour = [this] {
        const bool dark = onDark(m_plot);
        QColor line = seriesColour(dark ? 5 : 0), raw = line;
        raw.setAlpha(dark ? 120 : 85);
        m_graph->setPen(QPen(raw, 1));
        m_smooth->setPen(QPen(line, 2));
    };
    colour();
    connect(m_plot, &QCustomPlot::beforeReplot, this, colour);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont("sans", 8));
    keepLegendOffData(*m_plot);
    m_log->setObjectName("logScale");
    m_log->setChecked(true);
    setLogScale(true);
    connect(m_log, &QCheckBox::toggled, this, &LossPlot::setLogScale);
    m_replot.setSingleShot(true);
    m_replot.setInterval(40);
    connect(&m_replot, &QTimer::timeout, this, [this] {
        m_plot->rescaleAxes();
        if (m_plot->xAxis->range().upper < 10) m_plot->xAxis->setRangeUpper(10);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
}

void LossPlot::setLossKind(LossKind kind)
{
    m_plot->yAxis->setLabel(kind == LossKind::SquaredError ? tr("loss (squared error / d)") : tr("loss (answer tokens)"));
    scheduleReplot();
}

void LossPlot::clear()
{
    m_graph->data()->clear();
    m_smooth->data()->clear();
    m_points = 0;
    // rescaling finds no data to fit: without this the empty plot keeps the last run's axes
    m_plot->xAxis->setRange(0, 10);
    m_plot->yAxis->setRange(0.1, 10);
    scheduleReplot();
}

void LossPlot::addPoint(double step, double loss) { addPoints((long long)step, {loss}); }

void LossPlot::addPoints(long long firstStep, const std::vector<double>& losses)
{
    for (size_t i = 0; i < losses.size(); ++i) {
        const double step = double(firstStep + (long long)i);
        m_graph->addData(step, losses[i]);
        // in log space, so one spike does not dominate; 0.95 a step is 1 / (1 - 0.95) = 20 steps of memory
        const double l = std::log(std::max(losses[i], 1e-12));
        m_ema = m_points == 0 ? l : 0.95 * m_ema + 0.05 * l;
        m_smooth->addData(step, std::exp(m_ema));
        ++m_points;
    }
    if (losses.empty()) return;
    scheduleReplot();
    emit pointsAdded(m_points);
}

void LossPlot::setLogScale(bool on)
{
    if (m_log->isChecked() != on) m_log->setChecked(on);
    if (on) {
        m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    } else {
        m_plot->yAxis->setScaleType(QCPAxis::stLinear);
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    scheduleReplot();
}

bool LossPlot::logScale() const { return m_log->isChecked(); }

void LossPlot::scheduleReplot()
{
    if (!m_replot.isActive()) m_replot.start();
}

AccuracyPlot::AccuracyPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    styleAxes(m_plot, tr("string length"), tr("answer accuracy (whole answers right)"));
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Copy accuracy against length"), QFont("sans", 10, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->yAxis->setRange(-0.02, 1.02);
    m_plot->xAxis->setRange(0, 45);
    m_plot->xAxis->setTicker(integerTicker());
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(QFont("sans", 8));
    keepLegendOffData(*m_plot);

    m_range = new QCPItemRect(m_plot);
    m_range->setPen(Qt::NoPen);
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] {  // a shade of the text's colour, in either theme
        m_range->setBrush(onDark(m_plot) ? QColor(255, 255, 255, 30) : QColor(0, 0, 0, 22));
    });
    m_range->setLayer("background");
    m_range->setClipToAxisRect(true);
    m_range->setVisible(false);
    // The band is named in the legend, by a swatch of its shade: a label inside the axes had the
    // curves drawn over it.
    m_rangeKey = addBandKey(*m_plot, m_range, tr("training range"));
    m_rangeKey->removeFromLegend();

    m_replot.setSingleShot(true);
    m_replot.setInterval(40);
    connect(&m_replot, &QTimer::timeout, this, [this] { m_plot->replot(QCustomPlot::rpQueuedReplot); });
}

void AccuracyPlot::setTask(const QString& difficulty, int lo, int hi, bool errorCurves)
{
    if (errorCurves != m_errorMode) clearCurves();  // accuracies and errors do not share an axis
    m_errorMode = errorCurves;
    m_plot->xAxis->setLabel(difficulty);
    m_plot->yAxis->setLabel(errorCurves ? tr("squared error / d") : tr("answer accuracy (whole answers right)"));
    m_title->setText(errorCurves ? tr("In-context error against examples, with baselines") : tr("Accuracy against %1").arg(difficulty));
    if (errorCurves) setTrainingRange(0, -1);  // every prompt has the same length: no band
    else setTrainingRange(lo, hi);
}

void AccuracyPlot::setTrainingRange(int lo, int hi)
{
    m_rangeLo = lo;
    m_rangeHi = hi;
    // Shade half a length beyond each end so the end points sit inside the band.
    m_range->topLeft->setCoords(lo - 0.5, 1.02);
    m_range->bottomRight->setCoords(hi + 0.5, -0.02);
    m_range->setVisible(hi >= lo && hi > 0);
    if (m_range->visible()) m_rangeKey->addToLegend();
    else m_rangeKey->removeFromLegend();
    rescale();
}

QCPGraph* AccuracyPlot::makeGraph(const QString& label, const QColor& colour, bool dashed)
{
    QCPGraph* g = m_plot->addGraph();
    g->setName(label);
    QPen pen(colour, 2);
    if (dashed) pen.setStyle(Qt::DashLine);
    g->setPen(pen);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colour, Qt::white, 6));
    return g;
}

void AccuracyPlot::setGraphData(QCPGraph* g, const LengthCurve& c)
{
    QVector<double> x, y;
    for (size_t i = 0; i < c.lengths.size(); ++i) {
        x << c.lengths[i];
        y << c.valueAt(i);
    }
    g->setData(x, y, true);
}

void AccuracyPlot::setLiveCurve(const LengthCurve& c)
{
    if (!m_live) m_live = makeGraph(tr("training"), seriesColour(0), false);
    m_live->setName(tr("during training, step %1").arg(c.step));
    setGraphData(m_live, c);
    // The baselines on the same prompts, thin and grey, under the model's curve.
    if (c.isError() && m_baselines.size() != c.baselineNames.size()) {
        for (QCPGraph* g : m_baselines) m_plot->removeGraph(g);
        m_baselines.clear();
        for (size_t b = 0; b < c.baselineNames.size(); ++b) {
            QCPGraph* g = m_plot->addGraph();
            const int shade = 60 + int(b) * 35;
            QPen pen(QColor(shade, shade, shade), 1.2);
            pen.setStyle(b % 2 ? Qt::DashLine : Qt::DotLine);
            g->setPen(pen);
            g->setName(c.baselineNames[b]);
            m_baselines.push_back(g);
        }
    }
    for (size_t b = 0; b < m_baselines.size() && b < c.baselineError.size(); ++b) {
        QVector<double> x, y;
        for (size_t i = 0; i < c.lengths.size(); ++i) {
            x << c.lengths[i];
            y << c.baselineError[b][i];
        }
        m_baselines[b]->setData(x, y, true);
    }
    rescale();
    emit curvesChanged();
}

void AccuracyPlot::addCurve(const QString& label, const LengthCurve& c)
{
    QCPGraph* g = makeGraph(label, seriesColour(m_plot->graphCount() + (m_live ? 0 : 1)), true);
    setGraphData(g, c);
    rescale();
    emit curvesChanged();
}

void AccuracyPlot::clearCurves()
{
    m_plot->clearGraphs();
    m_live = nullptr;
    m_baselines.clear();
    rescale();
    emit curvesChanged();
}

int AccuracyPlot::curveCount() const { return m_plot->graphCount(); }

void AccuracyPlot::rescale()
{
    m_plot->legend->setVisible(m_plot->graphCount() > 0 || m_range->visible());
    double hi = std::max(10, m_rangeHi + 1);
    for (int i = 0; i < m_plot->graphCount(); ++i) {
        bool found = false;
        const QCPRange r = m_plot->graph(i)->getKeyRange(found);
        if (found) hi = std::max(hi, r.upper);
    }
    m_plot->xAxis->setRange(0, hi * 1.05 + 0.5);
    if (m_errorMode) {  // from 0 to the largest error drawn, the zero estimator's about 1
        double top = 1.0;
        for (int i = 0; i < m_plot->graphCount(); ++i) {
            bool found = false;
            const QCPRange r = m_plot->graph(i)->getValueRange(found);
            if (found) top = std::max(top, r.upper);
        }
        m_plot->yAxis->setRange(0, std::min(top, 4.0) * 1.05);
    } else {
        m_plot->yAxis->setRange(-0.02, 1.02);
    }
    if (!m_replot.isActive()) m_replot.start();
}

}  // namespace parrot
