// Compiled with -mavx2 -mfma (see core/CMakeLists.txt); only called when the CPU has both.
#define PARROT_DELTA_SUFFIX Avx2
#include "core/kernels/deltarulekernel.inc"
