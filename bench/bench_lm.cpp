// Pretrained-size language models: a randomly initialised model of Pythia-160m's shape
// (12 layers, d_model 768, 12 heads, rotary on a quarter of each head, parallel residual,
// vocabulary 50,304) or of mamba-130m's (24 layers, d_model 768, d_state 16, vocabulary 50,280),
// or with --size 410m of Pythia-410m's (24 layers, d_model 1,024, 16 heads) and mamba-370m's
// (48 layers, d_model 1,024), built as `generate` and the Pretrained tab build an imported one,
// timed on
//   forward   one pass over a prompt of --tokens tokens (logits at every position), inference mode
//   generate  greedy continuation of a --prompt-token prompt by --new tokens with the KV cache
//             (Transformer) or the recurrent step (Mamba), as Model::generate runs it
//   perplexity the loss of every token of a --tokens prompt after those before it
//             (Model::tokenLosses, what `lm-eval --task perplexity` runs per window)
//   probe     what the Explore tab computes to look inside on a --tokens prompt (every head's
//             attention map, Mamba's implicit attention, states and step sizes, the predictions)
//             against the plain forward over the same prompt, alternately, in this run
// With --dtype float16|bfloat16 the model is saved and loaded back held in 16 bits, as
// `--dtype` loads a pretrained model (core/models/dense.h); float32 by default.
// Prints one line "<which> <what> <median seconds>" per measurement (probe: also the forward's
// and their ratio); bench/lm_vs_python.sh runs forward and generate alternately with
// bench/python/lm_ref.py, which builds the same shapes in Python PyTorch.
//
// Usage: bench_lm pythia|mamba forward|generate|perplexity|probe [--repeats N] [--tokens T]
//        [--prompt-tokens P] [--new N] [--threads N] [--size 160m|410m] [--dtype float32|float16|bfloat16]
#include "base/tasks/taskcatalog.h"
#include "base/weightdtype.h"
#include "core/blockcache.h"
#include "core/diagnostics.h"
#include "core/model.h"
#include "core/modelimpl.h"

#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace parrot;

namespace {

ExperimentConfig shape(const std::string& which, bool large)
{
    ExperimentConfig c;
    c.task.kind = kTextTask;
    ModelConfig& m = c.model;
    m.dModel = large ? 1024 : 768;
    if (which == "pythia") {
        c.task.vocabSize = 50304;
        m.kind = "transformer";
        m.positions = "rope";
        m.layers = large ? 24 : 12;
        m.heads = large ? 16 : 12;
        m.numMaskedHeads = 0;
        m.mlpRatio = 4;
        m.rotaryFraction = 0.25;
        m.parallelResidual = true;
        m.tieEmbeddings = false;
        m.maxPositions = 2048;
    } else {
        c.task.vocabSize = 50280;
        m.kind = "mamba";
        m.layers = large ? 48 : 24;
        m.dState = 16;
        m.dConv = 4;
        m.expand = 2;
        m.mambaMlpRatio = 0;
        m.tieEmbeddings = true;
    }
    return c;
}

double seconds(const std::function<void()>& f)
{
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv)
{
    restartWithLibrarySettings(argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_lm pythia|mamba forward|generate|perplexity|probe [--repeats N] [--tokens T] [--prompt-tokens P] "
                             "[--new N] [--threads N] [--size 160m|410m] [--dtype float32|float16|bfloat16]\n");
        return 2;
    }
    const std::string which = argv[1], what = argv[2];
    int repeats = 3, tokens = 1000, promptTokens = 100, newTokens = 64, threads = 0;
    bool large = false;
    WeightDtype dtype = WeightDtype::Float32;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (k == "--size") large = std::string(argv[i + 1]) == "410m";
        else if (k == "--dtype") dtype = weightDtypeFromName(QString::fromStdString(argv[i + 1]));
        else if (k == "--repeats") repeats = v;
        else if (k == "--tokens") tokens = v;
        else if (k == "--prompt-tokens") promptTokens = v;
        else if (k == "--new") newTokens = v;
        else if (k == "--threads") threads = v;
        else {
            std::fprintf(stderr, "bench_lm: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if ((which != "pythia" && which != "mamba") || (what != "forward" && what != "generate" && what != "perplexity" && what != "probe")) {
        std::fprintf(stderr, "bench_lm: expected pythia|mamba forward|generate|perplexity|probe\n");
        return 2;
    }
    configureThreads(threads);
    const KeepFreedBlocks reuse;
    Model model = Model::create(shape(which, large));
    if (dtype != WeightDtype::Float32) {  // through a file, as a pretrained model is loaded
        QTemporaryDir dir;
        const QString path = dir.filePath("model.safetensors");
        model.save(path);
        model = Model::load(path, {}, dtype);
    }
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<int> id(0, 50000);
    std::vector<double> times;
    if (what == "forward") {
        Model::Impl& m = ModelAccess::impl(model);
        std::vector<int64_t> ids(static_cast<size_t>(tokens));
        for (auto& t : ids) t = id(rng);
        const torch::Tensor idx = torch::tensor(ids, torch::kLong).view({1, tokens});
        c10::InferenceMode inference;
        m.net->eval();
        for (int r = 0; r <= repeats; ++r) {  // the first is a warm-up
            const double s = seconds([&] { m.net->forward(idx); });
            if (r > 0) times.push_back(s);
        }
    } else if (what == "perplexity") {
        std::vector<int> text(static_cast<size_t>(tokens));
        for (auto& t : text) t = id(rng);
        for (int r = 0; r <= repeats; ++r) {
            const double s = seconds([&] { model.tokenLosses(text); });
            if (r > 0) times.push_back(s);
        }
    } else if (what == "probe") {
        std::vector<int> prompt(static_cast<size_t>(tokens));
        for (auto& t : prompt) t = id(rng);
        std::vector<double> plain;
        for (int r = 0; r <= repeats; ++r) {  // A B A B: the forward, then the look inside
            const double f = seconds([&] { model.logits(prompt, 1, tokens); });
            const double s = seconds([&] { model.probe(prompt); });
            if (r > 0) plain.push_back(f), times.push_back(s);
        }
        std::sort(plain.begin(), plain.end());
        std::sort(times.begin(), times.end());
        const double f = plain[plain.size() / 2], p = times[times.size() / 2];
        std::printf("%s forward %.4f\n%s probe %.4f\n%s probe/forward %.2f\n", which.c_str(), f, which.c_str(), p, which.c_str(), p / f);
        return 0;
    } else {
        std::vector<int> prompt(static_cast<size_t>(promptTokens));
        for (auto& t : prompt) t = id(rng);
        for (int r = 0; r <= repeats; ++r) {
            const double s = seconds([&] { model.generate(prompt, newTokens); });
            if (r > 0) times.push_back(s);
        }
    }
    std::sort(times.begin(), times.end());
    std::printf("%s %s %.4f\n", which.c_str(), what.c_str(), times[times.size() / 2]);
    return 0;
}
