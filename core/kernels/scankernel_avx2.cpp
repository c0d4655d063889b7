// Compiled with -mavx2 -mfma (see core/CMakeLists.txt); only called when the CPU has both.
// GCC 12 warns of its own AVX-512 headers (_mm512_undefined_ps inside max, min, roundscale and
// scalef) as "maybe uninitialized"; the warning points into the header, so it is off from here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PARROT_SCAN_SUFFIX Avx2
#include "core/kernels/scankernel.inc"
#undef PARROT_SCAN_SUFFIX
#undef PARROT_SCAN_VBYTES

// The same loops again on 16-float vectors for AVX-512, by target pragma so the build needs no
// file of its own flags; only called when the CPU has AVX-512 (haveAvx512).
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl")
#define PARROT_SCAN_SUFFIX Avx512
#define PARROT_SCAN_VBYTES 64
#include "core/kernels/scankernel.inc"
#pragma GCC pop_options
