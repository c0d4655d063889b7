#include "core/train/trainer.h"

#include "base/analysis/mechanisms.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/icltask.h"
#include "core/blockcache.h"
#include "core/diagnostics.h"
#include "core/modelimpl.h"
#include "core/torchcompat.h"
#include "core/train/losses.h"
#include "core/train/mechanismprobe.h"
#include "core/train/optimizer.h"
#include "core/train/resume.h"
#include "core/train/splitbackward.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include <chrono>
#include <cmath>
#include <optional>
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

// Why `model` cannot be trained; empty when it can.
QString refusal(const Model& model)
{
    if (model.isNull()) return "no model to train";
    if (model.weightDtype() != "float32")
        return QString("this model holds its weights as %1, for running only; open it with the weight dtype float32 to train it")
            .arg(model.weightDtype());
    return {};
}

// One run of train() or resumeTraining(): set-up, the steps, and the end (evaluation, checkpoint,
// result.json), with the run's state as members. The outcome is the caller's, so what a run that
// throws had written (its last checkpoint) stays in it.
class TrainingRun {
public:
    // Opens the run folder, builds the task and the optimiser, restores a resumed run's state and
    // scores the heads at the run's start. Throws what those throw.
    TrainingRun(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb,
                const QString& continuesFrom, const ResumePlan* resume, TrainOutcome& out);
    // The steps from where the model is to the run's end or a stop, then the end.
    void run();

private:
    void openFolder(const QString& runDir, const QString& continuesFrom);
    void restoreState();
    void startMechanisms();

    bool waitWhilePaused();  // false: cancelled
    bool step(long long s);  // false: the run stops (diverged, or reached its target)
    double descend(const TokenBatch& b, const VectorBatch& vb, double lr, long long s);
    bool afterStep(long long done, double loss, double lr, int examples);
    bool evaluateReachesTarget();

    LengthCurve evaluateNow(int samples);
    void validate();
    void checkpoint(bool quiet = false);
    void scoreMechanisms();
    void keepSnapshot(const SafetensorsFile& file, long long step);

    void finish();
    void finishDiverged();

    void stamp();
    void report(bool force);
    void log(const QString& s) const
    {
        if (m_cb.log) m_cb.log(s);
    }

    Model& m_model;
    Model::Impl& m_impl;
    const ExperimentConfig& m_cfg;
    const TrainConfig& m_tc;
    TrainControl& m_control;
    const TrainCallbacks& m_cb;
    TrainOutcome& m_out;
    const ResumePlan* m_resume;
    const TrainState* m_state;  // a resumed run's, else null
    // a model trained before counts on from its step; a resumed run from where it started
    const long long m_startStep;
    const long long m_endStep;
    const bool m_bf16;

    std::optional<RunFolder> m_folder;
    // Token tasks: next-token cross-entropy on the answers. Vector (in-context learning) tasks:
    // squared error / d of the prediction at each scored x position.
    std::unique_ptr<TokenTask> m_tokenTask;
    std::unique_ptr<IclTask> m_iclTask;
    std::optional<Optimizer> m_opt;  // built after the folder and the task, in the set-up's order
    std::mt19937_64 m_rng;  // the training data's

    TrainProgress m_progress;
    double m_activeSeconds = 0, m_pausedSeconds = 0, m_wallBefore = 0;
    Clock::time_point m_runStart, m_lastEmit;
    Snapshot m_good;

    // Mechanism scores (train.mechanism_every, analysis/mechanisms.h): every head on a fixed probe
    // batch at the run's start, every K steps and at its end, into mechanisms.csv; the weights
    // kept as snapshots at log-spaced steps of the run (0, K, 2K, 4K, ..., kLogSnapshots of them)
    // and on each side of the step where the best lookup score first reaches kLookupForms, the
    // "before" side from the weights of the scoring before, held in memory until then.
    std::optional<MechanismProbe> m_probe;
    const long long m_every;
    long long m_lastScored = -1;
    double m_lastBest = -1;
    bool m_formed = false;
    std::optional<std::pair<SafetensorsFile, long long>> m_before;
};

TrainingRun::TrainingRun(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb,
                         const QString& continuesFrom, const ResumePlan* resume, TrainOutcome& out)
    : m_model(model), m_impl(ModelAccess::impl(model)), m_cfg(model.config()), m_tc(m_cfg.train), m_control(control),
      m_cb(cb), m_out(out), m_resume(resume), m_state(resume ? resume->state.get() : nullptr),
      m_startStep(m_state ? m_state->runStartStep : m_impl.step),
      m_endStep(resume ? resume->toStep : m_startStep + m_tc.steps), m_bf16(m_tc.precision == "bf16"),
      // a continued model sees other batches than its first run did
      m_rng(uint64_t(m_cfg.seed) * 0x9E3779B97F4A7C15ULL + 12345 + uint64_t(m_startStep)),
      m_every(std::max(1, m_tc.mechanismEvery))
{
    openFolder(runDir, continuesFrom);
    if (isVectorTask(m_cfg.task.kind)) m_iclTask = IclTask::create(m_cfg.task);
    else m_tokenTask = TokenTask::create(m_cfg.task);
    m_opt.emplace(m_impl.net, m_tc);
    m_impl.net->train();

    m_progress.step = m_impl.step;
    m_progress.totalSteps = m_startStep + m_tc.steps;
    if (m_state) restoreState();
    m_runStart = Clock::now();
    m_lastEmit = m_runStart - std::chrono::hours(1);
    m_good.take(m_impl);
    startMechanisms();
}

void TrainingRun::openFolder(const QString& runDir, const QString& continuesFrom)
{
    const long long step = m_impl.step;
    if (m_resume) {
        const QJsonObject resumed{{"from_step", step}, {"to_step", m_endStep}, {"train", toJson(m_cfg)["train"]},
                                  {"at", QDateTime::currentDateTime().toString(Qt::ISODate)}};
        // (resumed at its very end, the end's evaluation row is written again: the one there goes)
        m_folder.emplace(runDir, m_cfg, RunFolder::Reopen{step == m_endStep ? step - 1 : step, resumed});
    } else if (!runDir.isEmpty()) {
        m_folder.emplace(runDir, m_cfg, environmentJson(),
                         m_startStep > 0 || !continuesFrom.isEmpty() ? QJsonObject{{"checkpoint", continuesFrom}, {"step", m_startStep}}
                                                                     : QJsonObject());
    }
}

// A resumed run: the optimiser's moments, both generators and the counters as they were saved.
void TrainingRun::restoreState()
{
    m_opt->restore(m_state->file, m_impl.net, m_state->optimizerSteps);
    restoreGenerators(*m_state, m_rng);
    m_progress.examplesSeen = m_state->examplesSeen;
    m_activeSeconds = m_state->activeSeconds;
    m_wallBefore = m_state->wallSeconds;
}

void TrainingRun::startMechanisms()
{
    if (m_tokenTask && mechanismsApply(m_cfg)) m_probe.emplace(m_cfg);
    if (m_folder && !m_folder->mechanismsSoFar().empty()) {  // resumed: what the scorings so far found
        const auto& kept = m_folder->mechanismsSoFar();
        m_lastScored = kept.back().step;
        m_lastBest = kept.back().bestLookup();
        m_formed = lookupFormsAt(kept) >= 0;
    }
    if (m_probe && m_state && m_folder && !m_formed) {  // resumed before the lookup formed: the weights it goes on from
        std::lock_guard lock(m_impl.mutex);
        m_before.emplace(checkpointTensors(m_impl), m_impl.step);
    }
    if (m_probe && !m_state) scoreMechanisms();
}

void TrainingRun::run()
{
    // A run with autosaves can be resumed from its first step on: killed before its first
    // autosave, it goes on from here rather than having nothing to go on from.
    if (!m_state && m_folder && m_tc.checkpointEvery > 0) checkpoint(true);

    for (long long s = m_impl.step - m_startStep; s < m_endStep - m_startStep; ++s) {
        if (!waitWhilePaused()) {
            m_out.status = TrainOutcome::Status::Cancelled;
            break;
        }
        if (!step(s)) break;
    }
    finish();
}

bool TrainingRun::waitWhilePaused()
{
    const auto pauseStart = Clock::now();
    while (m_control.pause.load() && !m_control.cancel.load()) {
        if (!m_progress.paused) {
            m_progress.paused = true;
            report(true);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (m_progress.paused) {
        m_pausedSeconds += std::chrono::duration<double>(Clock::now() - pauseStart).count();
        m_progress.paused = false;
        report(true);
    }
    return !m_control.cancel.load();
}

// Step s of this run (0-based): a batch, the loss and the optimiser's step, then what follows a step.
bool TrainingRun::step(long long s)
{
    const auto t0 = Clock::now();
    TokenBatch b;
    VectorBatch vb;
    if (m_iclTask) {
        const auto [active, mostPairs] = IclTask::curriculumStage(m_cfg, m_startStep + s);
        m_iclTask->setActiveDims(active);
        const int pairs = std::uniform_int_distribution<int>(m_cfg.task.minLen, m_cfg.task.maxLen)(m_rng);
        vb = m_iclTask->batch(m_tc.batchSize, std::min(pairs, mostPairs), m_rng);
        b.examples = vb.batch;
    } else {
        b = m_tokenTask->trainBatch(m_tc.batchSize, m_rng);
    }
    const double lr = learningRate(m_tc, s);
    const double loss = descend(b, vb, lr, s);
    if (m_out.status == TrainOutcome::Status::Diverged) return false;
    m_activeSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
    return afterStep(s + 1, loss, lr, b.examples);
}

// The batch's loss and gradients and the optimiser's step at `lr`, under the model's lock. A loss
// that is not finite takes no step and marks the run diverged.
double TrainingRun::descend(const TokenBatch& b, const VectorBatch& vb, double lr, long long s)
{
    double lossValue = 0;
    std::lock_guard lock(m_impl.mutex);
    m_opt->clearGradients();
    {
        // train.precision bf16: forward and backward under autocast, on this thread only
        // (Torch keeps autocast per thread), so the batch is not split across threads
        const compat::AutocastScope autocast(m_impl.device, m_bf16);
        if (m_iclTask) {
            const auto loss = vectorLoss(m_impl.net, vb, m_impl.device);
            lossValue = loss.item<double>();
            if (std::isfinite(lossValue)) loss.backward();
        } else {
            lossValue = tokenLossBackward(m_impl.net, b, m_impl.device, m_bf16 ? 1 : splitParts(b, m_impl.device));
        }
    }
    if (!std::isfinite(lossValue)) {
        m_opt->clearGradients();
        m_out.status = TrainOutcome::Status::Diverged;
        m_out.step = m_impl.step;
        m_out.message = QString("Training diverged: the loss became %1 at step %2 (learning rate %3). ")
                            .arg(std::isnan(lossValue) ? "NaN" : "infinite").arg(m_startStep + s + 1).arg(lr, 0, 'g', 3);
    } else {
        m_opt->step(lr, m_tc.gradClip);
        ++m_impl.step;
    }
    return lossValue;
}

// After `done` steps of this run: the progress, the periodic scoring, evaluation (or metrics row)
// and autosave, and a report. False when an evaluation reached the target and the run stops.
bool TrainingRun::afterStep(long long done, double loss, double lr, int examples)
{
    TrainProgress& p = m_progress;
    p.step = m_startStep + done;  // the schedule and the intervals count the steps of this run
    p.loss = loss;
    p.stepLosses.push_back(loss);
    p.lr = lr;
    p.examplesSeen += examples;  // prompts, for vector tasks
    p.elapsedSeconds = m_activeSeconds;
    p.tokensPerSecond = double(done) * m_tc.batchSize * m_cfg.task.contextLen / std::max(1e-9, m_activeSeconds);
    p.etaSeconds = m_activeSeconds / double(done) * double(m_tc.steps - done);
    stamp();
    bool last = m_startStep + done == m_endStep;
    if (m_probe && !last && done % m_every == 0) scoreMechanisms();
    const bool evalNow = !last && m_tc.evalEvery > 0 && done % m_tc.evalEvery == 0;
    if (evalNow) last = evaluateReachesTarget();
    else if (m_folder && done % m_tc.logEvery == 0 && !last) m_folder->appendMetrics(p, nullptr);
    if (m_tc.checkpointEvery > 0 && done % m_tc.checkpointEvery == 0 && !last) checkpoint();
    report(last);
    return !m_out.targetReached;
}

// A periodic evaluation; true when it reached train.target_accuracy, which ends the run.
bool TrainingRun::evaluateReachesTarget()
{
    const LengthCurve c = evaluateNow(m_tc.evalSamples);
    const double reached = c.stringAccuracyAt(m_cfg.task.maxLen, -1);
    if (!(m_tc.targetAccuracy > 0 && reached >= m_tc.targetAccuracy)) return false;
    m_out.targetReached = true;
    m_out.finalCurve = c;  // the run's result: no second evaluation at the same step
    log(QString("string accuracy %1% at length %2 reached the target %3% at step %4: stopping")
            .arg(100 * reached, 0, 'f', 1).arg(m_cfg.task.maxLen).arg(100 * m_tc.targetAccuracy, 0, 'f', 1).arg(m_progress.step));
    return true;
}

LengthCurve TrainingRun::evaluateNow(int samples)
{
    LengthCurve c = m_model.evaluate(evaluationLengths(m_cfg.task), samples, uint64_t(m_cfg.seed) + 777,
                                     [&](int, int) { return !m_control.cancel.load(); });
    stamp();
    if (m_folder) {
        m_folder->appendMetrics(m_progress, &c);
        m_folder->appendCurve(c);
    }
    if (m_cb.evaluated) m_cb.evaluated(c);
    return c;
}

// The held-out check of a finished run: task.eval_samples prompts at the longest training length
// from a seed of their own, so a learning rate chosen by it is never chosen on the test prompts
// (evaluateNow's, from seed + 777) or the test lengths. Not written to metrics.csv or curves.json.
void TrainingRun::validate()
{
    constexpr unsigned long long kValidationSeed = 0x5EEDF00DULL;
    m_out.validation = m_model.evaluate({m_cfg.task.maxLen}, m_cfg.task.evalSamples, uint64_t(m_cfg.seed) * 7919 + kValidationSeed,
                                        [&](int, int) { return !m_control.cancel.load(); });
    stamp();
}

// The resume file first, then the plain checkpoint: each is replaced atomically, so a kill
// between or during them leaves a resume file that agrees with itself.
void TrainingRun::checkpoint(bool quiet)
{
    m_good.take(m_impl);
    if (!m_folder) return;
    stamp();
    {
        std::lock_guard lock(m_impl.mutex);
        SafetensorsFile file = checkpointTensors(m_impl);
        QJsonObject meta = trainStateMeta(m_startStep, m_progress.examplesSeen, m_activeSeconds, m_progress.wallSeconds, m_rng);
        m_opt->save(file, m_impl.net, meta);
        writeResumeFile(resumeFilePath(m_folder->dir()), file, meta);
    }
    m_model.save(m_folder->checkpointPath());
    m_out.checkpoint = m_folder->checkpointPath();
    if (!quiet) log(QString("checkpoint saved at step %1: %2").arg(m_impl.step).arg(m_out.checkpoint));
}

void TrainingRun::keepSnapshot(const SafetensorsFile& file, long long step)
{
    const QString path = m_folder->snapshotPath(step);
    if (!QDir().mkpath(QFileInfo(path).absolutePath())) throw Error(QString("%1: cannot create the folder").arg(QFileInfo(path).absolutePath()));
    writeSafetensors(path, file);
}

// One scoring of the heads (see the members' comment): mechanisms.csv, the snapshots it keeps,
// and the log line when a lookup forms.
void TrainingRun::scoreMechanisms()
{
    const long long run = m_impl.step - m_startStep, k = run / m_every;
    const bool logSpaced = run == 0 || (run % m_every == 0 && (k & (k - 1)) == 0 && k <= (1LL << (kLogSnapshots - 2)));
    MechanismScores scores;
    std::optional<SafetensorsFile> now;
    {
        std::lock_guard lock(m_impl.mutex);
        scores = m_probe->score(m_impl);
        if (m_folder && (logSpaced || !m_formed)) now = checkpointTensors(m_impl);
    }
    const double best = scores.bestLookup();
    const bool forms = !m_formed && m_lastBest >= 0 && m_lastBest < kLookupForms && best >= kLookupForms;
    if (m_folder) {
        m_folder->appendMechanisms(scores);
        if (logSpaced || forms) keepSnapshot(*now, m_impl.step);
        if (forms && m_before) keepSnapshot(m_before->first, m_before->second);
    }
    if (forms) {
        const auto strongest = std::max_element(scores.heads.begin(), scores.heads.end(),
                                                [](const HeadScore& a, const HeadScore& b) { return a.bestLookup() < b.bestLookup(); });
        log(QString("a lookup formed at step %1: %2 (%3) attends %4 to the token after the earlier occurrence%5")
                .arg(m_impl.step).arg(strongest->name(), strongest->label).arg(best, 0, 'f', 2)
                .arg(m_folder ? QString("; snapshots of steps %1 and %2 kept").arg(m_before ? m_before->second : m_impl.step).arg(m_impl.step)
                              : QString()));
        m_formed = true;
        m_before.reset();
    } else if (!m_formed && now) {
        m_before.emplace(std::move(*now), m_impl.step);
    }
    m_lastScored = m_impl.step;
    m_lastBest = best;
    if (m_cb.mechanisms) m_cb.mechanisms(scores);
}

// The run's end: the outcome's message, the final evaluation and scoring of a finished run, the
// last checkpoint and result.json.
void TrainingRun::finish()
{
    m_out.step = m_impl.step;
    if (m_out.status == TrainOutcome::Status::Diverged) {
        finishDiverged();
        return;
    }
    const TrainProgress& p = m_progress;
    if (m_out.status == TrainOutcome::Status::Finished && m_impl.step < m_startStep + m_tc.steps && !m_out.targetReached) {
        m_out.status = TrainOutcome::Status::Cancelled;  // stopped where resuming was asked to stop
        if (m_folder) m_folder->appendMetrics(p, nullptr);
        m_out.message = QString("Stopped at step %1 of %2, as asked; resume the run to go on.").arg(p.step).arg(p.totalSteps);
    } else if (m_out.status == TrainOutcome::Status::Finished) {
        if (!m_out.targetReached) m_out.finalCurve = evaluateNow(m_cfg.task.evalSamples);
        validate();
        if (m_probe && m_lastScored != m_impl.step) scoreMechanisms();
        m_out.message = m_out.targetReached
                            ? QString("Reached the target accuracy at step %1 of %2 in %3 s.").arg(p.step).arg(p.totalSteps).arg(p.wallSeconds, 0, 'f', 1)
                            : QString("Finished %1 steps in %2 s%3.").arg(m_tc.steps).arg(m_activeSeconds, 0, 'f', 1)
                                  .arg(m_state ? QString(" (resumed at step %1)").arg(m_resume->fromStep) : QString());
    } else {
        if (m_folder) m_folder->appendMetrics(p, nullptr);
        m_out.message = QString("Stopped at step %1 of %2.").arg(p.step).arg(p.totalSteps);
    }
    checkpoint();
    if (m_folder) {
        m_out.step = m_impl.step;
        m_folder->finish(m_out, m_activeSeconds);
    }
    report(true);
}

// A diverged run goes back to its last good weights; the checkpoint on disk stays as it was.
void TrainingRun::finishDiverged()
{
    {
        std::lock_guard lock(m_impl.mutex);
        m_good.restore(m_impl);
    }
    m_out.step = m_impl.step;
    m_out.message += QString("The model was put back to its last good state (step %1)").arg(m_impl.step);
    m_out.message += m_out.checkpoint.isEmpty() ? QString(". ")
                                                : QString("; the checkpoint %1 is kept unchanged. ").arg(m_out.checkpoint);
    m_out.message += "Try a lower learning rate or stronger gradient clipping.";
    if (m_folder) {
        m_folder->appendMetrics(m_progress, nullptr);
        m_folder->finish(m_out, m_activeSeconds);
    }
    report(true);
}

void TrainingRun::stamp()
{
    m_progress.wallSeconds = m_wallBefore + std::chrono::duration<double>(Clock::now() - m_runStart).count() - m_pausedSeconds;
}

// At most every progressIntervalMs unless forced; each report carries the losses since the last.
void TrainingRun::report(bool force)
{
    const auto now = Clock::now();
    if (!force && now - m_lastEmit < std::chrono::milliseconds(m_cb.progressIntervalMs)) return;
    m_lastEmit = now;
    if (m_cb.progress) m_cb.progress(m_progress);
    m_progress.stepLosses.clear();
}

// train() and resumeTraining(): a fresh run, or one resumed from `resume`.
TrainOutcome runTraining(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb,
                         const QString& continuesFrom, const ResumePlan* resume)
{
    TrainOutcome out;
    out.message = refusal(model);
    if (!out.message.isEmpty()) {
        out.status = TrainOutcome::Status::Failed;
        return out;
    }
    try {
        applyThreads();
        const KeepFreedBlocks reuse;  // each step's tensors reuse the last step's memory (blockcache.h)
        TrainingRun(model, runDir, control, cb, continuesFrom, resume, out).run();
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

}  // namespace

TrainOutcome train(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb, const QString& continuesFrom)
{
    return runTraining(model, runDir, control, cb, continuesFrom, nullptr);
}

TrainOutcome resumeTraining(ResumePlan& plan, TrainControl& control, const TrainCallbacks& cb)
{
    return runTraining(plan.model, plan.runDir, control, cb, {}, &plan);
}

}  // namespace parrot
