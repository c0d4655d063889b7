// bench_gpu: what the GPU gives, as ratios measured in the same run on one machine:
// packaging/gpu-check.sh runs it where a GPU is lent.
//   1. The selective scan on CUDA tensors, forward + backward: the CUDA kernel against the
//      reference loop of torch ops on the same GPU, and against the fused CPU kernel.
//   2. A training step through the real trainer (train/trainer.h: data, loss, backward, AdamW,
//      clipping; no evaluations, no files) on the GPU against the same step on this machine's CPU,
//      for the default experiment's Transformer and for Mamba at about 1M and 50M parameters;
//      and on the GPU, bf16 autocast (train.precision) against float32.
// Usage: bench_gpu [repeats] [--threads N] [--quick] [--cpu-only]
//   --quick: the 50M Mamba left out (a smoke run); --cpu-only: the CPU's steps alone, to check
//   the bench on a machine without a GPU.
// Without a CUDA LibTorch or a GPU it says which is missing and exits with 2.
#include "benchutil.h"
#include "trainerstep.h"

#include "base/error.h"
#include "base/presets.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "core/model.h"
#include "core/train/trainer.h"

#include <torch/cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace parrot;
using namespace parrot::bench;

namespace {

void printStep(const char* what, const StepTime& gpu, const StepTime& cpu)
{
    if (!gpu.problem.isEmpty() || !cpu.problem.isEmpty()) {
        std::printf("%-34s did not run: %s\n", what, qPrintable(gpu.problem.isEmpty() ? cpu.problem : gpu.problem));
        return;
    }
    std::printf("%-34s GPU / CPU = %6.3f   (GPU %8.2f ms, CPU %8.1f ms; first loss %.5f / %.5f)\n", what,
                gpu.seconds / cpu.seconds, gpu.seconds * 1e3, cpu.seconds * 1e3, gpu.firstLoss, cpu.firstLoss);
}

int run(int argc, char** argv)
{
    restartWithLibrarySettings(argv);
    int repeats = 10, threads = 0;
    bool quick = false, cpuOnly = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--quick")) quick = true;
        else if (!std::strcmp(argv[i], "--cpu-only")) cpuOnly = true;
        else repeats = std::max(1, std::atoi(argv[i]));
    }
    configureThreads(threads);
    const QString problem = deviceProblem("cuda");
    if (!problem.isEmpty() && !cpuOnly) {
        std::fprintf(stderr, "bench_gpu: no GPU to measure: %s\n", qPrintable(problem));
        return 2;
    }
    setDeviceChoice(cpuOnly ? "cpu" : "cuda");
    std::printf("%s: %s; Torch %s; CPU threads %d; %s\n", cpuOnly ? "CPU only" : "GPU", qPrintable(deviceDescription()), TORCH_VERSION,
                at::get_num_threads(), qPrintable(diagnostics().blas));
    const torch::Device gpu(torch::kCUDA, 0);

    // 1. The scan at a Mamba block's shapes (d_model 128: d_inner 256), 256 steps.
    const int64_t B = 32, D = 256, T = 256, N = 16;
    if (!cpuOnly) {
        std::printf("\nselective scan, B %lld, D %lld, T %lld, N %lld, forward + backward (medians of %d, interleaved):\n",
                    (long long)B, (long long)D, (long long)T, (long long)N, repeats);
        if (!cudaScanBuilt()) {
            std::printf("  this build has no CUDA scan kernel (nvcc was not found when it was configured)\n");
        } else {
            torch::manual_seed(0);
            const ScanInputs onGpu = randomScan(B, D, T, N, true, gpu);
            const ScanInputs onCpu = randomScan(B, D, T, N, true);
            const auto both = [](const ScanInputs& in, bool reference) {
                (reference ? selectiveScanReference(in) : selectiveScan(in)).sum().backward();
                if (in.u.is_cuda()) torch::cuda::synchronize();
            };
            const auto m = interleaved({[&] { both(onGpu, false); }, [&] { both(onGpu, true); }, [&] { both(onCpu, false); }}, repeats);
            std::printf("  CUDA kernel / reference on the GPU = %7.4f   (kernel %.3f ms, reference %.1f ms)\n", m.medianRatio(0, 1),
                        m.medianSeconds(0) * 1e3, m.medianSeconds(1) * 1e3);
            std::printf("  CUDA kernel / fused CPU kernel     = %7.4f   (CPU %.1f ms on %d threads)\n", m.medianRatio(0, 2),
                        m.medianSeconds(2) * 1e3, at::get_num_threads());
        }
    }

    // 2. Training steps: the GPU against this machine's CPU.
    std::printf("\ntraining step through the trainer (median of the steps after the first few):\n");
    const ExperimentConfig transformer = loadPreset(defaultPresetName());
    ExperimentConfig mamba = transformer;
    mamba.model.kind = "mamba";
    struct Shape {
        QString name;
        ExperimentConfig config;
        int cpuSteps;
    };
    ExperimentConfig mamba2 = transformer, deltaNet = transformer;
    mamba2.model.kind = "mamba2";  // the fused scan (the CUDA kernel on the GPU)
    deltaNet.model.kind = "gated_deltanet";  // the chunked delta rule's torch ops on the GPU, the fused kernel on the CPU
    std::vector<Shape> shapes{{QString("Transformer (%1, default)").arg(defaultPresetName()), transformer, 3 * repeats},
                              {"Mamba, ~1M parameters", Model::matchParameters(mamba, 1000000), 3 * repeats},
                              {"Mamba-2, ~1M parameters", Model::matchParameters(mamba2, 1000000), 3 * repeats},
                              {"Gated DeltaNet, ~1M parameters", Model::matchParameters(deltaNet, 1000000), 3 * repeats}};
    if (!quick) {
        ExperimentConfig deep = mamba;
        deep.model.layers = 8;  // two layers reach only 21M below the widest d_model
        shapes.push_back({"Mamba, ~50M parameters", Model::matchParameters(deep, 50000000), std::max(3, repeats / 2)});
    }
    for (const Shape& s : shapes) {
        const QString label = QString("%1, d_model %2").arg(s.name).arg(s.config.model.dModel);
        std::printf("%s, %d layers, batch %d:\n", qPrintable(label), s.config.model.layers, s.config.train.batchSize);
        const StepTime c = trainerStep(s.config, "cpu", 2, s.cpuSteps);
        if (cpuOnly) {
            std::printf("  CPU %.1f ms per step, first loss %.5f%s\n", c.seconds * 1e3, c.firstLoss,
                        c.problem.isEmpty() ? "" : qPrintable(" (did not run: " + c.problem + ")"));
            continue;
        }
        const StepTime g = trainerStep(s.config, "cuda", 5, 5 * repeats);
        printStep("  float32", g, c);
        ExperimentConfig half = s.config;
        half.train.precision = "bf16";
        const StepTime h = trainerStep(half, "cuda", 5, 5 * repeats);
        if (h.problem.isEmpty() && g.problem.isEmpty())
            std::printf("  %-32s bf16 / fp32 on the GPU = %6.3f   (bf16 %.2f ms; first loss %.5f)\n", "bf16 autocast", h.seconds / g.seconds,
                        h.seconds * 1e3, h.firstLoss);
        else
            std::printf("  bf16 autocast did not run: %s\n", qPrintable(h.problem.isEmpty() ? g.problem : h.problem));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const Error& e) {
        std::fprintf(stderr, "bench_gpu: %s\n", qPrintable(e.message()));
        return 1;
    }
}
