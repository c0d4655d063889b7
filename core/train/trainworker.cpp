#include "core/train/trainworker.h"

namespace parrot {

TrainWorker::TrainWorker(Model model, QString runDir, QString continuesFrom, QObject* parent)
    : QObject(parent), m_model(std::move(model)), m_runDir(std::move(runDir)), m_continuesFrom(std::move(continuesFrom))
{
}

TrainWorker::TrainWorker(ResumePlan plan, QObject* parent)
    : QObject(parent), m_model(plan.model), m_runDir(plan.runDir), m_resume(std::move(plan))
{
}

void TrainWorker::run()
{
    TrainCallbacks cb;
    // Five snapshots a second: each carries every step's loss, so the live curve misses none, and
    // the window's updates and replots take no measurable share of the cores training runs on
    // (bench/gui_vs_cli.sh).
    cb.progressIntervalMs = 200;
    cb.progress = [this](const TrainProgress& p) { emit progress(p); };
    cb.evaluated = [this](const LengthCurve& c) { emit evaluated(c); };
    cb.log = [this](const QString& s) { emit logMessage(s); };
    cb.mechanisms = [this](const MechanismScores& m) { emit mechanisms(m); };
    const TrainOutcome outcome = m_resume ? resumeTraining(*m_resume, m_control, cb) : train(m_model, m_runDir, m_control, cb, m_continuesFrom);
    emit finished(outcome);
}

void registerMetaTypes()
{
    qRegisterMetaType<parrot::TrainProgress>();
    qRegisterMetaType<parrot::LengthCurve>();
    qRegisterMetaType<parrot::TrainOutcome>();
    qRegisterMetaType<parrot::MechanismScores>();
}

}  // namespace parrot
