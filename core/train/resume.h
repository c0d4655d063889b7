// The resume file, checkpoints/resume.safetensors (trainer.h, ResumePlan): a checkpoint that also
// holds what resuming needs besides the weights: the AdamW moments (train_state.exp_avg.NAME,
// train_state.exp_avg_sq.NAME, optimizer.cpp), torch's CPU generator state
// (train_state.torch_rng) and a train_state metadata entry, version 1: where the run started, the
// optimiser's steps, the examples seen, the active and wall seconds and the data generator's state.
// Torch-free header, core's own.
#pragma once

#include "base/io/safetensors.h"

#include <QJsonObject>

#include <random>
#include <string>

namespace parrot {

struct TrainState {
    SafetensorsFile file;  // the whole resume file (the moments are read from it)
    long long runStartStep = 0, optimizerSteps = 0, examplesSeen = 0;
    double activeSeconds = 0, wallSeconds = 0;
    std::string dataRng;
};

// The run's counters and the data generator as the train_state entry (the optimiser adds its steps).
QJsonObject trainStateMeta(long long runStartStep, long long examplesSeen, double activeSeconds, double wallSeconds,
                           const std::mt19937_64& dataRng);
// Adds torch's generator state and `meta` to `file` (a checkpoint with the optimiser's moments)
// and writes it to `path` atomically.
void writeResumeFile(const QString& path, SafetensorsFile& file, const QJsonObject& meta);
// Reads the resume file at `path`, whose checkpoint is at step `savedStep`. Throws parrot::Error
// when its train_state is missing, of another version or damaged.
TrainState readTrainState(const QString& path, long long savedStep);
// The data generator and torch's CPU generator as they were when `state` was saved.
void restoreGenerators(const TrainState& state, std::mt19937_64& dataRng);

}  // namespace parrot
