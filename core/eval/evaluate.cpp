#include "core/eval/evaluate.h"

#include "base/error.h"
#include "core/blockcache.h"
#include "core/diagnostics.h"
#include "core/tasks/iclbaselines.h"
#include "core/train/losses.h"

#include <algorithm>
#include <cmath>

namespace parrot {

namespace {

// An evaluation over the shared weights: this thread's torch threads, the model's lock, no
// gradients, eval mode, and back to training mode when it ends, also when it throws. `curve`
// starts with the samples and the weights' step; `mark` is where the blocks it maps begin.
struct EvalSession {
    EvalSession(Model::Impl& m, int samples) : threads(applyThreads()), lock(m.mutex), net(m.net)
    {
        net->eval();
        curve.samples = samples;
        curve.step = m.step;
    }
    ~EvalSession() { net->train(); }
    int threads;
    std::lock_guard<std::mutex> lock;
    torch::NoGradGuard noGrad;
    SequenceModel net;
    const uint64_t mark = blockCacheMark();
    LengthCurve curve;
};

// About 4k tokens a batch (two default training batches). Measured on the bundled Hard-ALiBi
// model, 256 strings at 7 lengths up to 40: 32k tokens took 3.0 s and peaked at 489 MB resident
// (evaluation set the training run's peak), 8k 2.4 s / 364 MB, 4k 2.1 s / 279 MB, 2k 2.5 s /
// 233 MB. The examples and scores do not depend on the batch size.
constexpr int kEvalTokens = 4096;

}  // namespace

uint64_t evaluationSeed(unsigned long long seed, int length) { return seed * 1000003ULL + unsigned(length); }

// Teacher-forced argmax at the masked (answer) positions of each row: rows all right, answers right.
void scoreBatch(SequenceModel& net, const TokenBatch& b, torch::Device device, long long& rowsRight,
                long long& answersRight, long long& answers)
{
    auto input = toTensor(b.input, b.batch, b.length, device);
    auto target = toTensor(b.target, b.batch, b.length, device);
    auto mask = torch::from_blob(const_cast<uint8_t*>(b.mask.data()), {b.batch, b.length}, torch::kUInt8).to(device, torch::kBool);
    auto right = net->forward(input).argmax(-1).eq(target);   // (B, T)
    auto rightAnswers = right.logical_and(mask);
    answersRight += rightAnswers.sum().item<int64_t>();
    answers += mask.sum().item<int64_t>();
    rowsRight += right.logical_or(mask.logical_not()).all(1).sum().item<int64_t>();
}

long long nearestValueHits(const torch::Tensor& predictions, const VectorBatch& v, int pairs)
{
    const auto pred = predictions.to(torch::kCPU).contiguous();
    const auto target = torch::from_blob(const_cast<float*>(v.targets.data()), {v.batch, v.pairs, v.dOut}, torch::kFloat);
    const auto values = target.narrow(1, 0, pairs);                                  // (B, pairs, d)
    const auto queries = pred.narrow(1, pairs, pairs), truth = target.narrow(1, pairs, pairs);
    const auto nearest = torch::cdist(queries, values).argmin(-1);                   // (B, pairs)
    const auto chosen = torch::gather(values, 1, nearest.unsqueeze(-1).expand({-1, -1, v.dOut}));
    return chosen.eq(truth).all(-1).sum().item<int64_t>();
}

LengthCurve evaluateTokens(Model::Impl& m, const std::vector<int>& lengths, int samples, unsigned long long seed,
                           const std::function<bool(int, int)>& keepGoing, const TaskConfig* other)
{
    const std::unique_ptr<TokenTask> task = TokenTask::create(evaluationTask(other ? *other : m.config.task));
    for (int len : lengths) {
        const QString problem = task->checkDifficulty(len);
        if (!problem.isEmpty()) throw Error(QString("evaluation: %1").arg(problem));
    }
    EvalSession session(m, samples);
    LengthCurve& curve = session.curve;
    const int total = int(lengths.size());
    for (int i = 0; i < total; ++i) {
        const int len = lengths[i];
        std::mt19937_64 rng(evaluationSeed(seed, len));
        const int perBatch = std::max(1, std::min(samples, kEvalTokens / task->maxTokens(len)));
        long long rows = 0, right = 0, answers = 0;
        for (int done = 0; done < samples; done += perBatch) {
            const TokenBatch batch = task->evalBatch(len, std::min(perBatch, samples - done), rng);
            scoreBatch(m.net, batch, m.device, rows, right, answers);
        }
        releaseCachedBlocksSince(session.mark);  // inside a training run: this length's sizes are not a step's (blockcache.h)
        curve.addAccuracy(len, rows, samples, right, answers);
        if (keepGoing && !keepGoing(i + 1, total)) break;
    }
    return curve;
}

namespace {

constexpr int kIclBatch = 64;

// Vector MQAR: at each number of pairs, is the prediction at a query nearest (among the
// prompt's values) to the right value?
void evaluatePairs(Model::Impl& m, IclTask& task, EvalSession& session, const std::vector<int>& lengths, int samples,
                   unsigned long long seed, const std::function<bool(int, int)>& keepGoing)
{
    LengthCurve& curve = session.curve;
    const int total = int(lengths.size());
    for (int li = 0; li < total; ++li) {
        const int pairs = lengths[size_t(li)];
        std::mt19937_64 rng(evaluationSeed(seed, pairs));
        long long right = 0, asked = 0;
        for (int done = 0; done < samples; done += kIclBatch) {
            const VectorBatch v = task.batch(std::min(kIclBatch, samples - done), pairs, rng);
            right += nearestValueHits(predictVectors(m.net, v, m.device), v, pairs);
            asked += int64_t(v.batch) * pairs;
        }
        const double p = double(right) / double(std::max(1LL, asked));
        curve.lengths.push_back(pairs);
        curve.stringAccuracy.push_back(p);
        curve.charAccuracy.push_back(p);
        curve.stringStdErr.push_back(binomialStdErr(p, double(asked)));
        curve.charStdErr.push_back(curve.stringStdErr.back());
        releaseCachedBlocksSince(session.mark);  // as in evaluate(): this length's sizes are not a step's
        if (keepGoing && !keepGoing(li + 1, total)) break;
    }
}

// The model's score after each number of examples: squared error / d, as Garg et al. (zero
// estimator: about 1), or sign accuracy; summed over the prompts.
struct PrefixScores {
    std::vector<double> sum, sumSq, count;
    bool error;

    PrefixScores(int pairs, bool isError) : sum(size_t(pairs), 0.0), sumSq(size_t(pairs), 0.0), count(size_t(pairs), 0.0), error(isError) {}
    // pred: (B, pairs, dOut), on the CPU and contiguous
    void add(const float* out, const VectorBatch& v, int pairs)
    {
        for (int b = 0; b < v.batch; ++b)
            for (int i = 0; i < pairs; ++i) {
                const size_t k = size_t(b) * pairs + i;
                if (!v.scored[k]) continue;
                double value = 0;
                if (error) {
                    for (int c = 0; c < v.dOut; ++c) value += std::pow(double(out[k * v.dOut + c]) - v.targets[k * v.dOut + c], 2) / v.d;
                } else {
                    value = (out[k] >= 0) == (v.targets[k] >= 0) ? 1.0 : 0.0;
                }
                sum[size_t(i)] += value;
                sumSq[size_t(i)] += value * value;
                count[size_t(i)] += 1;
            }
    }
    // Mean and standard error at each number of examples.
    void writeTo(LengthCurve& curve) const
    {
        for (size_t i = 0; i < sum.size(); ++i) {
            const double n = std::max(1.0, count[i]), mean = sum[i] / n;
            const double var = std::max(0.0, sumSq[i] / n - mean * mean);
            curve.lengths.push_back(int(i));
            if (error) {
                curve.error.push_back(mean);
                curve.errorStdErr.push_back(std::sqrt(var / n));
            } else {
                curve.stringAccuracy.push_back(mean);
                curve.charAccuracy.push_back(mean);
                curve.stringStdErr.push_back(std::sqrt(var / n));
                curve.charStdErr.push_back(std::sqrt(var / n));
            }
        }
    }
};

// Regression and parity: prompts of the longest length asked for; the model's error (or sign
// accuracy) after each number of examples, and the baselines' on the same prompts.
void evaluatePrefixes(Model::Impl& m, IclTask& task, LengthCurve& curve, const std::vector<int>& lengths, int samples,
                      unsigned long long seed, const std::function<bool(int, int)>& keepGoing)
{
    const int pairs = *std::max_element(lengths.begin(), lengths.end());
    std::mt19937_64 rng(evaluationSeed(seed, pairs));
    PrefixScores scores(pairs, curve.isError());
    std::vector<IclPrompt> all;
    const int batches = (samples + kIclBatch - 1) / kIclBatch;
    for (int bi = 0; bi < batches; ++bi) {
        const std::vector<IclPrompt> ps = task.prompts(std::min(kIclBatch, samples - bi * kIclBatch), pairs, rng);
        const VectorBatch v = task.batchOf(ps);
        const auto pred = predictVectors(m.net, v, m.device).to(torch::kCPU).contiguous();  // (B, pairs, dOut)
        scores.add(pred.data_ptr<float>(), v, pairs);
        all.insert(all.end(), ps.begin(), ps.end());
        if (keepGoing && !keepGoing(bi + 1, batches + 1)) break;
    }
    scores.writeTo(curve);
    for (const BaselineCurve& b : iclBaselines(task, all)) {
        curve.baselineNames.push_back(b.name);
        curve.baselineError.push_back(b.error);
    }
}

}  // namespace

LengthCurve evaluateInContext(Model::Impl& m, const std::vector<int>& lengths, int samples, unsigned long long seed,
                              const std::function<bool(int, int)>& keepGoing)
{
    const std::unique_ptr<IclTask> task = IclTask::create(m.config.task);
    EvalSession session(m, samples);
    session.curve.metric = task->metric();
    if (task->curveOverPairs()) evaluatePairs(m, *task, session, lengths, samples, seed, keepGoing);
    else evaluatePrefixes(m, *task, session.curve, lengths, samples, seed, keepGoing);
    return session.curve;
}

}  // namespace parrot
