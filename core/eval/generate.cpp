#include "core/eval/generate.h"

#include "core/diagnostics.h"
#include "core/models/transformer.h"
#include "core/train/losses.h"

#include <limits>

namespace parrot {

namespace {

// Generating over the shared weights: this thread's torch threads, the model's lock, eval mode
// (back to training mode after), no autograd bookkeeping at all.
struct GenerateSession {
    explicit GenerateSession(Model::Impl& m) : threads(applyThreads()), lock(m.mutex), net(m.net) { net->eval(); }
    ~GenerateSession() { net->train(); }
    int threads;
    std::lock_guard<std::mutex> lock;
    c10::InferenceMode inference;
    SequenceModel net;
};

int argmaxLast(const torch::Tensor& logits, int suppress = -1)
{
    torch::Tensor last = logits.select(1, logits.size(1) - 1);
    if (suppress >= 0 && suppress < last.size(-1)) {
        last = last.clone();
        last.select(-1, suppress).fill_(-std::numeric_limits<float>::infinity());
    }
    return int(last.argmax(-1).item<int64_t>());
}

}  // namespace

std::vector<int> generateGreedy(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                const std::function<bool(int, int)>& keepGoing,
                                const std::function<bool(const std::vector<int>&)>& done, int suppressFirst)
{
    if (prompt.empty() || maxNew <= 0) return {};
    GenerateSession session(m);
    auto state = m.net->startDecoding(1, torch::TensorOptions().device(m.device));
    // A head replaced by its mean over the input: the mean of the whole sequence read so far, by
    // a whole forward per token (the cache would hold each step's own mean).
    const HeadAblation* ablation = HeadAblationScope::current();
    if (ablation && ablation->method == HeadAblation::Method::Mean) state.reset();
    if (!state) return generateReference(m, prompt, maxNew, stop, done, suppressFirst);
    state->lastOnly = true;
    std::vector<int64_t> ids(prompt.begin(), prompt.end());
    torch::Tensor logits = m.net->decode(toTensor(ids, 1, int(ids.size()), m.device), *state);
    std::vector<int> out;
    while (int(out.size()) < maxNew) {
        const int next = argmaxLast(logits, out.empty() ? suppressFirst : -1);
        out.push_back(next);
        if (next == stop || (done && done(out)) || (keepGoing && !keepGoing(int(out.size()), maxNew))) break;
        if (int(out.size()) == maxNew) break;
        logits = m.net->decode(torch::full({1, 1}, int64_t(next), torch::TensorOptions().dtype(torch::kLong).device(m.device)), *state);
    }
    return out;
}

std::vector<float> tokenLosses(Model::Impl& m, const std::vector<int>& ids)
{
    if (ids.size() < 2) return {};
    GenerateSession session(m);
    const int64_t T = int64_t(ids.size());
    std::vector<int64_t> all(ids.begin(), ids.end());
    const torch::Tensor idx = toTensor(all, 1, int(T), m.device);
    const torch::Tensor h = m.net->hidden(m.net->embed(idx), nullptr);  // (1, T, C)
    std::vector<float> out;
    out.reserve(size_t(T - 1));
    constexpr int64_t kBlock = 256;
    for (int64_t a = 0; a < T - 1; a += kBlock) {
        const int64_t b = std::min(T - 1, a + kBlock);
        const torch::Tensor logp = torch::log_softmax(m.net->head(h.slice(1, a, b)).to(torch::kFloat), -1);  // (1, b - a, V)
        const torch::Tensor next = idx.slice(1, a + 1, b + 1).unsqueeze(-1);
        const torch::Tensor nll = -logp.gather(-1, next).squeeze(-1).squeeze(0).to(torch::kCPU).contiguous();
        out.insert(out.end(), nll.data_ptr<float>(), nll.data_ptr<float>() + nll.numel());
    }
    return out;
}

std::vector<int> generateReference(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                   const std::function<bool(const std::vector<int>&)>& done, int suppressFirst)
{
    std::vector<int64_t> ids(prompt.begin(), prompt.end());
    std::vector<int> out;
    while (int(out.size()) < maxNew) {
        const int next = argmaxLast(m.net->forward(toTensor(ids, 1, int(ids.size()), m.device)), out.empty() ? suppressFirst : -1);
        out.push_back(next);
        ids.push_back(next);
        if (next == stop || (done && done(out))) break;
    }
    return out;
}

}  // namespace parrot
