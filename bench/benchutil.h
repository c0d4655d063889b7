// What the benchmarks share: medians, functions timed in turn round by round, random scan inputs.
#pragma once

#include "core/kernels/selectivescan.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

namespace parrot::bench {

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Each function run in turn `repeats` times after one warm-up round: on a shared machine the
// load changes over seconds, and interleaving gives every function the same share of it.
struct Interleaved {
    std::vector<std::vector<double>> seconds;  // [function][round]
    double medianSeconds(size_t i) const { return median(seconds[i]); }
    // Function i's time over function j's, round by round: each ratio compares runs a fraction
    // of a second apart, so a slow spell of the machine cancels out; the median of the rounds,
    // and their spread.
    double medianRatio(size_t i, size_t j) const { return median(ratios(i, j)); }
    std::pair<double, double> ratioRange(size_t i, size_t j) const
    {
        const auto r = ratios(i, j);
        return {*std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end())};
    }
    std::vector<double> ratios(size_t i, size_t j) const
    {
        std::vector<double> r;
        for (size_t k = 0; k < seconds[i].size(); ++k) r.push_back(seconds[i][k] / seconds[j][k]);
        return r;
    }
};

inline Interleaved interleaved(const std::vector<std::function<void()>>& fs, int repeats)
{
    for (const auto& f : fs) f();
    Interleaved out;
    out.seconds.resize(fs.size());
    for (int r = 0; r < repeats; ++r)
        for (size_t i = 0; i < fs.size(); ++i) {
            const auto a = std::chrono::steady_clock::now();
            fs[i]();
            out.seconds[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
        }
    return out;
}

template <class F> double medianSeconds(F&& f, int repeats)
{
    f();
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        const auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    return median(std::move(t));
}

// Random scan inputs of Mamba's shapes on `device` (leaves, so their gradients can be asked for).
inline ScanInputs randomScan(int64_t B, int64_t D, int64_t T, int64_t N, bool grad, torch::Device device = torch::kCPU)
{
    auto r = [&](std::vector<int64_t> shape) { return torch::randn(shape).to(device).set_requires_grad(grad); };
    ScanInputs in;
    in.u = r({B, D, T});
    in.delta = r({B, D, T});
    in.A = (-torch::rand({D, N}) - 0.5).to(device).set_requires_grad(grad);
    in.B = r({B, N, T});
    in.C = r({B, N, T});
    in.D = r({D});
    in.z = r({B, D, T});
    in.deltaBias = r({D});
    return in;
}

}  // namespace parrot::bench
