// The torch side of parrot::Model, shared by the core's own sources (the trainer, the
// evaluators) and the benchmarks; the UI and the command line see only model.h.
#pragma once

#include "base/io/safetensors.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "core/models/factory.h"
#include "core/models/sequencemodel.h"

#include <mutex>

namespace parrot {

struct Model::Impl {
    ExperimentConfig config;
    SequenceModel net;
    torch::Device device{torch::kCPU};
    long long step = 0;
    // Training, evaluation and saving of one model are serialised; the UI never
    // starts two of them at once, and this keeps a stray call from racing.
    mutable std::mutex mutex;
};

// The one way past the facade: a model's network, device, step and lock, for what trains or
// times it (train/trainer.cpp, bench/). Holds no state of its own.
struct ModelAccess {
    static Model::Impl& impl(const Model& m) { return *m.d; }
};

// A model's checkpoint, as Model::save writes it: its weights as float32 and its config and step
// in the metadata (the caller holds the model's lock). The trainer adds its state to it.
SafetensorsFile checkpointTensors(const Model::Impl& d);
// A tensor as a float32 safetensors record.
TensorRecord floatRecord(const torch::Tensor& t);

// The device chosen with setDeviceChoice() (device.h), resolved: what a model built now runs on.
torch::Device preferredDevice();

}  // namespace parrot
