#include "core/train/optimizer.h"

#include "base/error.h"
#include "core/kernels/fastpaths.h"
#include "core/modelimpl.h"
#include "core/torchcompat.h"

namespace parrot {

namespace {

// Weight decay on weight matrices and embeddings only; biases, norm gains and the SSM's own
// parameters (A_log, D, log_dt: mamba_ssm's _no_weight_decay) keep theirs.
std::vector<FusedAdamW::Group> parameterGroups(SequenceModel& net, const TrainConfig& c)
{
    std::vector<FusedAdamW::Group> groups{{{}, c.weightDecay}, {{}, 0.0}};
    auto ssmParameter = [](const std::string& name) {
        const std::string leaf = name.substr(name.rfind('.') + 1);
        return leaf == "A_log" || leaf == "D" || leaf == "log_dt";
    };
    for (auto& p : net->named_parameters())
        groups[p.value().dim() >= 2 && !ssmParameter(p.key()) ? 0 : 1].params.push_back(p.value());
    return groups;
}

}  // namespace

Optimizer::Optimizer(SequenceModel& net, const TrainConfig& c) : m_params(net->parameters())
{
    auto groups = parameterGroups(net, c);
    bool contiguousFloat = true;
    for (const auto& p : m_params) contiguousFloat &= p.is_contiguous() && p.scalar_type() == torch::kFloat && p.device().is_cpu();
    if (fastPaths() && contiguousFloat) {
        m_fused.emplace(std::move(groups), c.beta1, c.beta2);
        return;
    }
    std::vector<torch::optim::OptimizerParamGroup> torchGroups;
    for (const auto& g : groups)
        torchGroups.emplace_back(g.params, std::make_unique<torch::optim::AdamWOptions>(
                                               torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).weight_decay(g.weightDecay)));
    m_reference.emplace(torchGroups, torch::optim::AdamWOptions(c.lr));
}

void Optimizer::clearGradients()
{
    if (m_reference) m_reference->zero_grad();
    else
        for (auto& p : m_params) p.mutable_grad().reset();
}

void Optimizer::step(double lr, double clip)
{
    if (m_fused) {
        m_fused->step(lr, clip);
        return;
    }
    for (auto& g : m_reference->param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
    if (clip > 0) torch::nn::utils::clip_grad_norm_(m_params, clip);
    m_reference->step();
}

void Optimizer::save(SafetensorsFile& file, SequenceModel& net, QJsonObject& meta) const
{
    for (const auto& p : net->named_parameters()) {
        const auto [m, v] = moments(p.value());
        if (!m.defined()) continue;  // no step has touched it yet
        const QString name = QString::fromStdString(p.key());
        file.tensors.insert("train_state.exp_avg." + name, floatRecord(m));
        file.tensors.insert("train_state.exp_avg_sq." + name, floatRecord(v));
    }
    meta.insert("optimizer_steps", m_fused ? m_fused->steps() : referenceSteps());
}

void Optimizer::restore(const SafetensorsFile& file, SequenceModel& net, long long steps)
{
    torch::NoGradGuard noGrad;
    for (const auto& p : net->named_parameters()) {
        const QString name = QString::fromStdString(p.key());
        const auto m = file.tensors.find("train_state.exp_avg." + name), v = file.tensors.find("train_state.exp_avg_sq." + name);
        if (m == file.tensors.end() || v == file.tensors.end()) continue;  // never stepped: no moments yet
        const auto load = [&](const TensorRecord& r) {
            if (r.dtype != "F32" || r.shape != p.value().sizes().vec())
                throw Error(QString("the resume file's optimiser moments for %1 are %2 %3, the parameter is F32 %4")
                                .arg(name, r.dtype, shapeText(r.shape), shapeText(p.value().sizes().vec())));
            return torch::from_blob(const_cast<char*>(r.data.constData()), r.shape, torch::kFloat).clone().to(p.value().device());
        };
        setMoments(p.value(), load(*m), load(*v), steps);
    }
    if (m_fused) m_fused->setSteps(steps);
}

std::pair<torch::Tensor, torch::Tensor> Optimizer::moments(const torch::Tensor& p) const
{
    if (m_fused) return m_fused->moments(p);
    const auto it = m_reference->state().find(compat::optimizerStateKey(p));
    if (it == m_reference->state().end()) return {};
    const auto& st = static_cast<const torch::optim::AdamWParamState&>(*it->second);
    return {st.exp_avg(), st.exp_avg_sq()};
}

long long Optimizer::referenceSteps() const
{
    for (const auto& [key, st] : m_reference->state()) return static_cast<const torch::optim::AdamWParamState&>(*st).step();
    return 0;
}

void Optimizer::setMoments(const torch::Tensor& p, const torch::Tensor& m, const torch::Tensor& v, long long steps)
{
    if (m_fused) {
        const auto [em, ev] = m_fused->moments(p);
        if (!em.defined()) return;
        em.copy_(m);
        ev.copy_(v);
        return;
    }
    auto st = std::make_unique<torch::optim::AdamWParamState>();
    st->step(steps);
    st->exp_avg(m);
    st->exp_avg_sq(v);
    st->max_exp_avg_sq(torch::zeros_like(v));
    m_reference->state()[compat::optimizerStateKey(p)] = std::move(st);
}

}  // namespace parrot
