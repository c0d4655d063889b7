// The Train tab: Train / Pause / Stop with the progress bar, the model line, the live loss plot with
// the mechanism timeline under it (every head's lookup score on the same step axis), the accuracy
// plot, and the box that evaluates the current model at chosen lengths. It shows what
// the window hands it (the model, progress snapshots, curves, job states); MainWindow owns the
// model, the training worker and the jobs, and connects the buttons to them.
#pragma once

#include "base/types.h"
#include "core/model.h"

#include <QWidget>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;

namespace parrot {

class AccuracyPlot;
class LossPlot;
class MechanismPlot;

class TrainPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainPanel(QWidget* parent = nullptr);

    QPushButton* trainButton() const { return m_train; }
    QPushButton* pauseButton() const { return m_pause; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* continueButton() const { return m_continue; }
    QPushButton* evaluateButton() const { return m_evaluate; }
    QPushButton* evalCancelButton() const { return m_evalCancel; }
    QLineEdit* evalLengthsEdit() const { return m_evalLengths; }
    LossPlot* lossPlot() const { return m_loss; }
    AccuracyPlot* accuracyPlot() const { return m_accuracy; }
    MechanismPlot* mechanismPlot() const { return m_mechanisms; }

    // The model line: the model's summary, or how to get one.
    void showModel(const Model& m);
    // A new run or a newly opened model on task `t`: the plots and the previous run's rates
    // cleared, the accuracy plot's axis and training range set, the task's evaluation lengths in
    // the evaluate box, and the progress bar saying `status`.
    void startFresh(const TaskConfig& t, const QString& status);
    // The accuracy plot's axis, title and training range. The evaluate box follows the task's
    // evaluation lengths when they change (copy's string lengths mean nothing for MQAR), and
    // always with `resetLengths` (a preset loaded); lengths typed into it are kept until then.
    void setTask(const TaskConfig& t, bool resetLengths = false);
    // A training snapshot: every step's loss on the plot, the step and the rates on the bar.
    void showProgress(const TrainProgress& p, const Model& m);
    // The run has ended: its last rates stay, without an ETA.
    void showEnded();
    void showCurve(const LengthCurve& c);  // the live evaluation curve
    void showMechanisms(const MechanismScores& s);  // the next scoring of the heads, on the timeline
    // The timeline is shown for runs that score their heads (mechanismsApply), hidden for others.
    void setMechanismsShown(bool shown);
    void addEvaluation(const LengthCurve& c);  // an evaluation the user asked for, beside the others
    // The bar's text (and value in thousandths, or -1 to keep it); busy: no steps to count.
    void setStatus(const QString& text, int permille = -1);
    void setBusy(bool busy);
    void setPaused(bool paused);
    // Which controls work now.
    void setAvailable(bool canTrain, bool training, bool canStop, bool canEvaluate, bool evaluating);
    // Continue: shown while the window's last run can be resumed (stopped, or diverged).
    void setCanContinue(bool can);

    // The plots' height from which the timeline goes under the loss (below it, beside it).
    static constexpr int kStackedHeight = 420;
    Qt::Orientation stepPlotsOrientation() const;

    // The evaluate box: the lengths (throws parrot::Error naming the field) and examples per length.
    std::vector<int> evaluationLengths() const;
    int evaluationSamples() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QPushButton *m_train, *m_pause, *m_stop, *m_continue, *m_evaluate, *m_evalCancel;
    QProgressBar* m_progress;
    QLabel* m_progressText;
    QLabel* m_modelLabel;
    LossPlot* m_loss;
    AccuracyPlot* m_accuracy;
    MechanismPlot* m_mechanisms;
    QSplitter* m_steps;  // the loss and the timeline
    QLineEdit* m_evalLengths;
    QSpinBox* m_evalSamples;
    std::vector<int> m_taskLengths;  // the task's evaluation lengths the evaluate box was last set to
    TrainProgress m_last;            // the latest snapshot, for the line that stays when the run ends
};

}  // namespace parrot
