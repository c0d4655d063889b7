// The training loop, shared by the GUI's worker thread and the command line.
// Plain types at its edges: no torch in this header.
#pragma once

#include "base/io/runfolder.h"
#include "base/types.h"
#include "core/model.h"

#include <atomic>
#include <functional>
#include <memory>

namespace parrot {

// Set from any thread; the loop reads them once per step, so pause, resume and
// cancel take effect within one step.
struct TrainControl {
    std::atomic<bool> cancel{false};
    std::atomic<bool> pause{false};
};

struct TrainCallbacks {
    // At most every progressIntervalMs, and at the end; each report carries the losses of the
    // steps since the last (TrainProgress::stepLosses).
    std::function<void(const TrainProgress&)> progress;
    std::function<void(const LengthCurve&)> evaluated;   // after each periodic evaluation
    std::function<void(const QString&)> log;             // checkpoints written, warnings
    // Each scoring of the heads on the probe batch (train.mechanism_every; analysis/mechanisms.h).
    std::function<void(const MechanismScores&)> mechanisms;
    int progressIntervalMs = 50;
};

// AdamW learning rate at `step` (0-based): linear warm-up, then cosine, linear or constant
// decay to min_lr_ratio * lr over the remaining steps.
double learningRate(const TrainConfig& c, long long step);

// Trains `model` for its config's train.steps steps. With a non-empty runDir it writes a
// run folder there (config.json, metrics.csv, checkpoints/last.safetensors, autosaved every
// train.checkpoint_every steps and when the run stops).
// A model that has trained before (step() > 0, e.g. one opened from a checkpoint) takes
// train.steps more steps: steps are counted on from its step (progress, metrics.csv, curves),
// with a fresh optimiser and the learning-rate schedule (warm-up, decay) run again over these
// steps, and batches drawn from another stream than its first run's. `continuesFrom` names the
// checkpoint it came from in config.json (continues_from). A loss that turns NaN or infinite
// stops the run, puts the weights back to the last autosave (or the start of the run), keeps
// the checkpoint on disk as it was, and says so in the outcome.
// Never throws: failures come back as Status::Failed with the message.
// With every autosave and when it stops, a run also writes checkpoints/resume.safetensors: a
// checkpoint (Model::load reads it) that also holds what resuming needs.
TrainOutcome train(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& callbacks,
                   const QString& continuesFrom = {});

// Resuming a run folder (`train --resume`, the window's Continue training): its resume file holds
// the weights, the AdamW moments and step count, where the run started (the learning-rate
// schedule's position), the data generator's and torch's random state and the run's counters, so
// on the CPU a run stopped or killed at step k and resumed gives the same losses, bit for bit, as
// the run uninterrupted. metrics.csv and curves.json go on from the resume point (what was written
// past it, before a kill, is written again).
struct ResumeOptions {
    long long steps = 0;          // the run's new total of steps (its train.steps); 0: its own
    bool extendSchedule = false;  // steps past the total stretch the learning-rate schedule over them
    QStringList sets;             // train.* changes (KEY=VALUE), e.g. a lower train.lr after a divergence
};
struct TrainState;  // core/train/resume.h
struct ResumePlan {
    QString runDir;
    Model model;                         // at the resume point, with the config it goes on with
    long long fromStep = 0, toStep = 0;  // steps counted as the model counts them
    QString description;                 // one line for the log
    std::shared_ptr<const TrainState> state;
};
// Reads a run folder for resuming. Throws parrot::Error naming what stops it: not a run folder, a
// run another process is training, no resume file (a run from before resuming existed, or killed
// before its first autosave: train.checkpoint_every), a damaged one, a finished run without more
// steps, steps past the run's total without extendSchedule, settings other than train.*, or a
// run that diverged resumed without a change to its training settings.
ResumePlan planResume(const QString& runDir, const ResumeOptions& options = {});
// Trains plan.model on in plan.runDir from plan.fromStep to plan.toStep (as train(), never throws).
TrainOutcome resumeTraining(ResumePlan& plan, TrainControl& control, const TrainCallbacks& callbacks);

}  // namespace parrot
