// bench_models: the fused selective scan against its reference loop, and a training step of
// every family at a matched size. Ratios against references measured in the same run.
// Usage: bench_models [repeats] [--fused-only]
#include "kernels/selectivescan.h"
#include "modelimpl.h"

#include "diagnostics.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace parrot;

namespace {

template <class F> double medianSeconds(F f, int repeats)
{
    f();
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        const auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

ScanInputs randomScan(int64_t B, int64_t D, int64_t T, int64_t N, bool grad)
{
    auto r = [&](std::vector<int64_t> shape) { return torch::randn(shape).set_requires_grad(grad); };
    ScanInputs in;
    in.u = r({B, D, T});
    in.delta = r({B, D, T});
    in.A = (-torch::rand({D, N}) - 0.5).set_requires_grad(grad);
    in.B = r({B, N, T});
    in.C = r({B, N, T});
    in.D = r({D});
    in.z = r({B, D, T});
    in.deltaBias = r({D});
    return in;
}

}  // namespace

int main(int argc, char** argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    configureThreads(0);
    torch::manual_seed(0);
    const int64_t B = 32, D = 256, T = 256, N = 16;
    if (argc > 2 && std::string(argv[2]) == "--fused-only") {  // for profilers: the fused scan alone
        const ScanInputs in = randomScan(B, D, T, N, true);
        for (int i = 0; i < repeats; ++i) selectiveScanFused(in).sum().backward();
        return 0;
    }
    std::printf("threads %d; selective scan at B %lld, D %lld, T %lld, N %lld (median of %d)\n", at::get_num_threads(),
                (long long)B, (long long)D, (long long)T, (long long)N, repeats);
    {
        torch::NoGradGuard g;
        const ScanInputs in = randomScan(B, D, T, N, false);
        const double ref = medianSeconds([&] { selectiveScanReference(in); }, repeats);
        const double fused = medianSeconds([&] { selectiveScanFused(in); }, repeats);
        std::printf("forward:            reference / fused = %7.1fx   (fused %.1f ms)\n", ref / fused, fused * 1e3);
    }
    {
        const ScanInputs in = randomScan(B, D, T, N, true);
        auto run = [&](bool fusedPath) {
            auto y = fusedPath ? selectiveScanFused(in) : selectiveScanReference(in);
            y.sum().backward();
        };
        const double ref = medianSeconds([&] { run(false); }, repeats);
        const double fused = medianSeconds([&] { run(true); }, repeats);
        std::printf("forward + backward: reference / fused = %7.1fx   (fused %.1f ms, goal >= 30x)\n", ref / fused, fused * 1e3);
    }

    // One AdamW training step of each family on the copy task's rows of 64 tokens.
    ExperimentConfig base;
    const int64_t vocab = CopyVocab{base.task.vocabSize}.size();
    auto idx = torch::randint(0, vocab, {base.train.batchSize, base.task.contextLen}, torch::kLong);
    double reference = 0;
    // Every family widened or narrowed to about a million parameters (Model::matchParameters).
    const long long target = 1000000;
    std::printf("\ntraining step at ~%lld parameters, batch %d x %d tokens (time relative to the Transformer):\n", target,
                base.train.batchSize, base.task.contextLen);
    for (const char* kind : {"transformer", "mamba", "lstm", "s4d", "s4_mamba", "hybrid", "mambaformer"}) {
        ExperimentConfig c = base;
        c.model.kind = kind;
        c = Model::matchParameters(c, target);
        const Model m = Model::create(c);
        auto& net = m.d->net;
        torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-4));
        const double s = medianSeconds([&] {
            auto loss = torch::nn::functional::cross_entropy(net->forward(idx).view({-1, vocab}), idx.view({-1}));
            opt.zero_grad();
            loss.backward();
            opt.step();
        }, repeats);
        if (reference == 0) reference = s;
        std::printf("  %-12s d_model %4d  %9lld params  %6.2fx  %8.0f tokens/s\n", kind, c.model.dModel, m.parameterCount(), s / reference,
                    double(base.train.batchSize * base.task.contextLen) / s);
    }
    return 0;
}
