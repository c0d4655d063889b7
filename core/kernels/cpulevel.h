#pragma once
// Which vector builds of the kernels this process may use. Each kernel picks the best build the
// CPU supports; PARROT_CPU_KERNELS caps that choice, so that the paths another processor would
// take run here too: "avx2" (no AVX-512 build), "baseline" (plain x86-64), or "best" (the
// default). Torch-free: the kernel bodies include it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace parrot::cpu {

enum class Level { Baseline = 0, Avx2 = 1, Avx512 = 2 };

inline Level allowedLevel()
{
    static const Level level = [] {
        const char* v = std::getenv("PARROT_CPU_KERNELS");
        if (!v || !*v || std::strcmp(v, "best") == 0) return Level::Avx512;
        if (std::strcmp(v, "avx2") == 0) return Level::Avx2;
        if (std::strcmp(v, "baseline") == 0) return Level::Baseline;
        std::fprintf(stderr, "PARROT_CPU_KERNELS=%s is not one of best, avx2, baseline: the best build is used\n", v);
        return Level::Avx512;
    }();
    return level;
}

inline bool allows(Level l) { return static_cast<int>(allowedLevel()) >= static_cast<int>(l); }

// Whether the kernels' AVX2 + FMA builds may run: the CPU has both and PARROT_CPU_KERNELS allows them.
inline bool haveAvx2Fma()
{
#if defined(__x86_64__) || defined(__i386__)
    return allows(Level::Avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

}  // namespace parrot::cpu
