#include "core/tasks/iclbaselines.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parrot {

namespace {

const float* xAt(const IclPrompt& p, int i) { return &p.x[size_t(i) * p.d]; }

double dotD(const float* a, const double* w, int d)
{
    double s = 0;
    for (int j = 0; j < d; ++j) s += a[j] * w[j];
    return s;
}

}  // namespace

double leastSquaresPrediction(const IclPrompt& p, int i)
{
    if (i == 0) return 0;
    const int d = p.d;
    auto X = torch::from_blob(const_cast<float*>(p.x.data()), {i, d}, torch::kFloat).to(torch::kDouble);
    auto y = torch::from_blob(const_cast<float*>(p.y.data()), {i, 1}, torch::kFloat).to(torch::kDouble);
    auto w = torch::matmul(at::linalg_pinv(X, 1e-15, false), y).contiguous();  // minimum norm
    return dotD(xAt(p, i), w.data_ptr<double>(), d);
}

double averagingPrediction(const IclPrompt& p, int i)
{
    if (i == 0) return 0;
    std::vector<double> w(static_cast<size_t>(p.d), 0.0);
    for (int j = 0; j < i; ++j)
        for (int c = 0; c < p.d; ++c) w[size_t(c)] += double(p.y[size_t(j)]) * xAt(p, j)[c] / i;
    return dotD(xAt(p, i), w.data(), p.d);
}

double nearestNeighboursPrediction(const IclPrompt& p, int i, int k)
{
    if (i == 0) return 0;
    std::vector<std::pair<double, int>> dist;
    for (int j = 0; j < i; ++j) {
        double s = 0;
        for (int c = 0; c < p.d; ++c) s += std::pow(double(xAt(p, j)[c]) - xAt(p, i)[c], 2);
        dist.push_back({s, j});
    }
    const int n = std::min(k, i);
    std::partial_sort(dist.begin(), dist.begin() + n, dist.end());
    double y = 0;
    for (int m = 0; m < n; ++m) y += p.y[size_t(dist[size_t(m)].second)];
    return y / n;
}

double lassoPrediction(const IclPrompt& p, int i, double alpha)
{
    if (i == 0) return 0;
    const int d = p.d;
    std::vector<double> w(static_cast<size_t>(d), 0.0), r(static_cast<size_t>(i)), norm(static_cast<size_t>(d), 0.0);
    for (int j = 0; j < i; ++j) r[size_t(j)] = p.y[size_t(j)];
    for (int c = 0; c < d; ++c)
        for (int j = 0; j < i; ++j) norm[size_t(c)] += double(xAt(p, j)[c]) * xAt(p, j)[c] / i;
    for (int sweep = 0; sweep < 200; ++sweep) {
        double change = 0;
        for (int c = 0; c < d; ++c) {
            if (norm[size_t(c)] <= 0) continue;
            double rho = 0;  // (1/i) x_c . (r + x_c w_c)
            for (int j = 0; j < i; ++j) rho += double(xAt(p, j)[c]) * (r[size_t(j)] + xAt(p, j)[c] * w[size_t(c)]) / i;
            const double updated = (rho > alpha ? rho - alpha : rho < -alpha ? rho + alpha : 0.0) / norm[size_t(c)];
            const double delta = updated - w[size_t(c)];
            if (delta != 0)
                for (int j = 0; j < i; ++j) r[size_t(j)] -= delta * xAt(p, j)[c];
            w[size_t(c)] = updated;
            change = std::max(change, std::abs(delta));
        }
        if (change < 1e-8) break;
    }
    return dotD(xAt(p, i), w.data(), d);
}

std::vector<BaselineCurve> iclBaselines(const IclTask& task, const std::vector<IclPrompt>& prompts)
{
    const QString kind = task.config().kind;
    if (prompts.empty() || kind == "sparse_parity" || kind == "vector_mqar") return {};
    using Predictor = double (*)(const IclPrompt&, int);
    std::vector<std::pair<QString, Predictor>> estimators{
        {"least squares", &leastSquaresPrediction},
        {"averaging", &averagingPrediction},
        {"3-NN", [](const IclPrompt& p, int i) { return nearestNeighboursPrediction(p, i); }},
    };
    if (kind == "sparse_linear_regression") estimators.push_back({"Lasso", [](const IclPrompt& p, int i) { return lassoPrediction(p, i); }});
    estimators.push_back({"zero", [](const IclPrompt&, int) { return 0.0; }});
    const int pairs = prompts.front().pairs;
    std::vector<BaselineCurve> out;
    for (const auto& [name, predict] : estimators) {
        BaselineCurve c;
        c.name = name;
        for (int i = 0; i < pairs; ++i) {
            double sum = 0;
            int n = 0;
            for (const IclPrompt& p : prompts) {
                if (!p.scored[size_t(i)]) continue;
                sum += std::pow(predict(p, i) - p.y[size_t(i)], 2) / p.d;
                ++n;
            }
            c.error.push_back(n > 0 ? sum / n : std::nan(""));
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace parrot
