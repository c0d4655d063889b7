// Benchmarks for the Transformer, each printed as a ratio against a reference measured
// in the same run (absolute times on shared machines are noise):
//  - attention capture: forward with per-head weights returned / plain forward
//    (the issue asks for "no cost otherwise": the plain path must not pay for it);
//  - training step: forward + backward + AdamW / forward alone;
//  - Hard-ALiBi / NoPE forward: the per-head window mask against the causal one.
// Usage: bench_transformer [repeats]
#include "modelimpl.h"

#include "diagnostics.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace parrot;

namespace {

template <class F> double seconds(F& f)
{
    const auto a = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// Median time of `subject` over median time of `reference`, measured alternately so that
// drift in the machine's speed hits both alike.
template <class F, class G> std::pair<double, double> ratio(F subject, G reference, int repeats)
{
    subject();
    reference();
    std::vector<double> s, r;
    for (int i = 0; i < repeats; ++i) {
        s.push_back(seconds(subject));
        r.push_back(seconds(reference));
    }
    std::sort(s.begin(), s.end());
    std::sort(r.begin(), r.end());
    return {s[s.size() / 2] / r[r.size() / 2], r[r.size() / 2]};
}

}  // namespace

int main(int argc, char** argv)
{
    const int repeats = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
    configureThreads(0);
    ExperimentConfig cfg;  // the default experiment: 2 layers, d 128, 8 heads, rows of 64, batch 32
    torch::manual_seed(0);
    const int64_t vocab = CopyVocab{cfg.task.vocabSize}.size();
    SequenceModel net = buildModel(cfg);
    auto idx = torch::randint(0, vocab, {cfg.train.batchSize, cfg.task.contextLen}, torch::kLong);

    torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-4));
    auto plain = [&] { torch::NoGradGuard g; net->forward(idx); };
    auto capture = [&] {
        torch::NoGradGuard g;
        Probes probes;
        net->forward(idx, &probes);
    };
    auto step = [&] {
        auto loss = torch::nn::functional::cross_entropy(net->forward(idx).view({-1, vocab}), idx.view({-1}));
        opt.zero_grad();
        loss.backward();
        opt.step();
    };
    ExperimentConfig nopeCfg = cfg;
    nopeCfg.model.positions = "nope";
    torch::manual_seed(0);
    SequenceModel nope = buildModel(nopeCfg);
    auto plainNope = [&] { torch::NoGradGuard g; nope->forward(idx); };

    const auto [captureRatio, fwd] = ratio(capture, plain, repeats);
    const double stepRatio = ratio(step, plain, repeats).first;
    const double alibiRatio = ratio(plain, plainNope, repeats).first;
    std::printf("threads %d, batch %d x %d tokens, %d repeats (median, alternating)\n", at::get_num_threads(),
                cfg.train.batchSize, cfg.task.contextLen, repeats);
    std::printf("forward with attention capture / plain forward : %.3f\n", captureRatio);
    std::printf("training step / forward                        : %.3f\n", stepRatio);
    std::printf("Hard-ALiBi forward / NoPE forward              : %.3f\n", alibiRatio);
    std::printf("(reference: plain forward %.2f ms)\n", fwd * 1e3);
    return 0;
}
