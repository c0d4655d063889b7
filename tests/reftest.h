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

// The model's logits for refs["tokens"] against refs["logits"], then the gradient of
// sum(logits * refs["loss_weights"]) for every parameter against refs["grad.NAME"], each to `tolerance`
// (relative to the reference's largest entry where that is above one). Empty when all agree and
// every reference gradient was checked; otherwise what differs.
inline QString logitsAndGradientsDiffer(torch::nn::Module& model, const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                                        const std::map<std::string, torch::Tensor>& refs, double tolerance = 1e-5)
{
    const torch::Tensor logits = forward(refs.at("tokens"));
    if (maxDiff(logits, refs.at("logits")) >= tolerance) return QString("logits differ by %1").arg(maxDiff(logits, refs.at("logits")));
    (logits * refs.at("loss_weights")).sum().backward();
    size_t checked = 0;
    for (const auto& p : model.named_parameters()) {
        const auto it = refs.find("grad." + p.key());
        if (it == refs.end()) return QString("no reference gradient for %1").arg(QString::fromStdString(p.key()));
        const double err = maxDiff(p.value().grad(), it->second), scale = std::max(1.0, it->second.abs().max().item<double>());
        if (err >= tolerance * scale) return QString("%1: %2 (largest %3)").arg(QString::fromStdString(p.key())).arg(err).arg(scale);
        ++checked;
    }
    size_t gradients = 0;
    for (const auto& r : refs) gradients += r.first.rfind("grad.", 0) == 0;
    if (checked != gradients) return QString("%1 gradients checked of the reference's %2").arg(checked).arg(gradients);
    return {};
}

}  // namespace parrot::test
