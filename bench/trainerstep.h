// The time of a training step through the real trainer (train/trainer.h: data, loss, backward,
// AdamW, clipping; no evaluations, no files), for the benchmarks that time whole steps.
#pragma once

#include "benchutil.h"

#include "base/error.h"
#include "core/device.h"
#include "core/model.h"
#include "core/train/trainer.h"

namespace parrot::bench {

struct StepTime {
    double seconds = 0;  // per training step, the median over the timed steps
    double firstLoss = -1;  // the first step's: the same weights and batch on both devices, so equal to float32's precision
    QString problem;     // why it did not run
};

// `steps` training steps of `config` on `device` through the trainer; the time of each step
// after the first `warmup` (the trainer reports every step: elapsedSeconds counts training
// steps only, and a step ends with the loss read back, so the GPU's work is inside it).
inline StepTime trainerStep(ExperimentConfig config, const QString& device, int warmup, int steps)
{
    StepTime out;
    try {
        setDeviceChoice(device);
        config.train.steps = warmup + steps;
        config.train.evalEvery = 0;
        config.train.warmupSteps = 0;
        Model model = Model::create(config);
        TrainControl control;
        TrainCallbacks cb;
        cb.progressIntervalMs = 0;
        std::vector<double> perStep;
        double last = 0;
        cb.progress = [&](const TrainProgress& p) {
            if (p.step > warmup) perStep.push_back(p.elapsedSeconds - last);
            last = p.elapsedSeconds;
            if (out.firstLoss < 0 && !p.stepLosses.empty()) out.firstLoss = p.stepLosses.front();
        };
        const TrainOutcome o = train(model, {}, control, cb);
        if (o.status != TrainOutcome::Status::Finished) out.problem = o.message;
        else if (perStep.empty()) out.problem = "no step was reported";
        else out.seconds = median(perStep);
    } catch (const Error& e) {
        out.problem = e.message();
    }
    return out;
}

}  // namespace parrot::bench
