#include "core/models/s4d.h"

#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/models/stateshrink.h"

#include <cmath>

namespace parrot {

namespace F = torch::nn::functional;

torch::Tensor ssmNorm(RMSNorm& norm, const torch::Tensor& x)
{
    return fastPaths() ? rmsNorm(x, norm->weight, kSsmNormEps) : norm(x);
}

S4DKernelImpl::S4DKernelImpl(int64_t channels, int64_t dState, double dtMin, double dtMax)
{
    log_dt = register_parameter("log_dt", torch::rand({channels}) * (std::log(dtMax) - std::log(dtMin)) + std::log(dtMin));
    A_log = register_parameter("A_log", torch::log(torch::arange(1, dState + 1, torch::kFloat)).repeat({channels, 1}));
    B = register_parameter("B", torch::ones({channels, dState}));
    C = register_parameter("C", torch::randn({channels, dState}) / std::sqrt(double(dState)));
}

torch::Tensor S4DKernelImpl::kernel(int64_t T) const
{
    auto dt = torch::exp(log_dt).unsqueeze(-1);                 // (D, 1)
    auto dtA = dt * -torch::exp(A_log);                         // (D, N)
    auto l = torch::arange(T, log_dt.options()).view({1, 1, T});
    auto powers = torch::exp(dtA.unsqueeze(-1) * l);            // (D, N, T)
    return ((keptStateDims(C, 1) * B * dt).unsqueeze(-1) * powers).sum(1);  // (D, T), all of C unless a StateShrink cuts it
}

torch::Tensor S4DKernelImpl::forward(const torch::Tensor& u, torch::Tensor* states)
{
    const int64_t Dn = u.size(1), T = u.size(2);
    if (shrinkQuantises() && !states) {
        // A Bits shrink: the recurrence step by step, the state quantised after every step.
        auto dt = torch::exp(log_dt).unsqueeze(-1);
        auto dA = torch::exp(dt * -torch::exp(A_log)), dB = dt * B;  // (D, N)
        auto x = torch::zeros({u.size(0), Dn, A_log.size(1)}, u.options());
        std::vector<torch::Tensor> ys;
        for (int64_t t = 0; t < T; ++t) {
            x = quantisedState(x * dA + dB * u.select(2, t).unsqueeze(-1), shrinkBits());
            ys.push_back((x * C.unsqueeze(0)).sum(-1));
        }
        return torch::stack(ys, 2);  // (B, D, T)
    }
    auto K = kernel(T);  // (D, T)
    if (const int64_t kept = keptChannels(Dn); kept < Dn) K = torch::cat({K.narrow(0, 0, kept), torch::zeros_like(K.narrow(0, kept, Dn - kept))}, 0);
    // y_t = sum_{s <= t} K[t - s] u_s: a depthwise convolution with the flipped kernel.
    auto y = F::conv1d(F::pad(u, F::PadFuncOptions({T - 1, 0})), K.flip(-1).unsqueeze(1),
                       F::Conv1dFuncOptions().groups(Dn));      // (B, D, T)
    if (states) {
        // The explicit recurrence, for the probes only: x_t = exp(dt A) x_{t-1} + dt B u_t.
        auto dt = torch::exp(log_dt).unsqueeze(-1);
        auto dA = torch::exp(dt * -torch::exp(A_log)), dB = dt * B;  // (D, N)
        auto x = torch::zeros({u.size(0), Dn, A_log.size(1)}, u.options());
        std::vector<torch::Tensor> xs;
        for (int64_t t = 0; t < T; ++t) {
            x = x * dA + dB * u.select(2, t).unsqueeze(-1);
            xs.push_back(x);
        }
        *states = torch::stack(xs, 2).detach();  // (B, D, T, N)
    }
    return y;
}

namespace {

class S4DBlockImpl : public torch::nn::Module {
public:
    S4DBlockImpl(int64_t dModel, int64_t dInner, int64_t dState)
    {
        norm = register_module("norm", RMSNorm(dModel, kSsmNormEps));
        in_proj = register_module("in_proj", torch::nn::Linear(dModel, dInner));
        // Step sizes log-uniform in [1e-3, 1] rather than S4D's [1e-3, 0.1]: with 0.1 every
        // channel's memory spans tens of tokens, and on the short copy strings here the stack
        // reached char accuracy 0.37 at length 2 in 400 steps; with 1 some channels see one or two
        // tokens back sharply, and it copies every string (measured with tst_models' settings).
        s4 = register_module("s4", S4DKernel(dInner, dState, 1e-3, 1.0));
        D = register_parameter("D", torch::ones({dInner}));
        out_proj = register_module("out_proj", torch::nn::Linear(dInner, dModel));
    }
    torch::Tensor forward(const torch::Tensor& x, Probes* probes, int layer)  // (B, T, C) -> (B, T, C)
    {
        auto u = in_proj(ssmNorm(norm, x)).transpose(1, 2);  // (B, Di, T)
        torch::Tensor states;
        auto y = s4(u, probes ? &states : nullptr) + u * D.view({1, -1, 1});
        if (probes) {
            probes->stateNorm.push_back(states.norm(2, -1).transpose(1, 2));
            probes->stateLayer.push_back(layer);
        }
        // GELU on a contiguous (B, T, Di) tensor: LibTorch 1.13's exact-GELU backward returns
        // garbage (often inf) when its incoming gradient is laid out differently from its input,
        // which is what out_proj's backward hands it after a transpose.
        return x + out_proj(torch::gelu(y.transpose(1, 2).contiguous()));
    }
    RMSNorm norm{nullptr};
    torch::nn::Linear in_proj{nullptr};
    S4DKernel s4{nullptr};
    torch::Tensor D;
    torch::nn::Linear out_proj{nullptr};
};
TORCH_MODULE(S4DBlock);

}  // namespace

S4DLMImpl::S4DLMImpl(const S4DLMOptions& o) : m_o(o)
{
    embedding = register_module("embedding", torch::nn::Embedding(o.vocabSize, o.dModel));
    layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.layers; ++i) layers->push_back(S4DBlock(o.dModel, o.expand * o.dModel, o.dState));
    norm_f = register_module("norm_f", RMSNorm(o.dModel, kSsmNormEps));
    lm_head = registerLmHead(*this, o.dModel, o.vocabSize, o.tieEmbeddings);
    // GPT-2-style initialisation of the projections, as for the other families (the SSM's own
    // parameters keep their S4D init): zero biases, N(0, 0.02), the residual output scaled.
    torch::NoGradGuard noGrad;
    embedding->weight.normal_(0.0, 0.02);
    if (lm_head) lm_head->weight.normal_(0.0, 0.02);
    for (const auto& block : *layers) {
        auto* b = block->as<S4DBlockImpl>();
        b->in_proj->weight.normal_(0.0, 0.02);
        b->in_proj->bias.zero_();
        b->out_proj->weight.normal_(0.0, 0.02 / std::sqrt(2.0 * double(o.layers)));
        b->out_proj->bias.zero_();
    }
}

torch::Tensor S4DLMImpl::embed(const torch::Tensor& idx) { return embedding(idx); }

torch::Tensor S4DLMImpl::head(const torch::Tensor& x) { return lmLogits(x, lm_head, embedding->weight); }

torch::Tensor S4DLMImpl::hidden(const torch::Tensor& input, Probes* probes)
{
    auto x = input;
    int layer = 0;
    for (const auto& block : *layers) x = block->as<S4DBlockImpl>()->forward(x, probes, layer++);
    return ssmNorm(norm_f, x);
}

StateSize S4DLMImpl::stateSize() const { return {m_o.layers * m_o.expand * m_o.dModel * m_o.dState, 0}; }

}  // namespace parrot
