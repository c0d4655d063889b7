// The copy paper's two-layer construction measured: string accuracy against length for a range
// of n-gram orders, each beside the bound 1 - L^2 / |V|^n (dashed, same colour). The evaluation
// runs off the GUI thread with progress and a Stop button.
#pragma once

#include "figures/constructionfigure.h"
#include "ui/jobs/backgroundjob.h"

#include <QWidget>

class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace parrot {

class ConstructionView : public QWidget {
    Q_OBJECT
public:
    explicit ConstructionView(QWidget* parent = nullptr);
    void start();   // measures with the settings shown
    void cancel();  // stops early; what was measured is shown
    bool running() const { return m_job.isRunning(); }
    const ConstructionCurves& result() const { return m_result; }
    QCustomPlot* plot() const { return m_plot; }
    QString status() const;
    // For tests and scripts: the settings.
    void setRange(int nFrom, int nTo, int letters, const QString& lengths, int samples);

signals:
    void finished();

private:
    QSpinBox* m_from = nullptr;
    QSpinBox* m_to = nullptr;
    QSpinBox* m_letters = nullptr;
    QLineEdit* m_lengths = nullptr;
    QSpinBox* m_samples = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QCustomPlot* m_plot = nullptr;
    ConstructionCurves m_result;
    BackgroundJob m_job;
};

}  // namespace parrot
