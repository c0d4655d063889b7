// Helpers for the tests that check a family against reference data written outside the app
// (tests/data/make_*_refs.py): safetensors records as tensors, a model's parameters loaded by name.
#pragma once

#include "base/error.h"
#include "base/io/safetensors.h"

#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>

namespace parrot::test {

inline torch::Tensor tensorOf(const TensorRecord& r)
{
    const TensorRecord t = r.inOrder();
    const auto type = t.dtype == "I64" ? torch::kLong : torch::kFloat;
    return torch::from_blob(const_cast<char*>(t.data.constData()), t.shape, type).clone();
}

// Every tensor of a safetensors file, by name.
inline std::map<std::string, torch::Tensor> readTensors(const QString& path)
{
    std::map<std::string, torch::Tensor> out;
    const SafetensorsFile file = readSafetensors(path);
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it) out[it.key().toStdString()] = tensorOf(it.value());
    return out;
}

// The file's tensors into the module's parameters of the same names; throws Error unless
// every parameter is loaded and every tensor used.
inline void loadParameters(torch::nn::Module& model, const QString& path)
{
    const std::map<std::string, torch::Tensor> weights = readTensors(path);
    torch::NoGradGuard noGrad;
    size_t loaded = 0;
    for (auto& p : model.named_parameters()) {
        const auto it = weights.find(p.key());
        if (it == weights.end()) continue;
        p.value().copy_(it->second);
        ++loaded;
    }
    if (loaded != model.named_parameters().size() || loaded != weights.size())
        throw Error(QString("%1: %2 of %3 parameters loaded from %4 tensors").arg(path).arg(loaded)
                                .arg(model.named_parameters().size()).arg(weights.size()));
}

inline double maxDiff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// The largest difference between `a` and the reference `ref`, over the reference's largest entry
// where that is above one (a relative error for large values, an absolute one for small).
inline double scaledDiff(const torch::Tensor& a, const torch::Tensor& ref)
{
    return maxDiff(a, ref) / std::max(1.0, ref.abs().max().item<double>());
}

// The model's logits for refs["tokens"] against refs["logits"] to `tolerance`, then the gradient of
// sum(logits * refs["loss_weights"]) for every parameter against refs["grad.NAME"] to
// `gradTolerance`, each as scaledDiff. Empty when all agree and every reference gradient was
// checked; otherwise what differs (of the gradients, the one furthest off).
// A gradient has more room than the logits: a convolution's or projection's weight gradient sums
// products over every row and position in float32, in an order that changes with the thread split
// and the CPU's vector width; measured up to 1.3e-5 on an AVX2 CPU against 1e-6 on the logits. A
// wrong formula is off by 1e-3 or more.
inline QString logitsAndGradientsDiffer(torch::nn::Module& model, const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                                        const std::map<std::string, torch::Tensor>& refs, double tolerance = 1e-5,
                                        double gradTolerance = 5e-5)
{
    const torch::Tensor logits = forward(refs.at("tokens"));
    if (const double err = scaledDiff(logits, refs.at("logits")); err >= tolerance) return QString("logits differ by %1 (scaled)").arg(err);
    (logits * refs.at("loss_weights")).sum().backward();
    size_t checked = 0;
    QString worst;
    double worstErr = 0;
    for (const auto& p : model.named_parameters()) {
        const auto it = refs.find("grad." + p.key());
        if (it == refs.end()) return QString("no reference gradient for %1").arg(QString::fromStdString(p.key()));
        const double err = scaledDiff(p.value().grad(), it->second);
        if (err >= gradTolerance && err > worstErr) {
            worstErr = err;
            worst = QString("%1: %2 (scaled)").arg(QString::fromStdString(p.key())).arg(err);
        }
        ++checked;
    }
    if (!worst.isEmpty()) return worst;
    size_t gradients = 0;
    for (const auto& r : refs) gradients += r.first.rfind("grad.", 0) == 0;
    if (checked != gradients) return QString("%1 gradients checked of the reference's %2").arg(checked).arg(gradients);
    return {};
}

}  // namespace parrot::test
