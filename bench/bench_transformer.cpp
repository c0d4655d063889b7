// Benchmarks for the Transformer, each printed as a ratio against a reference measured
// in the same run (absolute times on shared machines are noise):
//  - attention capture: forward with per-head weights returned / plain forward
//    (capture must cost nothing otherwise: the plain path must not pay for it);
//  - training step: forward + backward + AdamW / forward alone;
//  - Hard-ALiBi / NoPE forward: the per-head window mask against the causal one;
//  - the fast paths (fused attention, fused AdamW; kernels/fastpaths.h) against their explicit
//    twins: the attention alone forward + backward, and a whole training step.
// Usage: bench_transformer [repeats]
#include "core/diagnostics.h"
#include "core/kernels/attention.h"
#include "core/kernels/fastpaths.h"
#include "core/modelimpl.h"
#include "core/models/transformer.h"
#include "core/train/adamw.h"
#include "core/train/losses.h"

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

    // The attention alone on the default shape: (B, T, 3C) in, forward + backward.
    TransformerOptions to;
    to.dModel = cfg.model.dModel;
    to.heads = cfg.model.heads;
    to.numMaskedHeads = cfg.model.numMaskedHeads;
    AttentionPattern pattern;
    pattern.heads = to.heads;
    pattern.scale = 1.0 / std::sqrt(double(to.dModel / to.heads));
    pattern.window.assign(size_t(to.heads), std::numeric_limits<int64_t>::max());
    for (int64_t h = 0; h < to.numMaskedHeads; ++h) pattern.window[size_t(h)] = h;
    const int64_t B = cfg.train.batchSize, T = cfg.task.contextLen, C = to.dModel, H = to.heads, D = C / H;
    auto qkv = torch::randn({B, T, 3 * C}).set_requires_grad(true);
    const auto bias = attentionBias(to, T, torch::kCPU);
    auto fusedAttention = [&] { attentionFused(qkv, pattern).sum().backward(); };
    auto explicitAttention = [&] {
        auto p = qkv.view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});
        auto att = torch::softmax(torch::matmul(p[0], p[1].transpose(-2, -1)) / std::sqrt(double(D)) + bias, -1);
        torch::matmul(att, p[2]).transpose(1, 2).reshape({B, T, C}).sum().backward();
    };
    const auto [attentionRatio, explicitSeconds] = ratio(fusedAttention, explicitAttention, repeats);

    // A whole training step as the trainer takes it (masked loss, clipping, AdamW): fast paths / twins.
    torch::manual_seed(0);
    SequenceModel fastNet = buildModel(cfg), slowNet = buildModel(cfg);
    std::vector<torch::Tensor> decay, noDecay;
    for (auto& p : fastNet->parameters()) (p.dim() >= 2 ? decay : noDecay).push_back(p);
    FusedAdamW fusedOpt({{decay, 0.1}, {noDecay, 0.0}}, 0.9, 0.98);
    torch::optim::AdamW slowOpt(slowNet->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.1));
    auto lossOf = [&](SequenceModel& n) {
        return torch::nn::functional::cross_entropy(n->forward(idx).view({-1, vocab}), idx.view({-1}));
    };
    auto fastStep = [&] {
        setFastPaths(true);
        lossOf(fastNet).backward();
        fusedOpt.step(1e-3, 1.0);
    };
    auto slowStep = [&] {
        setFastPaths(false);
        auto loss = lossOf(slowNet);
        slowOpt.zero_grad();
        loss.backward();
        torch::nn::utils::clip_grad_norm_(slowNet->parameters(), 1.0);
        slowOpt.step();
    };
    const auto [fastRatio, slowSeconds] = ratio(fastStep, slowStep, repeats);
    setFastPaths(true);

    const auto [captureRatio, fwd] = ratio(capture, plain, repeats);
    const double stepRatio = ratio(step, plain, repeats).first;
    const double alibiRatio = ratio(plain, plainNope, repeats).first;
    std::printf("threads %d, batch %d x %d tokens, %d repeats (median, alternating)\n", at::get_num_threads(),
                cfg.train.batchSize, cfg.task.contextLen, repeats);
    std::printf("forward with attention capture / plain forward : %.3f\n", captureRatio);
    std::printf("training step / forward                        : %.3f\n", stepRatio);
    std::printf("Hard-ALiBi forward / NoPE forward              : %.3f\n", alibiRatio);
    std::printf("fused / explicit attention, forward + backward : %.3f   (explicit %.2f ms)\n", attentionRatio, explicitSeconds * 1e3);
    std::printf("training step, fast paths / explicit twins     : %.3f   (twins %.2f ms)\n", fastRatio, slowSeconds * 1e3);
    std::printf("(reference: plain forward %.2f ms)\n", fwd * 1e3);
    return 0;
}
