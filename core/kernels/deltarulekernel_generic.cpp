#define PARROT_DELTA_SUFFIX Generic
#include "core/kernels/deltarulekernel.inc"
#include "core/kernels/cpulevel.h"

namespace parrot::deltarule {

bool haveAvx2()
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu::allows(cpu::Level::Avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

}  // namespace parrot::deltarule
