// bench_models: the fused selective scan against its reference loop, and a training step of
// every family at a matched size. Ratios against references measured in the same run.
// Usage: bench_models [repeats] [--fused-only | --profile[-shapes] KIND | --step KIND | --mechanisms [STEPS]]
//        [--threads N]
//   --mechanisms [STEPS]: training runs of STEPS steps (default 200) of the default Transformer and
//   the default Mamba, with train.mechanism_every at its default against 0, A B A B: the ratio of
//   their wall and CPU times (what scoring the heads costs a run), and one scoring's CPU time
//   against a step's;
//   --fused-only: the fused scan's forward and backward alone, `repeats` times (for callgrind);
//   --step KIND: `repeats` training steps of one family (for perf), their median time;
//   --profile KIND: `repeats` training steps of one family under Torch's profiler, its ops by
//   self time (where a training step goes); --profile-shapes KIND: the same by op and input shapes.
#include "base/modelcatalog.h"
#include "core/blockcache.h"
#include "core/diagnostics.h"
#include "core/kernels/deltarule.h"
#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/modelimpl.h"
#include "core/models/gateddeltanet.h"
#include "core/models/mamba2.h"
#include "core/train/adamw.h"
#include "core/train/mechanismprobe.h"
#include "core/train/splitbackward.h"
#include "core/train/trainer.h"
#include "benchutil.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <QTemporaryDir>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

using namespace parrot;
using namespace parrot::bench;

namespace {

// One training step of a family at about `target` parameters on the copy task's rows, as the
// trainer takes it (train/trainer.cpp): the loss on the scored positions only (here the second
// half of each row, about what a packed copy row scores) and the fused AdamW with clipping; with
// the fast paths off (PARROT_REFERENCE_PATHS=1), full logits and torch's AdamW after clipping.
struct TrainStep {
    ExperimentConfig config;
    std::optional<Model> model;
    std::optional<FusedAdamW> fused;
    std::unique_ptr<torch::optim::AdamW> opt;
    TokenBatch batch;  // the copy task's packed rows, as the trainer draws them
    TrainStep(const QString& kind, long long target)
    {
        ExperimentConfig base;
        std::mt19937_64 rng(1);
        batch = TokenTask::create(base.task)->trainBatch(base.train.batchSize, rng);
        base.model.kind = kind;
        config = Model::matchParameters(base, target);
        model.emplace(Model::create(config));
        if (fastPaths())
            fused.emplace(std::vector<FusedAdamW::Group>{{ModelAccess::impl(*model).net->parameters(), 0.0}}, 0.9, 0.999);
        else
            opt = std::make_unique<torch::optim::AdamW>(ModelAccess::impl(*model).net->parameters(), torch::optim::AdamWOptions(1e-4));
    }
    // The trainer's step: the loss and its backward (split over the cores where the trainer
    // splits, train/splitbackward.h), then AdamW with clipping.
    void operator()()
    {
        auto& net = ModelAccess::impl(*model).net;
        if (fused) {
            tokenLossBackward(net, batch, torch::kCPU, splitParts(batch, torch::kCPU));
            fused->step(1e-4, 1.0);
            return;
        }
        opt->zero_grad();
        tokenLossBackward(net, batch, torch::kCPU, 1);
        torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
        opt->step();
    }
};

// Self time per op name (time inside an op less the time in the ops it called), summed over
// the threads Torch recorded.
void profileTrainStep(const char* kind, int repeats, bool shapes)
{
    TrainStep step(kind, 1000000);
    step();
    using namespace torch::autograd::profiler;
    std::map<std::string, std::pair<double, long long>> self;  // name -> (microseconds, calls)
    double wall = 0;
    {
        TLSLegacyProfilerGuard guard(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU, shapes),
                                     [&](const thread_event_lists& lists) {
                                         for (const auto& list : lists) {
                                             struct Open { const LegacyEvent* e; double children; };
                                             std::vector<Open> stack;
                                             for (const auto& e : list) {
                                                 if (e.kindStr() == "push") {
                                                     stack.push_back({&e, 0.0});
                                                 } else if (e.kindStr() == "pop" && !stack.empty()) {
                                                     const Open o = stack.back();
                                                     stack.pop_back();
                                                     const double us = o.e->cpuElapsedUs(e);
                                                     std::string key = o.e->name();
                                                     if (shapes)
                                                         for (const auto& shape : o.e->shapes()) {
                                                             key += " [";
                                                             for (size_t k = 0; k < shape.size(); ++k) {
                                                                 if (k) key += ',';
                                                                 key += std::to_string(shape[k]);
                                                             }
                                                             key += "]";
                                                         }
                                                     auto& entry = self[key];
                                                     entry.first += us - o.children;
                                                     entry.second += 1;
                                                     if (!stack.empty()) stack.back().children += us;
                                                 }
                                             }
                                         }
                                     });
        const auto a = std::chrono::steady_clock::now();
        for (int i = 0; i < repeats; ++i) step();
        wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() * 1e6;
    }
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [name, v] : self) {
        rows.push_back({v.first, name + " (" + std::to_string(v.second / repeats) + " calls)"});
        total += v.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::printf("%s, d_model %d: %.2f ms per step (profiled), ops' self time %.2f ms per step (all threads)\n", kind,
                step.config.model.dModel, wall / 1e3 / repeats, total / 1e3 / repeats);
    for (size_t i = 0; i < rows.size() && i < 40; ++i)
        std::printf("  %8.3f ms  %5.1f%%  %s\n", rows[i].first / 1e3 / repeats, 100 * rows[i].first / total, rows[i].second.c_str());
}

}  // namespace

// CPU time of the whole process, every thread.
double processCpuSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Training runs with the heads scored every train.mechanism_every steps (its default) against runs
// without, interleaved: each on the default copy task with a run folder (mechanisms.csv and the
// snapshots are written as a run writes them), no evaluations but a small final one, no autosaves,
// the same seed.
void benchMechanisms(int repeats, int steps)
{
    const ExperimentConfig defaults;
    std::vector<ExperimentConfig> configs{defaults};
    for (const ModelFamily& f : modelFamilies())  // the Mamba: the selective scan without attention
        if (f.selectiveScan && !f.attention) {
            configs.push_back(defaults);
            configs.back().model.kind = f.id;
            break;
        }
    std::printf("training runs of %d steps, train.mechanism_every %d against 0, run folders written, %s (medians of %d rounds, A B A B)\n",
                steps, defaults.train.mechanismEvery, fastPaths() ? "fast paths" : "reference paths", repeats);
    for (ExperimentConfig c : configs) {
        c.train.steps = steps;
        c.train.evalEvery = 0;
        c.train.checkpointEvery = 0;
        c.task.evalLengths = {c.task.maxLen};  // the final evaluation, small: the steps are what is compared
        c.task.evalSamples = 8;
        // the process's CPU time too: on a machine others share, it counts what the run did, not
        // the time it waited for a core
        Interleaved cpu;
        cpu.seconds.resize(2);
        const auto run = [&](bool scored) {
            ExperimentConfig e = c;
            if (!scored) e.train.mechanismEvery = 0;
            Model model = Model::create(e);
            QTemporaryDir dir;
            TrainControl control;
            const double before = processCpuSeconds();
            const TrainOutcome o = train(model, dir.filePath("run"), control, {});
            cpu.seconds[scored ? 0 : 1].push_back(processCpuSeconds() - before);
            if (o.status != TrainOutcome::Status::Finished) std::printf("  run failed: %s\n", qPrintable(o.message));
        };
        const auto m = interleaved({[&] { run(true); }, [&] { run(false); }}, repeats);
        for (auto& s : cpu.seconds) s.erase(s.begin());  // interleaved()'s warm-up round
        const auto [lo, hi] = m.ratioRange(0, 1);
        const auto [cpuLo, cpuHi] = cpu.ratioRange(0, 1);
        // one scoring against one step (of the run without scoring), in CPU time
        Model model = Model::create(c);
        const MechanismProbe probe(c);
        Model::Impl& impl = ModelAccess::impl(model);
        std::vector<double> scorings;
        for (int i = 0; i < std::max(10, repeats); ++i) {
            const double before = processCpuSeconds();
            probe.score(impl);
            scorings.push_back(processCpuSeconds() - before);
        }
        const double scoring = median(scorings), step = cpu.medianSeconds(1) / steps;
        std::printf("  %-12s scored / not: wall %.3fx (%.3f-%.3f), CPU %.3fx (%.3f-%.3f); one scoring %.1f ms of CPU "
                    "(%d examples of %d tokens), a step %.1f ms: %.1f%% at every %d steps\n",
                    qPrintable(c.model.kind), m.medianRatio(0, 1), lo, hi, cpu.medianRatio(0, 1), cpuLo, cpuHi, scoring * 1e3,
                    probe.examples(), probe.length(), step * 1e3, 100 * scoring / (step * defaults.train.mechanismEvery),
                    defaults.train.mechanismEvery);
    }
    std::printf("goal: <= 1.05x\n");
}

int main(int argc, char** argv)
{
    restartWithLibrarySettings(argv);  // as the app does: OpenMP's short spin
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    // --threads N last: fewer threads than cores (timing one thread on a machine others share).
    int threads = 0;
    if (argc > 3 && std::string(argv[argc - 2]) == "--threads") {
        threads = std::atoi(argv[argc - 1]);
        argc -= 2;
    }
    configureThreads(threads);
    const KeepFreedBlocks reuse;  // as a training run holds (core/blockcache.h)
    torch::manual_seed(0);
    const int64_t B = 32, D = 256, T = 256, N = 16;
    if (argc > 2 && std::string(argv[2]) == "--fused-only") {  // for profilers: the fused scan alone
        const ScanInputs in = randomScan(B, D, T, N, true);
        for (int i = 0; i < repeats; ++i) selectiveScanFused(in).sum().backward();
        return 0;
    }
    if (argc > 3 && (std::string(argv[2]) == "--profile" || std::string(argv[2]) == "--profile-shapes")) {
        profileTrainStep(argv[3], repeats, std::string(argv[2]) == "--profile-shapes");
        return 0;
    }
    if (argc > 2 && std::string(argv[2]) == "--mechanisms") {
        benchMechanisms(repeats, argc > 3 ? std::max(1, std::atoi(argv[3])) : 200);
        return 0;
    }
    if (argc > 3 && std::string(argv[2]) == "--step") {  // for profilers: training steps of one family
        TrainStep step(argv[3], 1000000);
        std::printf("%s: %.2f ms per step\n", argv[3], medianSeconds(step, repeats) * 1e3);
        return 0;
    }
    std::printf("%s\n", qPrintable(diagnostics().blas));
    std::printf("threads %d; selective scan at B %lld, D %lld, T %lld, N %lld (medians of %d, interleaved)\n",
                at::get_num_threads(), (long long)B, (long long)D, (long long)T, (long long)N, repeats);
    {
        torch::NoGradGuard g;
        const ScanInputs in = randomScan(B, D, T, N, false);
        const auto m = interleaved({[&] { selectiveScanReference(in); }, [&] { selectiveScanFused(in); }}, repeats);
        std::printf("forward:            reference / fused = %7.1fx   (fused %.1f ms, goal >= 10x)\n", m.medianRatio(0, 1),
                    m.medianSeconds(1) * 1e3);
    }
    {
        const ScanInputs in = randomScan(B, D, T, N, true);
        const auto m = interleaved({[&] { selectiveScanReference(in).sum().backward(); },
                                    [&] { selectiveScanFused(in).sum().backward(); }},
                                   repeats);
        std::printf("forward + backward: reference / fused = %7.1fx   (fused %.1f ms, goal >= 30x)\n", m.medianRatio(0, 1),
                    m.medianSeconds(1) * 1e3);
    }

    // The recurrent heads of Mamba-2 and Gated DeltaNet, chunked against their token-by-token
    // recurrence, forward and backward at length 256, at the shapes the default models have at a
    // million parameters (heads of 16 channels).
    {
        const int64_t Bn = 8, H = 8, P = 16, N = 16;
        const auto leaf = [](torch::Tensor t) { return t.requires_grad_(true); };
        const torch::Tensor x = leaf(torch::randn({Bn, T, H, P})), dt = leaf(torch::rand({Bn, T, H}) * 0.1 + 0.01);
        const torch::Tensor A = leaf(-torch::rand({H}) * 4 - 0.5), Bm = leaf(torch::randn({Bn, T, H, N})), Cm = leaf(torch::randn({Bn, T, H, N}));
        // training's path: the step size before its bias and softplus, B and C of one group
        const torch::Tensor dtRaw = leaf(torch::randn({Bn, T, H}) * 0.5 - 3), dtBias = leaf(torch::zeros({H})), D = leaf(torch::zeros({H}));
        const torch::Tensor xFlat = leaf(torch::randn({Bn, T, H * P})), B1 = leaf(torch::randn({Bn, T, N})), C1 = leaf(torch::randn({Bn, T, N}));
        const auto spread = [&](const torch::Tensor& t) { return t.unsqueeze(2).expand({Bn, T, H, N}); };
        const auto recurrence = [&] {
            const torch::Tensor dtS = torch::nn::functional::softplus(dtRaw + dtBias);
            return ssdRecurrent(xFlat.view({Bn, T, H, P}), dtS, A, spread(B1), spread(C1)).first;
        };
        const auto ssd = interleaved({[&] { recurrence().sum().backward(); },
                                      [&] { ssdScan(x, dt, A, Bm, Cm, 64).first.sum().backward(); },
                                      [&] { ssdScanFused(xFlat, dtRaw, dtBias, A, B1, C1, 1, D).sum().backward(); }},
                                     repeats);
        std::printf("Mamba-2 scan, B %lld, H %lld, P %lld, N %lld, T %lld, forward + backward: recurrence / fused = %6.1fx   "
                    "(fused %.1f ms, goal >= 10x); recurrence / chunked (the probes' and prefill's path) = %.1fx\n",
                    (long long)Bn, (long long)H, (long long)P, (long long)N, (long long)T, ssd.medianRatio(0, 2), ssd.medianSeconds(2) * 1e3,
                    ssd.medianRatio(0, 1));
        const int64_t K = 16, V = 32;
        const auto unit = [](torch::Tensor t) { return t / t.norm(2, -1, true); };
        const torch::Tensor q = leaf(unit(torch::randn({Bn, T, H, K})) * 0.25), k = leaf(unit(torch::randn({Bn, T, H, K})));
        const torch::Tensor v = leaf(torch::randn({Bn, T, H, V})), beta = leaf(torch::rand({Bn, T, H}));
        const torch::Tensor g = leaf(-torch::rand({Bn, T, H}) * 0.1);
        const auto delta = interleaved({[&] { deltaRuleRecurrent(q, k, v, beta, g).first.sum().backward(); },
                                        [&] { deltaRuleChunked(q, k, v, beta, g, 64).first.sum().backward(); },
                                        [&] { deltaRuleFused(q, k, v, beta, g).sum().backward(); }},
                                       repeats);
        std::printf("Gated delta rule, B %lld, H %lld, K %lld, V %lld, T %lld, forward + backward: recurrence / fused = %6.1fx   "
                    "(fused %.1f ms, goal >= 10x); recurrence / chunked (the probes' and prefill's path) = %.1fx\n",
                    (long long)Bn, (long long)H, (long long)K, (long long)V, (long long)T, delta.medianRatio(0, 2),
                    delta.medianSeconds(2) * 1e3, delta.medianRatio(0, 1));
    }

    // One training step of each family on the copy task's rows of 64 tokens, every family widened
    // or narrowed to about a million parameters (Model::matchParameters); all families in turn
    // in each round.
    const ExperimentConfig base;
    const long long target = 1000000;
    std::printf("\ntraining step at ~%lld parameters, batch %d x %d tokens, %s\n"
                "(time relative to the Transformer's in the same round: median and range over %d rounds):\n",
                target, base.train.batchSize, base.task.contextLen, fastPaths() ? "fast paths" : "reference paths", repeats);
    const QStringList kinds = familyIds();
    std::vector<std::unique_ptr<TrainStep>> steps;
    std::vector<std::function<void()>> fs;
    for (const QString& kind : kinds) {
        steps.push_back(std::make_unique<TrainStep>(kind, target));
        fs.push_back([s = steps.back().get()] { (*s)(); });
    }
    const auto m = interleaved(fs, repeats);
    for (qsizetype i = 0; i < kinds.size(); ++i) {
        const auto [lo, hi] = m.ratioRange(size_t(i), 0);
        std::printf("  %-12s d_model %4d  %9lld params  %6.2fx (%.2f-%.2f)  %8.0f tokens/s\n", qPrintable(kinds[i]),
                    steps[i]->config.model.dModel, steps[i]->model->parameterCount(), m.medianRatio(size_t(i), 0), lo, hi,
                    double(base.train.batchSize * base.task.contextLen) / m.medianSeconds(size_t(i)));
    }
    std::printf("goals: Mamba <= 1.1x, MambaFormer <= 1.3x, Mamba-2 and Gated DeltaNet <= 1.5x Mamba's, the LSTM and S4D no slower "
                "than before\n");
    return 0;
}
