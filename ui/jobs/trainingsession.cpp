#include "ui/jobs/trainingsession.h"

#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/taskcatalog.h"
#include "core/train/trainworker.h"

#include <QDir>
#include <QFileInfo>
#include <QThread>

namespace parrot {

TrainingSession::TrainingSession(QObject* parent) : QObject(parent)
{
    registerMetaTypes();
    connect(&m_evalJob, &BackgroundJob::progress, this, &TrainingSession::evaluationProgress);
}

TrainingSession::~TrainingSession()
{
    // The training worker reports to this object: quit and wait on it before this goes away. The
    // jobs wait for their own threads; evaluation is told first so the two wind down together.
    m_evalJob.cancel();
    m_openJob.cancel();
    if (m_worker) {
        m_worker->resume();
        m_worker->cancel();
    }
    if (m_thread) {
        m_thread->quit();
        m_thread->wait();
    }
}

bool TrainingSession::isPaused() const { return m_worker && m_worker->isPaused(); }

QString TrainingSession::activity() const
{
    if (isTraining()) return tr("training");
    if (isEvaluating()) return tr("evaluating");
    if (isOpening()) return tr("opening a checkpoint");
    return {};
}

void TrainingSession::setModel(const Model& m)
{
    m_model = m;
    emit modelChanged();
}

void TrainingSession::start(const ExperimentConfig& c, bool continueModel, const QString& runsFolder)
{
    if (busy()) throw Error(tr("A job is running: stop it first."));
    if (continueModel && (m_model.isNull() || m_checkpoint.isEmpty()))
        throw Error(tr("There is no model opened from a checkpoint to continue."));
    Model model;
    QString runDir;
    try {
        model = continueModel ? m_model.continuedAs(c) : Model::create(c);
        if (!QDir().mkpath(runsFolder)) throw Error(tr("Cannot create the runs folder %1").arg(runsFolder));
        runDir = newRunDir(runsFolder, continueModel ? c.name + "-continued" : c.name);
    } catch (const Error& e) {
        throw Error(continueModel ? tr("Cannot continue this model: %1").arg(e.message()) : e.message());
    }
    const QString continuesFrom = continueModel ? m_checkpoint : QString();
    setModel(model);
    m_runDir = runDir;
    m_continuing = continuesFrom;
    if (!continueModel) m_checkpoint.clear();  // a model of this session's own
    const QString description =
        continueModel ? tr("Continuing %1 from step %2 of %3 on %4 for %5 more steps (a fresh optimiser); run folder %6")
                            .arg(model.summary()).arg(model.step()).arg(continuesFrom, describeTask(c.task)).arg(c.train.steps).arg(runDir)
                      : tr("Training %1 on %2; run folder %3").arg(model.summary(), describeTask(c.task), runDir);
    emit runStarted(c, description, false);
    launch(new TrainWorker(model, runDir, continuesFrom));
}

void TrainingSession::resume(const QString& runDir, const QStringList& sets)
{
    if (busy()) throw Error(tr("A job is running: stop it first."));
    ResumeOptions options;
    options.sets = sets;
    ResumePlan plan;
    try {
        plan = planResume(runDir, options);
    } catch (const Error& e) {
        throw Error(tr("Cannot continue %1: %2").arg(QDir(runDir).dirName(), e.message()));
    }
    setModel(plan.model);
    m_runDir = plan.runDir;
    m_continuing.clear();
    m_checkpoint.clear();
    emit runStarted(plan.model.config(), plan.description, true);
    launch(new TrainWorker(std::move(plan)));
}

void TrainingSession::launch(TrainWorker* worker)
{
    m_resumable = false;
    m_worker = worker;
    m_thread = new QThread(this);
    worker->moveToThread(m_thread);
    connect(m_thread, &QThread::started, worker, &TrainWorker::run);
    connect(m_thread, &QThread::finished, worker, &QObject::deleteLater);
    connect(worker, &TrainWorker::progress, this, &TrainingSession::progress);
    connect(worker, &TrainWorker::evaluated, this, &TrainingSession::evaluated);
    connect(worker, &TrainWorker::mechanisms, this, &TrainingSession::mechanisms);
    connect(worker, &TrainWorker::logMessage, this, &TrainingSession::logMessage);
    connect(worker, &TrainWorker::finished, this, &TrainingSession::onFinished);
    m_thread->start();
    emit busyChanged();
}

void TrainingSession::onFinished(const TrainOutcome& o)
{
    m_thread->quit();
    m_thread->wait();
    m_thread->deleteLater();
    m_thread = nullptr;
    m_worker = nullptr;
    // a continued model goes on from the checkpoint its run wrote
    if (!m_continuing.isEmpty() && !o.checkpoint.isEmpty()) m_checkpoint = o.checkpoint;
    m_resumable = (o.status == TrainOutcome::Status::Cancelled || o.status == TrainOutcome::Status::Diverged)
                  && !m_runDir.isEmpty() && QFileInfo::exists(resumeFilePath(m_runDir));
    emit modelChanged();  // its step moved on
    emit trainingFinished(o);
    emit busyChanged();
}

void TrainingSession::setPaused(bool paused)
{
    if (!m_worker) return;
    if (paused) m_worker->pause();
    else m_worker->resume();
}

void TrainingSession::stop()
{
    if (m_worker) {
        m_worker->resume();
        m_worker->cancel();
    }
    m_evalJob.stop();  // the lengths measured so far are still delivered
    m_openJob.stop();  // the read cannot be interrupted: it finishes, and its model is dropped
}

void TrainingSession::evaluate(const std::vector<int>& lengths, int samples)
{
    if (busy()) throw Error(tr("A job is running: stop it first."));
    if (m_model.isNull()) throw Error(tr("There is no model to evaluate: train one or open a checkpoint."));
    const Model model = m_model;
    m_evalJob.start(
        [model, lengths, samples](JobContext& job) {
            return model.evaluate(lengths, samples, 1234, [&job](int done, int total) {
                job.progress(done, total);
                return !job.cancelled();
            });
        },
        [this, lengths, model](const LengthCurve& result) {
            const bool partial = !isVectorTask(model.config().task.kind) && result.lengths.size() < lengths.size();
            emit evaluationFinished(result, partial);
            emit busyChanged();
        },
        [this](const QString& error) {
            emit evaluationFailed(tr("Evaluation failed: %1").arg(error));
            emit busyChanged();
        });
    emit busyChanged();
}

void TrainingSession::applyOpened(const QString& path, const Model& m)
{
    m_checkpoint = path;
    m_resumable = false;
    setModel(m);
    emit opened(path);
}

void TrainingSession::openNow(const QString& path)
{
    if (busy()) throw Error(tr("Stop the running job before opening a checkpoint."));
    Model m;
    try {
        m = Model::load(path);
    } catch (const Error& e) {
        throw Error(tr("Could not open the checkpoint.\n%1").arg(e.message()));
    }
    applyOpened(path, m);
}

void TrainingSession::open(const QString& path)
{
    if (busy()) throw Error(tr("Stop the running job before opening a checkpoint."));
    // stop() lets the read finish (it cannot be interrupted) and drops its model when it lands, so
    // the session stays busy until then, as it would for a read that was not stopped.
    m_openJob.start([path](JobContext&) { return Model::load(path); },
                    [this, path](const Model& model) {
                        if (m_openJob.stopRequested()) emit openCancelled(path);
                        else applyOpened(path, model);
                        emit busyChanged();
                    },
                    [this, path](const QString& error) {
                        if (m_openJob.stopRequested()) emit openCancelled(path);
                        else emit openFailed(tr("Could not open the checkpoint.\n%1").arg(error));
                        emit busyChanged();
                    });
    emit busyChanged();
}

void TrainingSession::save(const QString& path) const
{
    if (m_model.isNull()) throw Error(tr("There is no model to save yet."));
    if (isTraining()) throw Error(tr("Stop or finish training before saving (the run folder autosaves to %1).").arg(m_runDir));
    m_model.save(path);
}

}  // namespace parrot
