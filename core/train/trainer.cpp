#include "core/train/trainer.h"

#include "base/tasks/icltask.h"

#include "base/analysis/mechanisms.h"
#include "base/io/jsonfile.h"
#include "core/blockcache.h"
#include "core/diagnostics.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "core/modelimpl.h"
#include "core/train/losses.h"
#include "core/train/mechanismprobe.h"
#include "core/train/optimizer.h"
#include "core/train/splitbackward.h"
#include "core/torchcompat.h"

#include <ATen/CPUGeneratorImpl.h>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QJsonDocument>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>
#include <thread>

namespace parrot {

double learningRate(const TrainConfig& c, long long step)
{
    if (c.warmupSteps > 0 && step < c.warmupSteps) return c.lr * double(step + 1) / double(c.warmupSteps);
    const double span = std::max(1.0, double(c.steps - c.warmupSteps));
    const double progress = std::clamp(double(step - c.warmupSteps) / span, 0.0, 1.0);
    double factor = 1.0;
    if (c.schedule == "cosine") factor = c.minLrRatio + (1.0 - c.minLrRatio) * 0.5 * (1.0 + std::cos(M_PI * progress));
    else if (c.schedule == "linear") factor = 1.0 - (1.0 - c.minLrRatio) * progress;
    return c.lr * factor;
}

namespace {

using Clock = std::chrono::steady_clock;

// Log-spaced snapshots a run keeps at most: steps 0, K, 2K, ..., 2^(kLogSnapshots - 2) K of it
// (train.mechanism_every = K), so a folder holds at most kLogSnapshots + 2 of them.
constexpr int kLogSnapshots = 10;

// The weights at the start of the run and at each autosave, kept in memory so a run that
// diverges can be put back to its last good state without reading anything from disk.
struct Snapshot {
    std::vector<torch::Tensor> weights;
    long long step = 0;

    void take(Model::Impl& m)
    {
        torch::NoGradGuard noGrad;
        weights.clear();
        for (const auto& p : m.net->parameters()) weights.push_back(p.detach().clone());
        step = m.step;
    }
    void restore(Model::Impl& m) const
    {
        torch::NoGradGuard noGrad;
        auto params = m.net->parameters();
        for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i]);
        m.step = step;
    }
};

// The data generator's state as text (the standard's own form for an engine).
std::string engineState(const std::mt19937_64& rng)
{
    std::ostringstream os;
    os << rng;
    return os.str();
}

}  // namespace

// What a resume file holds besides the weights (trainer.h, ResumePlan).
struct TrainState {
    SafetensorsFile file;  // the whole resume file (the moments are read from it)
    long long runStartStep = 0, optimizerSteps = 0, examplesSeen = 0;
    double activeSeconds = 0, wallSeconds = 0;
    std::string dataRng;
};

namespace {

// train() and resumeTraining(): a fresh run, or one resumed from `resume`.
TrainOutcome runTraining(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb,
                         const QString& continuesFrom, const ResumePlan* resume)
{
    TrainOutcome out;
    if (model.isNull()) {
        out.status = TrainOutcome::Status::Failed;
        out.message = "no model to train";
        return out;
    }
    if (model.weightDtype() != "float32") {
        out.status = TrainOutcome::Status::Failed;
        out.message = QString("this model holds its weights as %1, for running only; open it with the weight dtype float32 to train it")
                          .arg(model.weightDtype());
        return out;
    }
    const ExperimentConfig& cfg = model.config();
    const TrainConfig& tc = cfg.train;
    const bool bf16 = tc.precision == "bf16";
    auto log = [&](const QString& s) { if (cb.log) cb.log(s); };
    try {
        applyThreads();
        const KeepFreedBlocks reuse;  // each step's tensors reuse the last step's memory (blockcache.h)
        Model::Impl& m = ModelAccess::impl(model);
        const TrainState* state = resume ? resume->state.get() : nullptr;
        // a model trained before counts on from its step; a resumed run from where it started
        const long long startStep = state ? state->runStartStep : m.step;
        const long long endStep = resume ? resume->toStep : startStep + tc.steps;
        std::optional<RunFolder> folder;
        if (resume)
            // (resumed at its very end, the end's evaluation row is written again: the one there goes)
            folder.emplace(runDir, cfg, RunFolder::Reopen{m.step == endStep ? m.step - 1 : m.step, QJsonObject{{"from_step", m.step}, {"to_step", endStep},
                                                                              {"train", toJson(cfg)["train"]},
                                                                              {"at", QDateTime::currentDateTime().toString(Qt::ISODate)}}});
        else if (!runDir.isEmpty())
            folder.emplace(runDir, cfg, environmentJson(),
                           startStep > 0 || !continuesFrom.isEmpty() ? QJsonObject{{"checkpoint", continuesFrom}, {"step", startStep}} : QJsonObject());
        // Token tasks: next-token cross-entropy on the answers. Vector (in-context learning) tasks:
        // squared error / d of the prediction at each scored x position.
        std::unique_ptr<TokenTask> tokenTask;
        std::unique_ptr<IclTask> iclTask;
        if (isVectorTask(cfg.task.kind)) iclTask = IclTask::create(cfg.task);
        else tokenTask = TokenTask::create(cfg.task);
        Optimizer opt(m.net, tc);
        // a continued model sees other batches than its first run did
        std::mt19937_64 rng(uint64_t(cfg.seed) * 0x9E3779B97F4A7C15ULL + 12345 + uint64_t(startStep));
        m.net->train();

        TrainProgress p;
        p.step = m.step;
        p.totalSteps = startStep + tc.steps;
        double activeSeconds = 0, pausedSeconds = 0, wallBefore = 0;
        if (state) {
            opt.restore(state->file, m.net, state->optimizerSteps);
            std::istringstream(state->dataRng) >> rng;
            const auto& torchRng = state->file.tensors["train_state.torch_rng"];
            if (torchRng.dtype == "U8" && torchRng.elementCount() > 0) {
                auto generator = at::detail::getDefaultCPUGenerator();
                std::lock_guard lock(generator.mutex());
                generator.set_state(torch::from_blob(const_cast<char*>(torchRng.data.constData()), {torchRng.elementCount()}, torch::kUInt8).clone());
            }
            p.examplesSeen = state->examplesSeen;
            activeSeconds = state->activeSeconds;
            wallBefore = state->wallSeconds;
        }
        const auto runStart = Clock::now();
        auto stamp = [&] {
            p.wallSeconds = wallBefore + std::chrono::duration<double>(Clock::now() - runStart).count() - pausedSeconds;
        };
        auto lastEmit = Clock::now() - std::chrono::hours(1);
        auto report = [&](bool force) {
            const auto now = Clock::now();
            if (!force && now - lastEmit < std::chrono::milliseconds(cb.progressIntervalMs)) return;
            lastEmit = now;
            if (cb.progress) cb.progress(p);
            p.stepLosses.clear();
        };
        auto evaluateNow = [&](int samples) {
            LengthCurve c = model.evaluate(evaluationLengths(cfg.task), samples, uint64_t(cfg.seed) + 777,
                                           [&](int, int) { return !control.cancel.load(); });
            stamp();
            if (folder) {
                folder->appendMetrics(p, &c);
                folder->appendCurve(c);
            }
            if (cb.evaluated) cb.evaluated(c);
            return c;
        };
        Snapshot good;
        good.take(m);
        // The resume file first, then the plain checkpoint: each is replaced atomically, so a kill
        // between or during them leaves a resume file that agrees with itself.
        auto checkpoint = [&](bool quiet = false) {
            good.take(m);
            if (!folder) return;
            stamp();
            {
                std::lock_guard lock(m.mutex);
                SafetensorsFile file = checkpointTensors(m);
                QJsonObject meta{{"version", 1}, {"run_start_step", startStep}, {"examples_seen", p.examplesSeen},
                                 {"active_seconds", activeSeconds}, {"wall_seconds", p.wallSeconds},
                                 {"data_rng", QString::fromStdString(engineState(rng))}};
                opt.save(file, m.net, meta);
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
                writeSafetensors(resumeFilePath(folder->dir()), file);
            }
            model.save(folder->checkpointPath());
            out.checkpoint = folder->checkpointPath();
            if (!quiet) log(QString("checkpoint saved at step %1: %2").arg(m.step).arg(out.checkpoint));
        };
        // Mechanism scores (train.mechanism_every, analysis/mechanisms.h): every head on a fixed probe
        // batch at the run's start, every K steps and at its end, into mechanisms.csv; the weights
        // kept as snapshots at log-spaced steps of the run (0, K, 2K, 4K, ..., kLogSnapshots of them)
        // and on each side of the step where the best lookup score first reaches kLookupForms, the
        // "before" side from the weights of the scoring before, held in memory until then.
        std::optional<MechanismProbe> mechanisms;
        if (tokenTask && mechanismsApply(cfg)) mechanisms.emplace(cfg);
        const long long every = std::max(1, tc.mechanismEvery);
        long long lastScored = -1;
        double lastBest = -1;
        bool formed = false;
        std::optional<std::pair<SafetensorsFile, long long>> before;
        if (folder && !folder->mechanismsSoFar().empty()) {  // resumed: what the scorings so far found
            const auto& kept = folder->mechanismsSoFar();
            lastScored = kept.back().step;
            lastBest = kept.back().bestLookup();
            formed = lookupFormsAt(kept) >= 0;
        }
        auto keepSnapshot = [&](const SafetensorsFile& file, long long step) {
            const QString path = folder->snapshotPath(step);
            if (!QDir().mkpath(QFileInfo(path).absolutePath())) throw Error(QString("%1: cannot create the folder").arg(QFileInfo(path).absolutePath()));
            writeSafetensors(path, file);
        };
        auto scoreMechanisms = [&] {
            const long long run = m.step - startStep, k = run / every;
            const bool logSpaced = run == 0 || (run % every == 0 && (k & (k - 1)) == 0 && k <= (1LL << (kLogSnapshots - 2)));
            MechanismScores scores;
            std::optional<SafetensorsFile> now;
            {
                std::lock_guard lock(m.mutex);
                scores = mechanisms->score(m);
                if (folder && (logSpaced || !formed)) now = checkpointTensors(m);
            }
            const double best = scores.bestLookup();
            const bool forms = !formed && lastBest >= 0 && lastBest < kLookupForms && best >= kLookupForms;
            if (folder) {
                folder->appendMechanisms(scores);
                if (logSpaced || forms) keepSnapshot(*now, m.step);
                if (forms && before) keepSnapshot(before->first, before->second);
            }
            if (forms) {
                const auto strongest = std::max_element(scores.heads.begin(), scores.heads.end(),
                                                        [](const HeadScore& a, const HeadScore& b) { return a.bestLookup() < b.bestLookup(); });
                log(QString("a lookup formed at step %1: %2 (%3) attends %4 to the token after the earlier occurrence%5")
                        .arg(m.step).arg(strongest->name(), strongest->label).arg(best, 0, 'f', 2)
                        .arg(folder ? QString("; snapshots of steps %1 and %2 kept").arg(before ? before->second : m.step).arg(m.step) : QString()));
                formed = true;
                before.reset();
            } else if (!formed && now) {
                before.emplace(std::move(*now), m.step);
            }
            lastScored = m.step;
            lastBest = best;
            if (cb.mechanisms) cb.mechanisms(scores);
        };
        if (mechanisms && state && folder && !formed) {  // resumed before the lookup formed: the weights it goes on from
            std::lock_guard lock(m.mutex);
            before.emplace(checkpointTensors(m), m.step);
        }
        if (mechanisms && !state) scoreMechanisms();

        // A run with autosaves can be resumed from its first step on: killed before its first
        // autosave, it goes on from here rather than having nothing to go on from.
        if (!state && folder && tc.checkpointEvery > 0) checkpoint(true);

        for (long long s = m.step - startStep; s < endStep - startStep; ++s) {
            const auto pauseStart = Clock::now();
            while (control.pause.load() && !control.cancel.load()) {
                if (!p.paused) { p.paused = true; report(true); }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            if (p.paused) pausedSeconds += std::chrono::duration<double>(Clock::now() - pauseStart).count();
            if (p.paused) { p.paused = false; report(true); }
            if (control.cancel.load()) {
                out.status = TrainOutcome::Status::Cancelled;
                break;
            }
            const auto t0 = Clock::now();
            TokenBatch b;
            VectorBatch vb;
            if (iclTask) {
                const auto [active, mostPairs] = IclTask::curriculumStage(cfg, startStep + s);
                iclTask->setActiveDims(active);
                const int pairs = std::uniform_int_distribution<int>(cfg.task.minLen, cfg.task.maxLen)(rng);
                vb = iclTask->batch(tc.batchSize, std::min(pairs, mostPairs), rng);
                b.examples = vb.batch;
            } else {
                b = tokenTask->trainBatch(tc.batchSize, rng);
            }
            const double lr = learningRate(tc, s);
            double lossValue = 0;
            {
                std::lock_guard lock(m.mutex);
                opt.clearGradients();
                {
                    // train.precision bf16: forward and backward under autocast, on this thread only
                    // (Torch keeps autocast per thread), so the batch is not split across threads
                    const compat::AutocastScope autocast(m.device, bf16);
                    if (iclTask) {
                        const auto loss = vectorLoss(m.net, vb, m.device);
                        lossValue = loss.item<double>();
                        if (std::isfinite(lossValue)) loss.backward();
                    } else {
                        lossValue = tokenLossBackward(m.net, b, m.device, bf16 ? 1 : splitParts(b, m.device));
                    }
                }
                if (!std::isfinite(lossValue)) {
                    opt.clearGradients();
                    out.status = TrainOutcome::Status::Diverged;
                    out.step = m.step;
                    out.message = QString("Training diverged: the loss became %1 at step %2 (learning rate %3). ")
                                      .arg(std::isnan(lossValue) ? "NaN" : "infinite").arg(startStep + s + 1).arg(lr, 0, 'g', 3);
                } else {
                    opt.step(lr, tc.gradClip);
                    ++m.step;
                }
            }
            if (out.status == TrainOutcome::Status::Diverged) break;
            activeSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
            const long long done = s + 1;  // steps of this run; the schedule and the intervals count these
            p.step = startStep + done;
            p.loss = lossValue;
            p.stepLosses.push_back(lossValue);
            p.lr = lr;
            p.examplesSeen += b.examples;  // prompts, for vector tasks
            p.elapsedSeconds = activeSeconds;
            p.tokensPerSecond = double(done) * tc.batchSize * cfg.task.contextLen / std::max(1e-9, activeSeconds);
            p.etaSeconds = activeSeconds / double(done) * double(tc.steps - done);
            stamp();
            bool last = startStep + done == endStep;
            if (mechanisms && !last && done % every == 0) scoreMechanisms();
            const bool evalNow = !last && tc.evalEvery > 0 && done % tc.evalEvery == 0;
            if (evalNow) {
                const LengthCurve c = evaluateNow(tc.evalSamples);
                const double reached = c.stringAccuracyAt(cfg.task.maxLen, -1);
                if (tc.targetAccuracy > 0 && reached >= tc.targetAccuracy) {
                    out.targetReached = true;
                    out.finalCurve = c;  // the run's result: no second evaluation at the same step
                    log(QString("string accuracy %1% at length %2 reached the target %3% at step %4: stopping")
                            .arg(100 * reached, 0, 'f', 1).arg(cfg.task.maxLen).arg(100 * tc.targetAccuracy, 0, 'f', 1).arg(p.step));
                    last = true;
                }
            } else if (folder && done % tc.logEvery == 0 && !last) {
                folder->appendMetrics(p, nullptr);
            }
            if (tc.checkpointEvery > 0 && done % tc.checkpointEvery == 0 && !last) checkpoint();
            report(last);
            if (out.targetReached) break;
        }

        out.step = m.step;
        if (out.status == TrainOutcome::Status::Diverged) {
            {
                std::lock_guard lock(m.mutex);
                good.restore(m);
            }
            out.step = m.step;
            out.message += QString("The model was put back to its last good state (step %1)").arg(m.step);
            out.message += out.checkpoint.isEmpty() ? QString(". ")
                                                    : QString("; the checkpoint %1 is kept unchanged. ").arg(out.checkpoint);
            out.message += "Try a lower learning rate or stronger gradient clipping.";
            if (folder) {
                folder->appendMetrics(p, nullptr);
                folder->finish(out, activeSeconds);
            }
            report(true);
            return out;
        }
        if (out.status == TrainOutcome::Status::Finished && m.step < startStep + tc.steps && !out.targetReached) {
            out.status = TrainOutcome::Status::Cancelled;  // stopped where resuming was asked to stop
            if (folder) folder->appendMetrics(p, nullptr);
            out.message = QString("Stopped at step %1 of %2, as asked; resume the run to go on.").arg(p.step).arg(p.totalSteps);
        } else if (out.status == TrainOutcome::Status::Finished) {
            if (!out.targetReached) out.finalCurve = evaluateNow(cfg.task.evalSamples);
            if (mechanisms && lastScored != m.step) scoreMechanisms();
            out.message = out.targetReached
                              ? QString("Reached the target accuracy at step %1 of %2 in %3 s.").arg(p.step).arg(p.totalSteps).arg(p.wallSeconds, 0, 'f', 1)
                              : QString("Finished %1 steps in %2 s%3.").arg(tc.steps).arg(activeSeconds, 0, 'f', 1)
                                    .arg(state ? QString(" (resumed at step %1)").arg(resume->fromStep) : QString());
        } else {
            if (folder) folder->appendMetrics(p, nullptr);
            out.message = QString("Stopped at step %1 of %2.").arg(p.step).arg(p.totalSteps);
        }
        checkpoint();
        if (folder) {
            out.step = m.step;
            folder->finish(out, activeSeconds);
        }
        report(true);
    } catch (const Error& e) {
        out.status = TrainOutcome::Status::Failed;
        out.message = e.message();
    } catch (const std::exception& e) {
        out.status = TrainOutcome::Status::Failed;
        out.message = QString("Training failed: %1").arg(QString::fromUtf8(e.what()).section('\n', 0, 0));
    }
    out.step = model.step();
    return out;
}

// The train.* settings that decide whether a step gives the same result (what a divergence
// needs changed before it is resumed).
QStringList stepSettings(const ExperimentConfig& a, const ExperimentConfig& b)
{
    return overridesBetween(a, b).filter(QRegularExpression("^train\\.(lr|grad_clip|warmup_steps|schedule|min_lr_ratio|weight_decay|beta1|beta2|batch_size)="));
}

}  // namespace

TrainOutcome train(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb, const QString& continuesFrom)
{
    return runTraining(model, runDir, control, cb, continuesFrom, nullptr);
}

ResumePlan planResume(const QString& runDir, const ResumeOptions& o)
{
    const QDir dir(runDir);
    if (!dir.exists("config.json") || !dir.exists("metrics.csv"))
        throw Error(QString("%1: not a run folder (it has no config.json and metrics.csv)").arg(runDir));
    RunFolder::checkNotInUse(dir.absolutePath());
    const QString path = resumeFilePath(runDir);
    ResumePlan plan;
    plan.runDir = dir.absolutePath();
    // Killed before it saved anything (between writing its folder and its step-0 autosave): it
    // starts again from its first step, in place, as it started the first time.
    const auto continuesACheckpoint = [&] {  // a run that trains an opened model further starts from that model
        const auto config = readJsonObjectIfValid(dir.filePath("config.json"));
        return config && config->contains("continues_from");
    };
    if (!QFileInfo::exists(path) && !dir.exists("checkpoints/last.safetensors") && runStatus(runDir).isEmpty() && !continuesACheckpoint()) {
        const ExperimentConfig cfg = loadConfigFile(dir.filePath("config.json"));
        if (!o.sets.isEmpty() || o.steps > 0)
            throw Error(QString("%1: the run never saved a step; start it again without --steps or --set").arg(runDir));
        plan.model = Model::create(cfg);
        plan.toStep = cfg.train.steps;
        plan.description = QString("Restarting %1 from its first step: it was stopped before it saved anything").arg(plan.runDir);
        return plan;
    }
    if (!QFileInfo::exists(path))
        throw Error(QString("%1: has no resume point (checkpoints/resume.safetensors): the run was written by a version "
                            "without resuming, or stopped before its first autosave (train.checkpoint_every); "
                            "train its checkpoint on in a new run instead").arg(runDir));
    auto state = std::make_shared<TrainState>();
    Model saved = Model::load(path, {}, WeightDtype::Float32);  // trained further: float32 whatever the preference
    state->file = readSafetensors(path);
    QJsonParseError err;
    const QJsonObject meta = QJsonDocument::fromJson(state->file.metadata.value("train_state").toUtf8(), &err).object();
    if (err.error != QJsonParseError::NoError || meta.value("version").toInt() != 1 || !meta.contains("data_rng"))
        throw Error(QString("%1: __metadata__.train_state is missing or not version 1").arg(path));
    state->runStartStep = meta.value("run_start_step").toInteger(-1);
    state->optimizerSteps = meta.value("optimizer_steps").toInteger(-1);
    state->examplesSeen = meta.value("examples_seen").toInteger();
    state->activeSeconds = meta.value("active_seconds").toDouble();
    state->wallSeconds = meta.value("wall_seconds").toDouble();
    state->dataRng = meta.value("data_rng").toString().toStdString();
    std::mt19937_64 probe;
    std::istringstream in(state->dataRng);
    in >> probe;
    if (state->runStartStep < 0 || state->runStartStep > saved.step() || state->optimizerSteps < 0 || in.fail())
        throw Error(QString("%1: __metadata__.train_state is damaged (run start, optimiser steps or generator state)").arg(path));

    // The settings the run last trained with are config.json's (a resume with changed settings
    // writes them there before its first autosave); the model, task and seed must be the file's.
    ExperimentConfig was = saved.config();
    try {
        was = loadConfigFile(dir.filePath("config.json"));
    } catch (const Error&) {
        // unreadable: the resume file's own settings
    }
    const QStringList beyondTraining = overridesBetween(saved.config(), was).filter(QRegularExpression("^(model|task|seed)"));
    if (!beyondTraining.isEmpty())
        throw Error(QString("%1: config.json and the resume file describe different runs (%2)").arg(runDir, beyondTraining.join(", ")));
    ExperimentConfig cfg = was;
    if (!o.sets.isEmpty()) {
        for (const QString& set : o.sets)
            if (!set.startsWith("train.") || set.startsWith("train.steps="))
                throw Error(QString("--set %1: resuming keeps the run's task, model, seed and steps; only train.* settings "
                                    "other than train.steps can change (--steps N sets the total)").arg(set));
        applyOverrides(cfg, o.sets);
    }
    const long long done = saved.step() - state->runStartStep;  // steps of this run so far
    const QString status = runStatus(runDir);
    if (status == "diverged" && stepSettings(was, cfg).isEmpty())
        throw Error(QString("%1: the run diverged with these settings; resumed unchanged from step %2 it would diverge again. "
                            "Change how it steps, e.g. --set train.lr=%3 (half the rate) or --set train.grad_clip=%4")
                        .arg(runDir).arg(saved.step()).arg(was.train.lr / 2, 0, 'g', 3).arg(was.train.gradClip > 0 ? was.train.gradClip / 2 : 1.0, 0, 'g', 3));
    long long total = o.steps > 0 ? o.steps : cfg.train.steps;
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
    const QStringList problems = validate(cfg);
    if (!problems.isEmpty()) throw Error(problems.join("; "));
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

TrainOutcome resumeTraining(ResumePlan& plan, TrainControl& control, const TrainCallbacks& cb)
{
    return runTraining(plan.model, plan.runDir, control, cb, {}, &plan);
}

}  // namespace parrot
