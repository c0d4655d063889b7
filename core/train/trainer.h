// The training loop, shared by the GUI's worker thread and the command line.
// Plain types at its edges: no torch in this header.
#pragma once

#include "model.h"
#include "types.h"

#include <atomic>
#include <functional>

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
TrainOutcome train(Model& model, const QString& runDir, TrainControl& control, const TrainCallbacks& callbacks,
                   const QString& continuesFrom = {});

}  // namespace parrot
