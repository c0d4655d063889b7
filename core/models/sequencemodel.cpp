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

torch::Tensor SequenceModelImpl::forwardAt(const torch::Tensor& idx, const torch::Tensor& rows)
{
    const auto h = hidden(embed(idx), nullptr);
    return head(h.reshape({-1, h.size(-1)}).index_select(0, rows));
}

torch::Tensor SequenceModelImpl::forwardVectors(const torch::Tensor& x, Probes* probes)
{
    TORCH_CHECK(hasVectorIO(), "this model has no vector read-in (it was built for a token task)");
    return read_out(hidden(read_in(x), probes));
}

void SequenceModelImpl::addVectorIO(int64_t dIn, int64_t dOut, int64_t dModel)
{
    read_in = register_module("read_in", torch::nn::Linear(dIn, dModel));
    read_out = register_module("read_out", torch::nn::Linear(dModel, dOut));
    torch::NoGradGuard noGrad;
    for (auto* l : {read_in.get(), read_out.get()}) {
        l->weight.normal_(0.0, 0.02);
        l->bias.zero_();
    }
}

std::unique_ptr<DecodeState> SequenceModelImpl::startDecoding(int64_t, torch::TensorOptions) { return nullptr; }

torch::Tensor SequenceModelImpl::decode(const torch::Tensor&, DecodeState&)
{
    TORCH_CHECK(false, "this model family has no incremental decoding (startDecoding gave no state)");
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
