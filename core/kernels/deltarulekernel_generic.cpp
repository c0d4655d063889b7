#define PARROT_DELTA_SUFFIX Generic
#include "core/kernels/deltarulekernel.inc"
