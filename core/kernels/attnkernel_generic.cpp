#define PARROT_ATTN_SUFFIX Generic
#define PARROT_ATTN_DOUBLE
#include "core/kernels/attnkernel.inc"
#include "core/kernels/cpulevel.h"

namespace parrot::attn {

bool haveAvx2() { return cpu::haveAvx2Fma(); }

}  // namespace parrot::attn
