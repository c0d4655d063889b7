// The Train tab's workflow without its widgets: the model the tab holds, the run it trains, and
// the jobs that work on it. Start a fresh model or continue the one held, resume a run folder,
// pause, stop, evaluate at chosen lengths, open and save a checkpoint. The window shows what the
// session reports; tests drive it with no window at all.
//
// Work runs off the GUI thread. Evaluation and opening a checkpoint are BackgroundJobs. Training
// keeps a long-lived TrainWorker on its own QThread rather than a BackgroundJob: it reports four
// kinds of signal while it runs (progress, curves, mechanism scores, log lines) and is paused and
// resumed from outside, which a run-once function with one result does not model.
//
// Calls that cannot go ahead (a job is running, a config that does not build, a run folder that
// cannot resume) throw parrot::Error with a message for the user; nothing is changed then.
// Failures of work already running arrive as openFailed() and evaluationFailed().
#pragma once

#include "base/types.h"
#include "core/model.h"
#include "core/train/trainer.h"
#include "ui/jobs/backgroundjob.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <vector>

class QThread;

namespace parrot {

class TrainWorker;

class TrainingSession : public QObject {
    Q_OBJECT
public:
    explicit TrainingSession(QObject* parent = nullptr);
    ~TrainingSession() override;  // stops the jobs and waits for the training thread

    const Model& model() const { return m_model; }
    // The file the model was opened (or last continued) from; "" for one trained here.
    QString checkpoint() const { return m_checkpoint; }
    QString runDir() const { return m_runDir; }  // the run trained (or last trained) here
    // The last run stopped or diverged and left a resume file: resume(runDir()) goes on with it.
    bool resumable() const { return m_resumable; }

    bool isTraining() const { return m_thread != nullptr; }
    bool isPaused() const;
    bool isEvaluating() const { return m_evalJob.isRunning(); }
    bool isOpening() const { return m_openJob.isRunning(); }
    bool busy() const { return isTraining() || isEvaluating() || isOpening(); }
    // Of the job running now, for the status bar: "training", "evaluating", "opening a checkpoint" or "".
    QString activity() const;

    // Trains a fresh model with `c` in a new run folder under `runsFolder`, or (continueModel) the
    // model held, opened from a checkpoint, further under `c`: c.train.steps more steps from its
    // weights, with a fresh optimiser, into a folder whose config.json names the checkpoint.
    void start(const ExperimentConfig& c, bool continueModel, const QString& runsFolder);
    // Resumes a run folder where its last autosave left it (planResume); `sets` changes train.*
    // settings on the way (a lower train.lr after a divergence).
    void resume(const QString& runDir, const QStringList& sets = {});
    void setPaused(bool paused);
    // Asks every running job to end: training stops at its next step (its last checkpoint and
    // resume file are kept), evaluation delivers the lengths measured so far, and a checkpoint
    // being read is dropped when the read lands (the model held is kept).
    void stop();
    // Measures the model held at `lengths` with `samples` examples each (a fixed seed).
    void evaluate(const std::vector<int>& lengths, int samples);
    // Reads a checkpoint (any format Model::load knows) off the GUI thread: opened(), openFailed()
    // or, after stop(), openCancelled().
    void open(const QString& path);
    void openNow(const QString& path);  // the same on the calling thread
    void save(const QString& path) const;
    void setModel(const Model& m);

signals:
    void modelChanged();
    // A run began: its config and one line for the log; `resuming` for a run folder taken up again.
    void runStarted(const parrot::ExperimentConfig& config, const QString& description, bool resuming);
    void progress(const parrot::TrainProgress& p);
    void evaluated(const parrot::LengthCurve& curve);  // the evaluations a run makes as it trains
    void mechanisms(const parrot::MechanismScores& scores);
    void logMessage(const QString& text);
    void trainingFinished(const parrot::TrainOutcome& outcome);
    void evaluationProgress(int done, int total);
    // `partial`: stopped before every length was measured.
    void evaluationFinished(const parrot::LengthCurve& curve, bool partial);
    void opened(const QString& path);    // the model held is now the checkpoint's
    void openCancelled(const QString& path);
    void openFailed(const QString& message);
    void evaluationFailed(const QString& message);
    void busyChanged();

private:
    void launch(TrainWorker* worker);
    void onFinished(const TrainOutcome& o);
    void applyOpened(const QString& path, const Model& m);

    Model m_model;
    QString m_checkpoint;
    QString m_continuing;  // the checkpoint the running training continues, "" for a fresh model
    QString m_runDir;
    bool m_resumable = false;
    QThread* m_thread = nullptr;
    QPointer<TrainWorker> m_worker;
    BackgroundJob m_evalJob;
    BackgroundJob m_openJob;
};

}  // namespace parrot
