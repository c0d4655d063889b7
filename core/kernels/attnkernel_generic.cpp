#define PARROT_ATTN_SUFFIX Generic
#define PARROT_ATTN_DOUBLE
#include "core/kernels/attnkernel.inc"
#include "core/kernels/cpulevel.h"

namespace parrot::attn {

bool haveAvx2()
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu::allows(cpu::Level::Avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

}  // namespace parrot::attn
