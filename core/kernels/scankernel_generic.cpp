#define PARROT_SCAN_SUFFIX Generic
#define PARROT_SCAN_DOUBLE
#include "core/kernels/cpulevel.h"
#include "core/kernels/scankernel.inc"

namespace parrot::scan {

bool haveAvx2() { return cpu::haveAvx2Fma(); }

bool haveAvx512()
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu::allows(cpu::Level::Avx512) && haveAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    return false;
#endif
}

}  // namespace parrot::scan
