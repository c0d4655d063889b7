#include "core/models/sequencemodel.h"

#include "core/models/dense.h"

namespace parrot {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : m_eps(eps)
{
    weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x)
{
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + m_eps) * weight;
}

torch::Tensor SequenceModelImpl::forward(const torch::Tensor& idx, Probes* probes)
{
    const auto h = hidden(embed(idx), probes);
    return hasReadOut() ? readOut(idx, h) : head(h);
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

void SequenceModelImpl::addReadOut(int64_t dModel, int64_t readToken)
{
    namespace nn = torch::nn;
    const auto norm = [&] { return nn::LayerNorm(nn::LayerNormOptions({dModel})); };
    read_decoder = register_module("read_decoder", nn::Sequential(norm(), nn::Linear(dModel, dModel), nn::GELU(), norm(),
                                                                  nn::Linear(dModel, dModel), nn::GELU(), norm()));
    m_readToken = readToken;
    torch::NoGradGuard noGrad;
    for (auto& m : read_decoder->modules(false))
        if (auto* l = m->as<nn::Linear>()) {
            l->weight.normal_(0.0, 0.02);
            l->bias.zero_();
        }
}

torch::Tensor SequenceModelImpl::readOut(const torch::Tensor& idx, const torch::Tensor& h)
{
    TORCH_CHECK(hasReadOut(), "this model has no read-out decoder (it was built for next-token prediction)");
    const int64_t B = h.size(0), T = h.size(1), C = h.size(2);
    auto positions = torch::arange(T, idx.options());
    // each row's last read token, else its last position
    auto at = torch::where(idx.eq(m_readToken), positions.unsqueeze(0), torch::full_like(idx, -1)).amax(1);
    at = torch::where(at.lt(0), torch::full_like(at, T - 1), at);
    auto code = h.gather(1, at.view({B, 1, 1}).expand({B, 1, C}));  // (B, 1, C)
    // sin(t w_i), cos(t w_i), w_i = 10000^(-i / (C/2 - 1)) (mad-lab's posemb_sincos_1d)
    const int64_t half = C / 2;
    auto omega = torch::pow(10000.0, -torch::arange(half, h.options()) / double(std::max<int64_t>(1, half - 1)));
    auto angle = positions.to(h.scalar_type()).unsqueeze(1) * omega.unsqueeze(0);  // (T, C/2)
    auto pe = torch::cat({angle.sin(), angle.cos(), torch::zeros({T, C - 2 * half}, h.options())}, 1);
    return head(read_decoder->forward(code + pe.unsqueeze(0)));  // (B, T, V)
}

std::unique_ptr<DecodeState> SequenceModelImpl::startDecoding(int64_t, torch::TensorOptions) { return nullptr; }

torch::Tensor SequenceModelImpl::decode(const torch::Tensor&, DecodeState&)
{
    TORCH_CHECK(false, "this model family has no incremental decoding (startDecoding gave no state)");
}

torch::nn::Linear registerLmHead(torch::nn::Module& model, int64_t dModel, int64_t vocab, bool tied)
{
    if (tied) return nullptr;
    return model.register_module("lm_head", storedLinear(torch::nn::LinearOptions(dModel, vocab).bias(false)));
}

torch::Tensor lmLogits(const torch::Tensor& x, torch::nn::Linear head, const torch::Tensor& embedding)
{
    return head ? dense(head, x) : denseLinear(x, embedding);
}

SsmBackbone registerSsmBackbone(torch::nn::Module& model, int64_t vocab, int64_t dModel, bool tied, int64_t layers, double normEps,
                                const std::function<std::shared_ptr<torch::nn::Module>()>& makeBlock, const BackboneNames& names)
{
    SsmBackbone b;
    b.backbone = std::make_shared<torch::nn::Module>(names.backbone);
    b.embedding = b.backbone->register_module(names.embedding, storedEmbedding(vocab, dModel));
    b.layers = b.backbone->register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < layers; ++i) b.layers->push_back(makeBlock());
    b.norm_f = b.backbone->register_module(names.norm, RMSNorm(dModel, normEps));
    model.register_module(names.backbone, b.backbone);
    b.lm_head = registerLmHead(model, dModel, vocab, tied);
    if (WeightStorage::current() == torch::kFloat) {  // 16-bit weights are built only to be loaded into
        torch::NoGradGuard noGrad;
        b.embedding->weight.normal_(0.0, 0.02);
        if (b.lm_head) b.lm_head->weight.normal_(0.0, 0.02);
    }
    return b;
}

}  // namespace parrot
