#include "core/models/lstm.h"

namespace parrot {

LstmLMImpl::LstmLMImpl(const LstmOptions& o) : m_o(o)
{
    embedding = register_module("embedding", torch::nn::Embedding(o.vocabSize, o.dModel));
    lstm = register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(o.dModel, o.dModel).num_layers(o.layers).batch_first(true)));
    lm_head = registerLmHead(*this, o.dModel, o.vocabSize, o.tieEmbeddings);
    torch::NoGradGuard noGrad;
    embedding->weight.normal_(0.0, 0.02);
    if (lm_head) lm_head->weight.normal_(0.0, 0.02);
    // A forget-gate bias of 1 keeps the cell's memory open at the start (Jozefowicz et al., 2015).
    for (auto& p : lstm->named_parameters())
        if (p.key().rfind("bias_hh", 0) == 0) p.value().narrow(0, o.dModel, o.dModel).fill_(1.0);
}

torch::Tensor LstmLMImpl::embed(const torch::Tensor& idx) { return embedding(idx); }

torch::Tensor LstmLMImpl::head(const torch::Tensor& x) { return lmLogits(x, lm_head, embedding->weight); }

torch::Tensor LstmLMImpl::hidden(const torch::Tensor& x, Probes* probes)
{
    if (!probes) return std::get<0>(lstm->forward(x));  // (B, T, C)
    // With probes, one step at a time so each layer's cell state can be recorded.
    const int64_t B = x.size(0), T = x.size(1), C = m_o.dModel;
    std::vector<std::tuple<torch::Tensor, torch::Tensor>> states;
    std::vector<torch::Tensor> cells(size_t(m_o.layers));
    auto h = torch::zeros({m_o.layers, B, C}, x.options()), c = torch::zeros({m_o.layers, B, C}, x.options());
    std::vector<torch::Tensor> outs;
    std::vector<std::vector<torch::Tensor>> perLayer(size_t(m_o.layers));
    for (int64_t t = 0; t < T; ++t) {
        auto [y, hc] = lstm->forward(x.narrow(1, t, 1), std::make_tuple(h, c));
        std::tie(h, c) = hc;
        outs.push_back(y);
        for (int64_t l = 0; l < m_o.layers; ++l) perLayer[size_t(l)].push_back(torch::cat({h[l], c[l]}, -1).abs());
    }
    for (int64_t l = 0; l < m_o.layers; ++l) {
        probes->stateNorm.push_back(torch::stack(perLayer[size_t(l)], 1).detach());  // (B, T, 2C): |h|, |c|
        probes->stateLayer.push_back(int(l));
    }
    return torch::cat(outs, 1);
}

torch::Tensor LstmLMImpl::step(const torch::Tensor& idx, std::tuple<torch::Tensor, torch::Tensor>& state)
{
    auto x = embedding(idx).unsqueeze(1);  // (B, 1, C)
    if (!std::get<0>(state).defined()) {
        auto zeros = torch::zeros({m_o.layers, idx.size(0), m_o.dModel}, x.options());
        state = std::make_tuple(zeros, zeros.clone());
    }
    auto [y, hc] = lstm->forward(x, state);
    state = hc;
    return lmLogits(y.squeeze(1), lm_head, embedding->weight);  // (B, V)
}

}  // namespace parrot
