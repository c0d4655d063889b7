#include "trainer.h"

#include "tasks/icltask.h"

#include "adamw.h"
#include "blockcache.h"
#include "diagnostics.h"
#include "error.h"
#include "kernels/fastpaths.h"
#include "io/runfolder.h"
#include "modelimpl.h"
#include "train/losses.h"
#include "train/splitbackward.h"

#include <QDir>

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

// Weight decay on weight matrices and embeddings only; biases, norm gains and the SSM's own
// parameters (A_log, D, log_dt: mamba_ssm's _no_weight_decay) keep theirs.
std::vector<FusedAdamW::Group> parameterGroups(SequenceModel& net, const TrainConfig& c)
{
    std::vector<FusedAdamW::Group> groups{{{}, c.weightDecay}, {{}, 0.0}};
    auto ssmParameter = [](const std::string& name) {
        const std::string leaf = name.substr(name.rfind('.') + 1);
        return leaf == "A_log" || leaf == "D" || leaf == "log_dt";
    };
    for (auto& p : net->named_parameters())
        groups[p.value().dim() >= 2 && !ssmParameter(p.key()) ? 0 : 1].params.push_back(p.value());
    return groups;
}

// AdamW with global-norm clipping: the fused one (train/adamw.h), or with the fast paths off its
// twin, torch::optim::AdamW after clip_grad_norm_.
class Optimizer {
public:
    Optimizer(SequenceModel& net, const TrainConfig& c) : m_params(net->parameters())
    {
        auto groups = parameterGroups(net, c);
        bool contiguousFloat = true;
        for (const auto& p : m_params) contiguousFloat &= p.is_contiguous() && p.scalar_type() == torch::kFloat && p.device().is_cpu();
        if (fastPaths() && contiguousFloat) {
            m_fused.emplace(std::move(groups), c.beta1, c.beta2);
            return;
        }
        std::vector<torch::optim::OptimizerParamGroup> torchGroups;
        for (const auto& g : groups)
            torchGroups.emplace_back(g.params, std::make_unique<torch::optim::AdamWOptions>(
                                                   torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).weight_decay(g.weightDecay)));
        m_reference.emplace(torchGroups, torch::optim::AdamWOptions(c.lr));
    }
    // Before the backward: no gradients (the fused optimiser drops them after each step).
    void clearGradients()
    {
        if (m_reference) m_reference->zero_grad();
        else
            for (auto& p : m_params) p.mutable_grad().reset();
    }
    // The gradients the backward left in .grad in, one step at lr out.
    void step(double lr, double clip)
    {
        if (m_fused) {
            m_fused->step(lr, clip);
            return;
        }
        for (auto& g : m_reference->param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
        if (clip > 0) torch::nn::utils::clip_grad_norm_(m_params, clip);
        m_reference->step();
    }

private:
    std::vector<torch::Tensor> m_params;
    std::optional<FusedAdamW> m_fused;
    std::optional<torch::optim::AdamW> m_reference;
};

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

}  // namespace

TrainOutcome train(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& cb, const QString& continuesFrom)
{
    TrainOutcome out;
    if (model.isNull()) {
        out.status = TrainOutcome::Status::Failed;
        out.message = "no model to train";
        return out;
    }
    const ExperimentConfig& cfg = model.config();
    const TrainConfig& tc = cfg.train;
    auto log = [&](const QString& s) { if (cb.log) cb.log(s); };
    try {
        applyThreads();
        const KeepFreedBlocks reuse;  // each step's tensors reuse the last step's memory (blockcache.h)
        Model::Impl& m = ModelAccess::impl(model);
        const long long startStep = m.step;  // a model trained before counts on from its step
        std::optional<RunFolder> folder;
        if (!runDir.isEmpty())
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
        p.step = startStep;
        p.totalSteps = startStep + tc.steps;
        double activeSeconds = 0, pausedSeconds = 0;
        const auto runStart = Clock::now();
        auto stamp = [&] { p.wallSeconds = std::chrono::duration<double>(Clock::now() - runStart).count() - pausedSeconds; };
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
        auto checkpoint = [&]() {
            good.take(m);
            if (!folder) return;
            model.save(folder->checkpointPath());
            out.checkpoint = folder->checkpointPath();
            log(QString("checkpoint saved at step %1: %2").arg(m.step).arg(out.checkpoint));
        };

        for (long long s = 0; s < tc.steps; ++s) {
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
                if (iclTask) {
                    const auto loss = vectorLoss(m.net, vb, m.device);
                    lossValue = loss.item<double>();
                    if (std::isfinite(lossValue)) loss.backward();
                } else {
                    lossValue = tokenLossBackward(m.net, b, m.device, splitParts(b, m.device));
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
            bool last = done == tc.steps;
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
        if (out.status == TrainOutcome::Status::Finished) {
            if (!out.targetReached) out.finalCurve = evaluateNow(cfg.task.evalSamples);
            out.message = out.targetReached
                              ? QString("Reached the target accuracy at step %1 of %2 in %3 s.").arg(p.step).arg(p.totalSteps).arg(p.wallSeconds, 0, 'f', 1)
                              : QString("Finished %1 steps in %2 s.").arg(tc.steps).arg(activeSeconds, 0, 'f', 1);
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

}  // namespace parrot
