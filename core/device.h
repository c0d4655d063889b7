// The device models run on: `--device auto|cpu|cuda[:N]` on the command line, Edit → Preferences
// in the window. One choice per process; a model is built on the device chosen when it is built
// (or loaded) and keeps it. Torch-free, for the UI and the command line.
#pragma once

#include "base/devicechoice.h"

#include <QString>

#include <vector>

namespace parrot {

// Empty when `spec` ("auto", "cpu", "cuda", "cuda:N") can be used here, else one line saying
// what is wrong: an unknown word, a LibTorch built without CUDA, no GPU, a GPU index past the last.
QString deviceProblem(const QString& spec);
// Makes `spec` the choice; throws parrot::Error with deviceProblem()'s message when it cannot be used.
void setDeviceChoice(const QString& spec);
// deviceChoice() (base/devicechoice.h): the choice as set, "auto" until then.
// The device the choice resolves to, in words, for the status bar, --diagnostics and Help → About:
// "CPU" or "CUDA:0, NVIDIA H200, 139.8 GB" ("auto" is the first GPU when this LibTorch has CUDA
// and a GPU is present, else the CPU).
QString deviceDescription();

struct DeviceOption {
    QString spec;   // what setDeviceChoice() takes
    QString label;  // for a menu: "Automatic (CPU)", "CPU", "cuda:0: NVIDIA H200, 139.8 GB"
};
// The choices this machine offers: auto, cpu and one per GPU Torch sees.
std::vector<DeviceOption> deviceOptions();

// The memory of the GPU the choice resolves to, in bytes (the CUDA driver's total); 0 for the CPU
// or where the driver does not say. The memory guard measures a model for a GPU against it.
double chosenGpuMemoryBytes();

// Whether this LibTorch was built with CUDA (whether or not a GPU is present).
bool torchHasCuda();
// The number of GPUs Torch sees (0 without a CUDA LibTorch).
int cudaDeviceCount();

}  // namespace parrot
