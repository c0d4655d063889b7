// Live plots: training loss against step, and copy accuracy against string length.
// Points arrive in bursts from the worker; a ~40 ms single-shot timer coalesces them
// into one replot (docs/ARCHITECTURE.md).
#pragma once

#include "base/types.h"

#include <QTimer>
#include <QWidget>

class QCustomPlot;
class QCPBars;
class QCPGraph;
class QCPItemRect;
class QCPTextElement;
class QCheckBox;

namespace parrot {

class LossPlot : public QWidget {
    Q_OBJECT
public:
    explicit LossPlot(QWidget* parent = nullptr);

    void clear();
    void addPoint(double step, double loss);
    // Consecutive steps' losses, the first at firstStep.
    void addPoints(long long firstStep, const std::vector<double>& losses);
    void setLogScale(bool on);
    bool logScale() const;
    // What the loss is, for the y axis's title: cross-entropy over a token task's answer tokens,
    // or an in-context (vector) task's squared error / d.
    enum class LossKind { AnswerTokens, SquaredError };
    void setLossKind(LossKind kind);
    int pointCount() const { return m_points; }
    QCustomPlot* plot() const { return m_plot; }

signals:
    void pointsAdded(int total);

private:
    void scheduleReplot();
    QCustomPlot* m_plot;
    QCPGraph* m_graph;   // every reported step, pale
    QCPGraph* m_smooth;  // exponential moving average, what the eye should follow
    double m_ema = 0;
    QCheckBox* m_log;
    QTimer m_replot;
    int m_points = 0;
};

class AccuracyPlot : public QWidget {
    Q_OBJECT
public:
    explicit AccuracyPlot(QWidget* parent = nullptr);

    // Shades [lo, hi], the lengths the model was trained on.
    void setTrainingRange(int lo, int hi);
    // The task's training range, and what its lengths count on the x axis and in the title;
    // `errorCurves`: in-context regression, plotted as error against examples with baselines.
    void setTask(const QString& difficulty, int lo, int hi, bool errorCurves = false);
    bool errorMode() const { return m_errorMode; }
    // The latest evaluation during training: one curve, replaced each time.
    void setLiveCurve(const LengthCurve& c);
    // A kept curve (an evaluation the user asked for), with its own colour and label.
    void addCurve(const QString& label, const LengthCurve& c);
    void clearCurves();
    int curveCount() const;
    QCustomPlot* plot() const { return m_plot; }

signals:
    void curvesChanged();

private:
    QCPGraph* makeGraph(const QString& label, const QColor& colour, bool dashed);
    void setGraphData(QCPGraph* g, const LengthCurve& c);
    void rescale();
    QCustomPlot* m_plot;
    QCPGraph* m_live = nullptr;
    QCPItemRect* m_range;
    QCPBars* m_rangeKey;  // the range's entry in the legend
    QCPTextElement* m_title = nullptr;
    bool m_errorMode = false;
    std::vector<QCPGraph*> m_baselines;  // the live curve's baselines (error mode)
    int m_rangeLo = 0, m_rangeHi = 0;
    QTimer m_replot;
};

// Colours that stay distinguishable on white and for common colour-vision deficiencies
// (Okabe & Ito, 2008).
QColor seriesColour(int i);

}  // namespace parrot
