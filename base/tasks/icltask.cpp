#include "base/tasks/icltask.h"

#include "base/configfields.h"
#include "base/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parrot {

namespace {

using Vec = std::vector<float>;

Vec gaussian(int n, std::mt19937_64& rng, double scale = 1.0)
{
    std::normal_distribution<float> g(0.0f, float(scale));
    Vec v(static_cast<size_t>(n));
    for (float& x : v) x = g(rng);
    return v;
}

float dot(const float* a, const float* b, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i) s += double(a[i]) * b[i];
    return float(s);
}

// Pairs x ~ N(0, I) on the first `active` coordinates (zero after), labelled by f; every pair scored.
template <class F> IclPrompt labelled(int pairs, int d, int active, std::mt19937_64& rng, F f)
{
    IclPrompt p;
    p.pairs = pairs;
    p.d = d;
    p.dOut = 1;
    p.x = gaussian(pairs * d, rng);
    p.y.resize(static_cast<size_t>(pairs));
    p.scored.assign(static_cast<size_t>(pairs), 1);
    for (int i = 0; i < pairs; ++i) {
        float* x = &p.x[size_t(i) * d];
        std::fill(x + active, x + d, 0.0f);
        p.y[size_t(i)] = f(x);
    }
    return p;
}

class LinearRegression : public IclTask {
public:
    using IclTask::IclTask;

protected:
    Vec weights(std::mt19937_64& rng) const
    {
        const int d = dims();
        Vec w = gaussian(d, rng);
        if (m_config.kind == "sparse_linear_regression") {
            std::vector<int> idx(static_cast<size_t>(d));
            std::iota(idx.begin(), idx.end(), 0);
            std::shuffle(idx.begin(), idx.end(), rng);
            for (size_t i = size_t(m_config.sparsity); i < idx.size(); ++i) w[size_t(idx[i])] = 0;
        }
        return w;
    }
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        const Vec w = weights(rng);
        const int d = dims();
        return labelled(pairs, d, activeDims(), rng, [&](const float* x) { return dot(w.data(), x, d); });
    }
};

class ReluRegression : public IclTask {
public:
    using IclTask::IclTask;
    static constexpr int kHidden = 100;

protected:
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        const int d = dims();
        const Vec V = gaussian(kHidden * d, rng), a = gaussian(kHidden, rng, std::sqrt(2.0 / kHidden));
        return labelled(pairs, d, activeDims(), rng, [&](const float* x) {
            double y = 0;
            for (int j = 0; j < kHidden; ++j) y += a[size_t(j)] * std::max(0.0f, dot(&V[size_t(j) * d], x, d));
            return float(y);
        });
    }
};

class DecisionTree : public IclTask {
public:
    using IclTask::IclTask;
    static constexpr int kDepth = 4;

protected:
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        const int d = dims(), inner = (1 << kDepth) - 1;
        std::uniform_int_distribution<int> coord(0, d - 1);
        std::vector<int> split(static_cast<size_t>(inner));
        for (int& c : split) c = coord(rng);
        const Vec leaves = gaussian(1 << kDepth, rng);
        return labelled(pairs, d, activeDims(), rng, [&](const float* x) {
            int node = 0;  // heap order: children 2n+1 (x <= 0) and 2n+2
            for (int level = 0; level < kDepth; ++level) node = 2 * node + (x[split[size_t(node)]] > 0 ? 2 : 1);
            return leaves[size_t(node - inner)];
        });
    }
};

class OutlierRegression : public IclTask {
public:
    OutlierRegression(const TaskConfig& c, bool orthogonal) : IclTask(c), m_orthogonal(orthogonal) {}

protected:
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        const int d = dims();
        const Vec w = gaussian(d, rng);
        Vec u = gaussian(d, rng);
        // u orthogonal to w: remove its component along w (Gram-Schmidt)
        const float ww = dot(w.data(), w.data(), d), uw = dot(u.data(), w.data(), d);
        for (int i = 0; i < d; ++i) u[size_t(i)] -= uw / std::max(ww, 1e-12f) * w[size_t(i)];
        IclPrompt p = labelled(pairs, d, activeDims(), rng, [&](const float* x) { return dot(w.data(), x, d); });
        std::bernoulli_distribution outlier(m_config.outlierProb);
        for (int i = 0; i < pairs; ++i) {
            if (!outlier(rng)) continue;
            p.scored[size_t(i)] = 0;
            float* x = &p.x[size_t(i) * d];
            if (m_orthogonal) {
                p.y[size_t(i)] = dot(u.data(), x, d);
            } else {
                std::fill(x, x + d, 1.0f);
                p.y[size_t(i)] = 1.0f;
            }
        }
        return p;
    }

private:
    bool m_orthogonal;
};

class SparseParity : public IclTask {
public:
    using IclTask::IclTask;

protected:
    // A fresh subset for every prompt (Bhattamishra et al. 2023): one subset shared by a whole
    // batch rewards fitting that batch's subset in the weights, and pulls the model from one
    // subset to the next at every step instead of towards finding it in the context.
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        // a curriculum's early stage draws the subset among the active coordinates (at least k)
        const int active = std::max(activeDims(), m_config.sparsity);
        std::vector<int> subset(static_cast<size_t>(active));
        std::iota(subset.begin(), subset.end(), 0);
        std::shuffle(subset.begin(), subset.end(), rng);
        subset.resize(size_t(m_config.sparsity));
        const int d = dims();
        IclPrompt p;
        p.pairs = pairs;
        p.d = d;
        p.dOut = 1;
        p.x.resize(size_t(pairs) * d);
        p.y.resize(size_t(pairs));
        p.scored.assign(size_t(pairs), 1);
        std::bernoulli_distribution coin(0.5);
        for (int i = 0; i < pairs; ++i) {
            float* x = &p.x[size_t(i) * d];
            for (int j = 0; j < d; ++j) x[j] = coin(rng) ? 1.0f : -1.0f;
            float y = 1;
            for (int j : subset) y *= x[j];
            std::fill(x + active, x + d, 0.0f);
            p.y[size_t(i)] = y;
        }
        return p;
    }
};

class VectorMqar : public IclTask {
public:
    using IclTask::IclTask;
    int outputDims() const override { return dims(); }

protected:
    // `pairs` key-value pairs, then `pairs` queries (each key once, in random order).
    IclPrompt prompt(int pairs, std::mt19937_64& rng) const override
    {
        const int d = dims(), n = 2 * pairs;
        auto sphere = [&] {
            Vec v = gaussian(d, rng);
            maskInactive(v.data());
            const float norm = std::sqrt(std::max(dot(v.data(), v.data(), d), 1e-12f));
            for (float& x : v) x *= std::sqrt(float(d)) / norm;
            return v;
        };
        IclPrompt p;
        p.pairs = n;
        p.d = d;
        p.dOut = d;
        p.x.resize(size_t(n) * d);
        p.y.resize(size_t(n) * d);
        p.scored.assign(size_t(n), 0);
        for (int i = 0; i < pairs; ++i) {
            const Vec k = sphere(), v = sphere();
            std::copy(k.begin(), k.end(), p.x.begin() + long(i) * d);
            std::copy(v.begin(), v.end(), p.y.begin() + long(i) * d);
        }
        std::vector<int> order(static_cast<size_t>(pairs));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        for (int q = 0; q < pairs; ++q) {
            const int src = order[size_t(q)], dst = pairs + q;
            std::copy_n(p.x.begin() + long(src) * d, d, p.x.begin() + long(dst) * d);
            std::copy_n(p.y.begin() + long(src) * d, d, p.y.begin() + long(dst) * d);
            p.scored[size_t(dst)] = 1;
        }
        return p;
    }
};

}  // namespace

std::unique_ptr<IclTask> IclTask::create(const TaskConfig& c)
{
    if (!isVectorTask(c.kind)) throw Error(QString("task.kind: \"%1\" is not an in-context-learning task").arg(c.kind));
    throwIfOutOfRange("task.dims", c.dims);
    const bool sparse = c.kind == "sparse_linear_regression" || c.kind == "sparse_parity";
    if (sparse && (c.sparsity < 1 || c.sparsity > c.dims))
        throw Error(QString("task.sparsity: expected 1..dims (%1), got %2").arg(c.dims).arg(c.sparsity));
    if (c.kind.contains("outlier")) throwIfOutOfRealRange("task.outlier_prob", c.outlierProb);
    if (c.minLen < 1 || c.maxLen < c.minLen)
        throw Error(QString("task.min_len/max_len: expected 1 <= min_len <= max_len, got %1 and %2").arg(c.minLen).arg(c.maxLen));
    const int tokens = 2 * c.maxLen * (c.kind == "vector_mqar" ? 2 : 1);
    if (c.contextLen < tokens)
        throw Error(QString("task.context_len: a prompt of max_len %1 takes %2 positions, got %3").arg(c.maxLen).arg(tokens).arg(c.contextLen));
    if (c.kind == "linear_regression" || c.kind == "sparse_linear_regression") return std::unique_ptr<IclTask>(new LinearRegression(c));
    if (c.kind == "relu_regression") return std::unique_ptr<IclTask>(new ReluRegression(c));
    if (c.kind == "decision_tree") return std::unique_ptr<IclTask>(new DecisionTree(c));
    if (c.kind == "orthogonal_outlier_regression") return std::unique_ptr<IclTask>(new OutlierRegression(c, true));
    if (c.kind == "many_outlier_regression") return std::unique_ptr<IclTask>(new OutlierRegression(c, false));
    if (c.kind == "sparse_parity") return std::unique_ptr<IclTask>(new SparseParity(c));
    if (c.kind == "vector_mqar") return std::unique_ptr<IclTask>(new VectorMqar(c));
    throw Error(QString("task.kind: \"%1\" has no in-context generator").arg(c.kind));  // a catalogue entry without one
}

void IclTask::maskInactive(float* x) const { std::fill(x + activeDims(), x + dims(), 0.0f); }

std::pair<int, int> IclTask::curriculumStage(const ExperimentConfig& c, long long step)
{
    const TrainConfig& t = c.train;
    const int d = c.task.dims, maxPairs = c.task.maxLen;
    if (t.curriculumDims <= 0 || t.curriculumSteps <= 0 || step >= t.curriculumSteps) return {d, maxPairs};
    const double f = double(step) / t.curriculumSteps;
    const int d0 = std::min(t.curriculumDims, d), p0 = std::min(maxPairs, 2 * d0 + 1);
    return {std::min(d, d0 + int(f * (d - d0 + 1))), std::min(maxPairs, p0 + int(f * (maxPairs - p0 + 1)))};
}

std::vector<IclPrompt> IclTask::prompts(int batch, int pairs, std::mt19937_64& rng) const
{
    if (pairs < 1) throw Error(QString("in-context examples: expected >= 1, got %1").arg(pairs));
    std::vector<IclPrompt> out;
    for (int b = 0; b < batch; ++b) out.push_back(prompt(pairs, rng));
    return out;
}

VectorBatch IclTask::batch(int batch, int pairs, std::mt19937_64& rng) const { return batchOf(prompts(batch, pairs, rng)); }

VectorBatch IclTask::batchOf(const std::vector<IclPrompt>& ps) const
{
    const int batch = int(ps.size());
    VectorBatch v;
    v.batch = batch;
    v.pairs = ps.front().pairs;
    v.d = dims();
    v.dOut = outputDims();
    const int T = 2 * v.pairs;
    v.inputs.assign(size_t(batch) * T * v.d, 0.0f);
    v.targets.resize(size_t(batch) * v.pairs * v.dOut);
    v.scored.resize(size_t(batch) * v.pairs);
    for (int b = 0; b < batch; ++b) {
        const IclPrompt& p = ps[size_t(b)];
        for (int i = 0; i < v.pairs; ++i) {
            float* xTok = &v.inputs[(size_t(b) * T + 2 * i) * v.d];
            float* yTok = &v.inputs[(size_t(b) * T + 2 * i + 1) * v.d];
            std::copy_n(&p.x[size_t(i) * v.d], v.d, xTok);
            std::copy_n(&p.y[size_t(i) * v.dOut], v.dOut, yTok);  // y padded with zeros to d
            std::copy_n(&p.y[size_t(i) * v.dOut], v.dOut, &v.targets[(size_t(b) * v.pairs + i) * v.dOut]);
            v.scored[size_t(b) * v.pairs + i] = p.scored[size_t(i)];
        }
    }
    return v;
}

}  // namespace parrot
