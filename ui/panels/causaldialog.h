// The Explore tab's causal tests, each in a dialog of its own that runs off the GUI thread with a
// progress bar and Stop (core/analysis/causal.h, as `parrotscope inspect` runs them):
//   Head importance  every head of the pane's Transformer switched off alone over N examples of
//                    a task: the drops in whole answers and answer tokens with their standard
//                    errors, each head's lookup label, sorted by drop; the layer x head heatmap
//   State sweep      the pane's state-space model with its state shrunk (first k of d_state, a
//                    fraction of the channels, b-bit entries): copy accuracy against length,
//                    with the copy bound of each smaller state
// Both save the figure (PNG, PDF, SVG) or the table (CSV).
#pragma once

#include "core/analysis/causal.h"
#include "ui/jobs/backgroundjob.h"

#include <QDialog>

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace parrot {

class CausalDialog : public QDialog {
    Q_OBJECT
public:
    QPushButton* runButton() const { return m_run; }
    QPushButton* stopButton() const { return m_stop; }
    QProgressBar* progressBar() const { return m_progress; }
    QTableWidget* table() const { return m_table; }
    QCustomPlot* plot() const { return m_plot; }
    QString status() const;
    bool busy() const { return m_job.isRunning(); }
    // Writes the figure or, for .csv, the table; throws parrot::Error when it cannot.
    void save(const QString& file) const;
    virtual void run() = 0;

signals:
    void measured();  // a run delivered (complete or stopped), or failed: see status()

protected:
    CausalDialog(const QString& title, QWidget* parent);
    void addControls(QWidget* controls);  // above the buttons
    void setStatus(const QString& text);
    // Runs `measure(keepGoing)` off the GUI thread with the progress bar and Stop, then
    // `display(result)`, or says why it could not (`failure`: "Cannot measure").
    template <typename Measure, typename Display>
    void launch(Measure measure, Display display, const QString& failure)
    {
        started();
        m_job.start(
            [measure](JobContext& job) {
                return measure([&job](int done, int total) {
                    job.progress(done, total);
                    return !job.cancelled();
                });
            },
            [this, display](const auto& result) {
                display(result);
                ended();
            },
            [this, failure](const QString& error) {
                setStatus(tr("%1: %2").arg(failure, error));
                ended();
            });
    }
    void started();
    void ended();
    QString m_csv;    // the last result's table
    QString m_title;  // the last figure's
    BackgroundJob m_job;
    QPushButton* m_run = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_save = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_plot = nullptr;

private:
    void askAndSave();
};

class HeadImportanceDialog : public CausalDialog {
    Q_OBJECT
public:
    HeadImportanceDialog(const InsideSubject& subject, QWidget* parent = nullptr);
    void run() override;
    const HeadImportance& result() const { return m_result; }
    QComboBox* taskBox() const { return m_task; }
    QSpinBox* samplesBox() const { return m_samples; }
    QSpinBox* lengthBox() const { return m_length; }
    QComboBox* methodBox() const { return m_method; }

private:
    void display(const HeadImportance& r);
    InsideSubject m_subject;
    HeadImportance m_result;
    QComboBox* m_task = nullptr;
    QSpinBox* m_length = nullptr;
    QSpinBox* m_samples = nullptr;
    QSpinBox* m_seed = nullptr;
    QComboBox* m_method = nullptr;
};

class StateSweepDialog : public CausalDialog {
    Q_OBJECT
public:
    StateSweepDialog(const InsideSubject& subject, QWidget* parent = nullptr);
    void run() override;
    const StateSweep& result() const { return m_result; }
    QComboBox* modeBox() const { return m_mode; }
    QLineEdit* lengthsEdit() const { return m_lengths; }
    QSpinBox* samplesBox() const { return m_samples; }

private:
    void display(const StateSweep& r);
    InsideSubject m_subject;
    StateSweep m_result;
    QComboBox* m_mode = nullptr;
    QLineEdit* m_lengths = nullptr;
    QSpinBox* m_samples = nullptr;
    QSpinBox* m_seed = nullptr;
};

}  // namespace parrot
