#include "core/train/resume.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "core/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

#include <sstream>

namespace parrot {

QJsonObject trainStateMeta(long long runStartStep, long long examplesSeen, double activeSeconds, double wallSeconds,
                           const std::mt19937_64& dataRng)
{
    std::ostringstream rng;  // the standard's own text form of an engine
    rng << dataRng;
    return QJsonObject{{"version", 1}, {"run_start_step", runStartStep}, {"examples_seen", examplesSeen},
                       {"active_seconds", activeSeconds}, {"wall_seconds", wallSeconds},
                       {"data_rng", QString::fromStdString(rng.str())}};
}

void writeResumeFile(const QString& path, SafetensorsFile& file, const QJsonObject& meta)
{
    auto generator = at::detail::getDefaultCPUGenerator();
    torch::Tensor torchRng;
    {
        std::lock_guard rngLock(generator.mutex());
        torchRng = generator.get_state();
    }
    TensorRecord rec;
    rec.dtype = "U8";
    rec.shape = {torchRng.numel()};
    rec.data = QByteArray(static_cast<const char*>(torchRng.data_ptr()), qsizetype(torchRng.numel()));
    file.tensors.insert("train_state.torch_rng", rec);
    file.metadata.insert("train_state", QString::fromUtf8(QJsonDocument(meta).toJson(QJsonDocument::Compact)));
    writeSafetensors(path, file);
}

TrainState readTrainState(const QString& path, long long savedStep)
{
    TrainState state;
    state.file = readSafetensors(path);
    QJsonParseError err;
    const QJsonObject meta = QJsonDocument::fromJson(state.file.metadata.value("train_state").toUtf8(), &err).object();
    if (err.error != QJsonParseError::NoError || meta.value("version").toInt() != 1 || !meta.contains("data_rng"))
        throw Error(QString("%1: __metadata__.train_state is missing or not version 1").arg(path));
    state.runStartStep = meta.value("run_start_step").toInteger(-1);
    state.optimizerSteps = meta.value("optimizer_steps").toInteger(-1);
    state.examplesSeen = meta.value("examples_seen").toInteger();
    state.activeSeconds = meta.value("active_seconds").toDouble();
    state.wallSeconds = meta.value("wall_seconds").toDouble();
    state.dataRng = meta.value("data_rng").toString().toStdString();
    std::mt19937_64 probe;
    std::istringstream in(state.dataRng);
    in >> probe;
    if (state.runStartStep < 0 || state.runStartStep > savedStep || state.optimizerSteps < 0 || in.fail())
        throw Error(QString("%1: __metadata__.train_state is damaged (run start, optimiser steps or generator state)").arg(path));
    return state;
}

void restoreGenerators(const TrainState& state, std::mt19937_64& dataRng)
{
    std::istringstream(state.dataRng) >> dataRng;
    const auto found = state.file.tensors.find("train_state.torch_rng");
    if (found == state.file.tensors.end()) return;
    const TensorRecord& torchRng = *found;
    if (torchRng.dtype == "U8" && torchRng.elementCount() > 0) {
        auto generator = at::detail::getDefaultCPUGenerator();
        std::lock_guard lock(generator.mutex());
        generator.set_state(torch::from_blob(const_cast<char*>(torchRng.data.constData()), {torchRng.elementCount()}, torch::kUInt8).clone());
    }
}

namespace {

// Killed before it saved anything (between writing its folder and its step-0 autosave). A run
// that trains an opened model further starts from that model, so it is never one of these.
bool neverSaved(const QDir& dir, const QString& runDir, const QString& resumePath)
{
    const auto continuesACheckpoint = [&] {
        const auto config = readJsonObjectIfValid(dir.filePath("config.json"));
        return config && config->contains("continues_from");
    };
    return !QFileInfo::exists(resumePath) && !dir.exists("checkpoints/last.safetensors") && runStatus(runDir).isEmpty()
           && !continuesACheckpoint();
}

// A run that never saved starts again from its first step, in place, as it started the first time.
ResumePlan restartPlan(const QDir& dir, const QString& runDir, const ResumeOptions& o)
{
    ResumePlan plan;
    plan.runDir = dir.absolutePath();
    const ExperimentConfig cfg = loadConfigFile(dir.filePath("config.json"));
    if (!o.sets.isEmpty() || o.steps > 0)
        throw Error(QString("%1: the run never saved a step; start it again without --steps or --set").arg(runDir));
    plan.model = Model::create(cfg);
    plan.toStep = cfg.train.steps;
    plan.description = QString("Restarting %1 from its first step: it was stopped before it saved anything").arg(plan.runDir);
    return plan;
}

// The settings the run last trained with are config.json's (a resume with changed settings
// writes them there before its first autosave); the model, task and seed must be the file's.
ExperimentConfig lastSettings(const QDir& dir, const QString& runDir, const Model& saved)
{
    ExperimentConfig was = saved.config();
    try {
        was = loadConfigFile(dir.filePath("config.json"));
    } catch (const Error&) {
        // unreadable: the resume file's own settings
    }
    const QStringList beyondTraining = overridesBetween(saved.config(), was).filter(QRegularExpression("^(model|task|seed)"));
    if (!beyondTraining.isEmpty())
        throw Error(QString("%1: config.json and the resume file describe different runs (%2)").arg(runDir, beyondTraining.join(", ")));
    return was;
}

// The settings it goes on with: `was` with the train.* changes of --set.
ExperimentConfig withChanges(const ExperimentConfig& was, const QStringList& sets)
{
    ExperimentConfig cfg = was;
    if (sets.isEmpty()) return cfg;
    for (const QString& set : sets)
        if (!set.startsWith("train.") || set.startsWith("train.steps="))
            throw Error(QString("--set %1: resuming keeps the run's task, model, seed and steps; only train.* settings "
                                "other than train.steps can change (--steps N sets the total)").arg(set));
    applyOverrides(cfg, sets);
    return cfg;
}

// The train.* settings that decide whether a step gives the same result (what a divergence
// needs changed before it is resumed).
QStringList stepSettings(const ExperimentConfig& a, const ExperimentConfig& b)
{
    return overridesBetween(a, b).filter(QRegularExpression("^train\\.(lr|grad_clip|warmup_steps|schedule|min_lr_ratio|weight_decay|beta1|beta2|batch_size)="));
}

// The run's new total of steps, `done` of them done: --steps (stretching cfg's schedule over it
// with --extend-schedule) or its own.
long long resumeTotal(const QString& runDir, ExperimentConfig& cfg, const ResumeOptions& o, long long done, const QString& status)
{
    const long long total = o.steps > 0 ? o.steps : cfg.train.steps;
    if (total > cfg.train.steps) {
        if (!o.extendSchedule)
            throw Error(QString("--steps %1 is past the run's %2 steps, over which its learning-rate schedule was planned: add "
                                "--extend-schedule to stretch the schedule over %1 steps (the rate at step %3 becomes what a "
                                "%1-step schedule has there), or train its checkpoint on in a new run")
                            .arg(total).arg(cfg.train.steps).arg(done));
        cfg.train.steps = int(total);
    }
    // at its total without result.json (killed between its last autosave and the end): only the
    // final evaluation is left to do
    const bool onlyTheEnd = total == done && status != "finished" && total == cfg.train.steps;
    if (total <= done && !onlyTheEnd)
        throw Error(status == "finished" && total == cfg.train.steps
                        ? QString("%1: the run finished all its %2 steps; give --steps N (more than %2) with --extend-schedule to train it longer").arg(runDir).arg(total)
                        : QString("%1: the run is at step %2 already; --steps must be more than that").arg(runDir).arg(done));
    return total;
}

}  // namespace

ResumePlan planResume(const QString& runDir, const ResumeOptions& o)
{
    const QDir dir(runDir);
    if (!dir.exists("config.json") || !dir.exists("metrics.csv"))
        throw Error(QString("%1: not a run folder (it has no config.json and metrics.csv)").arg(runDir));
    RunFolder::checkNotInUse(dir.absolutePath());
    const QString path = resumeFilePath(runDir);
    if (neverSaved(dir, runDir, path)) return restartPlan(dir, runDir, o);
    if (!QFileInfo::exists(path))
        throw Error(QString("%1: has no resume point (checkpoints/resume.safetensors): the run was written by a version "
                            "without resuming, or stopped before its first autosave (train.checkpoint_every); "
                            "train its checkpoint on in a new run instead").arg(runDir));
    Model saved = Model::load(path, {}, WeightDtype::Float32);  // trained further: float32 whatever the preference
    auto state = std::make_shared<TrainState>(readTrainState(path, saved.step()));

    const ExperimentConfig was = lastSettings(dir, runDir, saved);
    ExperimentConfig cfg = withChanges(was, o.sets);
    const long long done = saved.step() - state->runStartStep;  // steps of this run so far
    const QString status = runStatus(runDir);
    if (status == "diverged" && stepSettings(was, cfg).isEmpty())
        throw Error(QString("%1: the run diverged with these settings; resumed unchanged from step %2 it would diverge again. "
                            "Change how it steps, e.g. --set train.lr=%3 (half the rate) or --set train.grad_clip=%4")
                        .arg(runDir).arg(saved.step()).arg(was.train.lr / 2, 0, 'g', 3).arg(was.train.gradClip > 0 ? was.train.gradClip / 2 : 1.0, 0, 'g', 3));
    const long long total = resumeTotal(runDir, cfg, o, done, status);
    const QStringList problems = validate(cfg);
    if (!problems.isEmpty()) throw Error(problems.join("; "));

    ResumePlan plan;
    plan.runDir = dir.absolutePath();
    plan.model = overridesBetween(saved.config(), cfg).isEmpty() ? saved : saved.continuedAs(cfg);
    plan.fromStep = saved.step();
    plan.toStep = state->runStartStep + total;
    plan.state = state;
    const QStringList changed = overridesBetween(was, cfg);
    plan.description = QString("Resuming %1 at step %2 of %3 to step %4%5").arg(plan.runDir).arg(plan.fromStep)
                           .arg(state->runStartStep + was.train.steps).arg(plan.toStep)
                           .arg(changed.isEmpty() ? QString() : QString(", with %1").arg(changed.join(", ")));
    return plan;
}

}  // namespace parrot
