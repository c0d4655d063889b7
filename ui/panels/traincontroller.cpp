#include "ui/panels/traincontroller.h"

#include "base/analysis/mechanisms.h"
#include "base/config.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/taskcatalog.h"
#include "figures/plots.h"
#include "ui/common/appsettings.h"
#include "ui/common/filefilters.h"
#include "ui/jobs/trainingsession.h"
#include "ui/panels/runbrowser.h"
#include "ui/panels/settingspanel.h"
#include "ui/panels/trainpanel.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>

namespace parrot {

TrainController::TrainController(SettingsPanel* settings, TrainPanel* panel, QWidget* window)
    : QObject(window), m_settings(settings), m_panel(panel), m_window(window), m_session(new TrainingSession(this))
{
    connectPanels();
    connectSession();
    connectOpening();
    m_panel->setMechanismsShown(mechanismsApply(m_settings->config()));
    m_panel->showModel(model());
}

TrainController::~TrainController()
{
    // The session, a child, stops its jobs and waits for the training thread; what it reports
    // on the way goes nowhere.
    disconnect(m_session, nullptr, this, nullptr);
}

const Model& TrainController::model() const { return m_session->model(); }
QString TrainController::currentRunDir() const { return m_session->runDir(); }
bool TrainController::isTraining() const { return m_session->isTraining(); }
bool TrainController::isEvaluating() const { return m_session->isEvaluating(); }
bool TrainController::isOpening() const { return m_session->isOpening(); }
bool TrainController::busy() const { return m_session->busy(); }

void TrainController::connectPanels()
{
    connect(m_panel->trainButton(), &QPushButton::clicked, this, &TrainController::startTraining);
    connect(m_panel->pauseButton(), &QPushButton::clicked, this, &TrainController::togglePause);
    connect(m_panel->stopButton(), &QPushButton::clicked, this, &TrainController::stopWork);
    connect(m_panel->evaluateButton(), &QPushButton::clicked, this, &TrainController::startEvaluation);
    connect(m_panel->evalCancelButton(), &QPushButton::clicked, m_session, &TrainingSession::stop);
    connect(m_panel->continueButton(), &QPushButton::clicked, this, [this] { resumeRun(m_session->runDir()); });
    connect(m_settings, &SettingsPanel::changed, this, [this] {
        m_panel->setTask(m_settings->config().task);
        if (!isTraining()) m_panel->setMechanismsShown(mechanismsApply(m_settings->config()));  // a run's stays while it trains
        updateControls();
    });
    connect(m_settings, &SettingsPanel::errorMessage, this, &TrainController::errorMessage);
    connect(m_settings, &SettingsPanel::presetLoaded, this, [this](const QString& name) {
        m_panel->setTask(m_settings->config().task, true);
        emit logMessage(tr("Preset %1 loaded.").arg(name));
    });
}

void TrainController::connectSession()
{
    connect(m_session, &TrainingSession::modelChanged, this, [this] {
        m_panel->showModel(model());
        updateControls();
    });
    connect(m_session, &TrainingSession::busyChanged, this, &TrainController::updateControls);
    connect(m_session, &TrainingSession::runStarted, this, [this](const ExperimentConfig& c, const QString& description, bool resuming) {
        if (resuming) m_settings->setCheckpointConfig(c, resumeFilePath(m_session->runDir()), model().step());
        m_panel->setCanContinue(false);
        m_panel->startFresh(c.task, resuming ? tr("resuming...") : tr("starting..."));
        m_panel->setMechanismsShown(mechanismsApply(c));
        emit logMessage(description);
    });
    connect(m_session, &TrainingSession::progress, this, [this](const TrainProgress& p) {
        m_panel->showProgress(p, model());
        emit progress(p);
    });
    connect(m_session, &TrainingSession::evaluated, this, &TrainController::onEvaluated);
    connect(m_session, &TrainingSession::mechanisms, m_panel, &TrainPanel::showMechanisms);
    connect(m_session, &TrainingSession::logMessage, this, &TrainController::logMessage);
    connect(m_session, &TrainingSession::trainingFinished, this, &TrainController::onTrainingFinished);
    connect(m_session, &TrainingSession::evaluationProgress, this, [this](int done, int total) {
        m_panel->setStatus(tr("evaluating: %1 of %2 lengths").arg(done).arg(total), 1000 * done / std::max(1, total));
    });
    connect(m_session, &TrainingSession::evaluationFinished, this, [this](const LengthCurve& result, bool partial) {
        m_panel->setStatus(partial ? tr("evaluation cancelled") : tr("evaluated"));
        if (!result.empty()) {
            m_panel->addEvaluation(result);
            emit logMessage(tr("Evaluation at step %1, %2 examples per point: %3").arg(result.step).arg(m_evaluationSamples).arg(result.summary()));
        }
        emit evaluationFinished(result);
    });
    connect(m_session, &TrainingSession::evaluationFailed, this, &TrainController::errorMessage);
}

void TrainController::connectOpening()
{
    connect(m_session, &TrainingSession::opened, this, [this](const QString& path) {
        m_panel->setBusy(false);
        m_settings->setCheckpointConfig(model().config(), path, model().step());
        m_panel->setCanContinue(false);
        m_panel->startFresh(model().config().task, tr("loaded"));
        emit logMessage(tr("Opened %1: %2").arg(path, model().summary()));
        AppSettings::rememberCheckpoint(path);
        const auto then = std::exchange(m_afterOpen, {});
        if (then) then();
        emit checkpointOpened(true);
    });
    connect(m_session, &TrainingSession::openCancelled, this, [this](const QString& path) {
        m_panel->setBusy(false);
        m_panel->setStatus(tr("opening cancelled"));
        emit logMessage(tr("Opening %1 cancelled; the current model is kept.").arg(path));
        m_afterOpen = {};
        emit checkpointOpened(false);
    });
    connect(m_session, &TrainingSession::openFailed, this, [this](const QString& message) {
        m_panel->setBusy(false);
        m_panel->setStatus(tr("idle"));
        m_afterOpen = {};
        emit errorMessage(message);
        emit checkpointOpened(false);
    });
}

void TrainController::startTraining()
{
    if (busy()) return;
    if (model().isNull() || m_session->checkpoint().isEmpty()) return trainFresh();
    if (m_trainChoice && m_trainChoice->isVisible()) return m_trainChoice->raise();
    const ExperimentConfig c = m_settings->config();
    // Only the architecture has to match: the task and training settings are the form's.
    const QStringList otherModel = overridesBetween(model().config(), c).filter(QRegularExpression("^model\\."));
    m_trainChoice = makeTrainChoice(c, otherModel);
    m_trainChoice->open();  // window-modal: the event loop and the plots keep going
}

QMessageBox* TrainController::makeTrainChoice(const ExperimentConfig& c, const QStringList& otherModel)
{
    auto* box = new QMessageBox(QMessageBox::Question, tr("Train"),
                                tr("The Train tab holds the model opened from %1, trained to step %2. Continue training it, "
                                   "or start a fresh model with these settings?")
                                    .arg(SettingsPanel::checkpointName(m_session->checkpoint())).arg(model().step()),
                                QMessageBox::Cancel, m_window);
    box->setObjectName("trainChoice");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(
        tr("Continue: %1 more steps (the Steps setting) from its weights, counted on from step %2, into a new run folder whose "
           "config.json names the checkpoint. The optimiser starts afresh, since a checkpoint does not hold its state, so the "
           "learning rate warms up and decays again over these steps. (A run folder stopped part-way resumes exactly, "
           "optimiser state and all: the Runs tab's Continue training.)\n\nFresh: new weights from step 0 with these settings.")
            .arg(c.train.steps).arg(model().step())
        + (otherModel.isEmpty() ? QString() : tr("\n\nIt cannot continue: the settings describe another model (%1).").arg(otherModel.join(", "))));
    QPushButton* continueButton = box->addButton(tr("Continue this model"), QMessageBox::AcceptRole);
    continueButton->setObjectName("continueModel");
    continueButton->setEnabled(otherModel.isEmpty());
    QPushButton* freshButton = box->addButton(tr("Start a fresh model"), QMessageBox::AcceptRole);
    freshButton->setObjectName("freshModel");
    box->setDefaultButton(otherModel.isEmpty() ? continueButton : freshButton);
    connect(continueButton, &QPushButton::clicked, this, &TrainController::continueTraining);
    connect(freshButton, &QPushButton::clicked, this, &TrainController::trainFresh);
    return box;
}

void TrainController::trainFresh() { startRun(false); }

void TrainController::continueTraining() { startRun(true); }

void TrainController::startRun(bool continueModel)
{
    if (busy() || (continueModel && model().isNull())) return;
    const QStringList problems = m_settings->problems();
    if (!problems.isEmpty()) {
        emit errorMessage(tr("Cannot train with these settings:\n%1").arg(problems.join("\n")));
        return;
    }
    try {
        m_session->start(m_settings->config(), continueModel, AppSettings::load().runsFolder);
    } catch (const Error& e) {
        emit errorMessage(e.message());
    }
}

void TrainController::resumeRun(const QString& runDir)
{
    if (busy()) return;
    try {
        m_session->resume(runDir);
        return;
    } catch (const Error& e) {
        if (runStatus(runDir) != "diverged" || !QFileInfo::exists(resumeFilePath(runDir))) {
            emit errorMessage(e.message());
            return;
        }
    }
    resumeWithLowerRate(runDir);  // a divergence goes on only with a change
}

void TrainController::resumeWithLowerRate(const QString& runDir)
{
    double lr = 0;
    try {
        lr = loadConfigFile(QDir(runDir).filePath("config.json")).train.lr;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return;
    }
    bool ok = false;
    const double lower = QInputDialog::getDouble(m_window, tr("Continue a run that diverged"),
                                                 tr("This run diverged at learning rate %1. Resume it from its last good "
                                                    "checkpoint with the learning rate:").arg(lr, 0, 'g', 3),
                                                 lr / 2, 1e-9, 100, 9, &ok);
    if (!ok) return;
    try {
        m_session->resume(runDir, {QString("train.lr=%1").arg(lower, 0, 'g', 9)});
    } catch (const Error& e) {
        emit errorMessage(e.message());
    }
}

void TrainController::resumeInterrupted(const QString& runDir)
{
    if (busy()) {
        emit errorMessage(tr("%1 was not continued: the Train tab is busy. Stop it, then continue the run from the Runs tab.")
                              .arg(QDir::toNativeSeparators(runDir)));
        return;
    }
    resumeRun(runDir);
}

void TrainController::onEvaluated(const LengthCurve& c)
{
    m_panel->showCurve(c);
    if (c.isError() || (isVectorTask(m_settings->config().task.kind) && !c.lengths.empty())) {
        emit statusMessage(tr("step %1: %2").arg(c.step).arg(c.summary()));
        return;
    }
    const int target = m_settings->config().task.maxLen;
    const double acc = c.stringAccuracyAt(target);
    const TaskInfo* info = findTask(m_settings->config().task.kind);
    if (acc >= 0 && info)
        emit statusMessage(tr("step %1: answer accuracy %2% at %3 %4").arg(c.step).arg(100 * acc, 0, 'f', 1).arg(info->difficulty).arg(target));
}

void TrainController::onTrainingFinished(const TrainOutcome& o)
{
    m_panel->setPaused(false);
    m_panel->setStatus(tr("%1 at step %2").arg(statusName(o.status)).arg(o.step));
    m_panel->showEnded();
    m_panel->setCanContinue(m_session->resumable());
    emit runWritten();
    if (o.status == TrainOutcome::Status::Finished || o.status == TrainOutcome::Status::Cancelled)
        emit logMessage(o.message + (o.checkpoint.isEmpty() ? QString() : tr(" Checkpoint: %1").arg(o.checkpoint)));
    else
        emit errorMessage(o.message);
    if (!o.finalCurve.empty()) {
        m_panel->showCurve(o.finalCurve);
        emit logMessage(tr("Final evaluation: %1").arg(o.finalCurve.summary()));
    }
    updateControls();
    emit trainingFinished(o);
}

void TrainController::togglePause()
{
    if (!isTraining()) return;
    const bool pause = !m_session->isPaused();
    m_session->setPaused(pause);
    m_panel->setPaused(pause);
    emit logMessage(pause ? tr("Paused.") : tr("Resumed."));
}

void TrainController::stopWork()
{
    if (isTraining()) m_panel->setStatus(tr("stopping..."));
    else if (isOpening()) m_panel->setStatus(tr("cancelling..."));
    m_session->stop();  // an evaluation's lengths measured so far are still shown
}

void TrainController::startEvaluation()
{
    if (busy()) return;
    try {
        if (model().isNull()) throw Error(tr("There is no model to evaluate: train one or open a checkpoint."));
        const std::vector<int> lengths = m_panel->evaluationLengths();
        m_evaluationSamples = m_panel->evaluationSamples();
        m_session->evaluate(lengths, m_evaluationSamples);
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return;
    }
    m_panel->setStatus(tr("evaluating..."), 0);
}

bool TrainController::openCheckpoint(const QString& path)
{
    try {
        m_session->openNow(path);
        return true;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
}

void TrainController::openCheckpointInBackground(const QString& path, std::function<void()> then)
{
    try {
        m_session->open(path);
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return;
    }
    m_afterOpen = std::move(then);
    m_panel->setBusy(true);  // reading and converting has no steps to count
    m_panel->setStatus(tr("opening %1...").arg(QFileInfo(path).fileName()));
    emit logMessage(tr("Opening %1 (Esc cancels)").arg(path));
}

bool TrainController::saveCheckpoint(const QString& path)
{
    try {
        m_session->save(path);
        emit logMessage(tr("Saved checkpoint %1 (step %2).").arg(path).arg(model().step()));
        return true;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
}

void TrainController::openCheckpointDialog()
{
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Open checkpoint"), AppSettings::load().lastCheckpoint,
                                                      checkpointFileFilter());
    if (!path.isEmpty()) openCheckpointInBackground(path);
}

void TrainController::saveCheckpointDialog()
{
    const QString runDir = m_session->runDir();
    const QString suggested = QDir(runDir.isEmpty() ? QDir::homePath() : runDir)
                                  .filePath(QString("%1-step%2.safetensors").arg(model().config().name).arg(model().step()));
    const QString path = QFileDialog::getSaveFileName(m_window, tr("Save checkpoint"), suggested,
                                                      tr("Safetensors checkpoints (*.safetensors)"));
    if (!path.isEmpty()) saveCheckpoint(path);
}

void TrainController::overlayRuns(const QStringList& dirs, const QString& runsFolder)
{
    for (const QString& dir : dirs) {
        try {
            const RunRecord r = loadRun(dir);
            if (r.curves.empty()) {
                emit logMessage(tr("%1 has no evaluation to overlay").arg(dir));
                continue;
            }
            if (r.curves.back().isError() != m_panel->accuracyPlot()->errorMode()) {
                emit errorMessage(tr("%1: its curve (%2) does not share the plot's axis; pick the same kind of task first")
                                      .arg(QDir(runsFolder).relativeFilePath(dir), r.config.task.kind));
                continue;
            }
            m_panel->accuracyPlot()->addCurve(runLegend(r), r.curves.back());
        } catch (const Error& e) {
            emit errorMessage(e.message());
        }
    }
}

void TrainController::updateControls()
{
    const bool isBusy = busy();
    m_trainable = m_settings->problems().isEmpty();
    m_panel->setAvailable(!isBusy && m_trainable, isTraining(), isBusy, !isBusy && !model().isNull(), isEvaluating());
    m_panel->continueButton()->setEnabled(!isBusy && m_session->resumable());
    m_settings->setEnabled(!isBusy);
    emit controlsChanged();
}

}  // namespace parrot
