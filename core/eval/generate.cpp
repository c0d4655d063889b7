#include "core/eval/generate.h"

#include "core/diagnostics.h"
#include "core/train/losses.h"

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

int argmaxLast(const torch::Tensor& logits) { return int(logits.select(1, logits.size(1) - 1).argmax(-1).item<int64_t>()); }

}  // namespace

std::vector<int> generateGreedy(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop,
                                const std::function<bool(int, int)>& keepGoing)
{
    if (prompt.empty() || maxNew <= 0) return {};
    GenerateSession session(m);
    auto state = m.net->startDecoding(1, torch::TensorOptions().device(m.device));
    if (!state) return generateReference(m, prompt, maxNew, stop);
    std::vector<int64_t> ids(prompt.begin(), prompt.end());
    torch::Tensor logits = m.net->decode(toTensor(ids, 1, int(ids.size()), m.device), *state);
    std::vector<int> out;
    while (int(out.size()) < maxNew) {
        const int next = argmaxLast(logits);
        out.push_back(next);
        if (next == stop || (keepGoing && !keepGoing(int(out.size()), maxNew))) break;
        if (int(out.size()) == maxNew) break;
        logits = m.net->decode(torch::full({1, 1}, int64_t(next), torch::TensorOptions().dtype(torch::kLong).device(m.device)), *state);
    }
    return out;
}

std::vector<int> generateReference(Model::Impl& m, const std::vector<int>& prompt, int maxNew, int stop)
{
    std::vector<int64_t> ids(prompt.begin(), prompt.end());
    std::vector<int> out;
    while (int(out.size()) < maxNew) {
        const int next = argmaxLast(m.net->forward(toTensor(ids, 1, int(ids.size()), m.device)));
        out.push_back(next);
        ids.push_back(next);
        if (next == stop) break;
    }
    return out;
}

}  // namespace parrot
