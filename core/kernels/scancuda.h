// Launchers of the CUDA selective scan (scancuda.cu), compiled only when CMake finds nvcc
// (PARROT_HAVE_CUDA_SCAN). Torch-free: device pointers in scan::Args, the legacy default stream.
#pragma once

#include "core/kernels/scankernel.h"

#include <string>

namespace parrot::scan {

// Each returns "" or the CUDA error's text. Args: as for the CPU kernels, device pointers;
// backward wants dB and dC zeroed and ckpt sized (B, D, ceil(T / kChunk), N).
std::string cudaForward(const Args<float>& a);
std::string cudaBackward(const Args<float>& a, float* ckpt);

}  // namespace parrot::scan
