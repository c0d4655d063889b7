#include "sequencemodel.h"

namespace parrot {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : m_eps(eps)
{
    weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x)
{
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + m_eps) * weight;
}

torch::nn::Linear registerLmHead(torch::nn::Module& model, int64_t dModel, int64_t vocab, bool tied)
{
    if (tied) return nullptr;
    return model.register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(dModel, vocab).bias(false)));
}

torch::Tensor lmLogits(const torch::Tensor& x, torch::nn::Linear head, const torch::Tensor& embedding)
{
    return head ? head->forward(x) : torch::linear(x, embedding);
}

}  // namespace parrot
