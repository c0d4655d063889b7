// The Train tab's controller: what its buttons, the Run menu and the Experiment form do with the
// TrainingSession. Train (fresh, or continuing the model opened), Pause, Stop, Evaluate, resume a
// run folder, open and save checkpoints, overlay runs on the accuracy plot. It owns the session
// and speaks to the two panels it is given; the window shows what it reports (log lines, errors,
// status-bar messages) and enables its menu actions on controlsChanged().
#pragma once

#include "base/types.h"
#include "core/model.h"

#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>

#include <QMessageBox>
class QWidget;

namespace parrot {

class SettingsPanel;
class TrainPanel;
class TrainingSession;

class TrainController : public QObject {
    Q_OBJECT
public:
    // Dialogs it opens (the train choice, a lower learning rate, the file dialogs) are
    // window-modal on `window`.
    TrainController(SettingsPanel* settings, TrainPanel* panel, QWidget* window);
    ~TrainController() override;

    TrainingSession* session() const { return m_session; }
    const Model& model() const;
    QString currentRunDir() const;
    bool isTraining() const;
    bool isEvaluating() const;
    bool isOpening() const;
    bool busy() const;

    // Train (F5): a fresh model with the form's settings, or, when the Train tab holds a model opened
    // from a checkpoint, a window-modal choice (trainChoiceBox()) between that and continuing it.
    void startTraining();
    void trainFresh();
    // Trains the opened model further under the form's settings (Model::continuedAs, train()):
    // train.steps more steps counted on from its step, a new run folder naming the checkpoint.
    void continueTraining();
    QMessageBox* trainChoiceBox() const { return m_trainChoice.data(); }
    // Resumes a run folder where its last autosave left it (planResume): the Runs tab's Continue
    // training and the Train tab's Continue after Stop. A run that diverged asks for a lower
    // learning rate first. Errors are reported by errorMessage().
    void resumeRun(const QString& runDir);
    // The same for a run the recovery bar offers; refused with a message while the tab is busy.
    void resumeInterrupted(const QString& runDir);
    void startEvaluation();
    void togglePause();
    void stopWork();

    bool openCheckpoint(const QString& path);  // on the calling thread; errors reported
    // The same off the GUI thread (File → Open, recent files, the inspector): a busy progress bar,
    // Esc / Stop cancels (the current model is kept); `then` runs after a successful open, and
    // checkpointOpened reports how it ended.
    void openCheckpointInBackground(const QString& path, std::function<void()> then = {});
    bool saveCheckpoint(const QString& path);
    void openCheckpointDialog();
    void saveCheckpointDialog();
    // Each run's last evaluation curve on the accuracy plot, beside the live one; `runsFolder`
    // names them in messages.
    void overlayRuns(const QStringList& dirs, const QString& runsFolder);
    // The panels' buttons and the form enabled as the session's state allows.
    void updateControls();
    // Whether the form's settings train, as updateControls() last found them (they are validated
    // there, once a change).
    bool trainable() const { return m_trainable; }

signals:
    void logMessage(const QString& text);
    void errorMessage(const QString& text);
    void statusMessage(const QString& text);  // for the status bar
    void controlsChanged();  // after updateControls(): the window's actions follow
    void progress(const parrot::TrainProgress& p);
    void runWritten();  // a run ended: its folder is complete
    void trainingFinished(const parrot::TrainOutcome& outcome);
    void evaluationFinished(const parrot::LengthCurve& curve);
    void checkpointOpened(bool ok);

private:
    void connectPanels();
    void connectSession();
    void connectOpening();
    void startRun(bool continueModel);
    QMessageBox* makeTrainChoice(const ExperimentConfig& c, const QStringList& otherModel);
    void resumeWithLowerRate(const QString& runDir);
    void onEvaluated(const LengthCurve& c);
    void onTrainingFinished(const TrainOutcome& o);

    SettingsPanel* m_settings;
    TrainPanel* m_panel;
    QWidget* m_window;
    TrainingSession* m_session;
    QPointer<QMessageBox> m_trainChoice;
    std::function<void()> m_afterOpen;  // what openCheckpointInBackground runs once the model is open
    int m_evaluationSamples = 0;        // of the evaluation running, for its log line
    bool m_trainable = false;
};

}  // namespace parrot
