#include "core/kernels/deltarule.h"

#include "core/kernels/cpulevel.h"
#include "core/kernels/deltarulekernel.h"

#include <ATen/Parallel.h>

namespace parrot {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

namespace {

constexpr int64_t kEvery = 16;  // tokens between the states the forward keeps for the backward

void forItems(const deltarule::Args& a, void (*generic)(const deltarule::Args&, int64_t, int64_t),
              void (*avx2)(const deltarule::Args&, int64_t, int64_t))
{
    const auto run = cpu::haveAvx2Fma() ? avx2 : generic;
    at::parallel_for(0, a.B * a.H, 1, [&](int64_t i0, int64_t i1) { run(a, i0, i1); });
}

deltarule::Args argsOf(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g)
{
    deltarule::Args a;
    a.q = q.data_ptr<float>();
    a.k = k.data_ptr<float>();
    a.v = v.data_ptr<float>();
    a.beta = beta.data_ptr<float>();
    a.g = g.defined() ? g.data_ptr<float>() : nullptr;
    a.B = q.size(0);
    a.T = q.size(1);
    a.H = q.size(2);
    a.K = q.size(3);
    a.V = v.size(3);
    a.every = kEvery;
    return a;
}

class DeltaRuleFunction : public torch::autograd::Function<DeltaRuleFunction> {
public:
    // g: the log decays, or an empty tensor for no gate (autograd's nodes take no undefined inputs)
    static Tensor forward(AutogradContext* ctx, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& g)
    {
        const Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous(), bc = beta.contiguous();
        const bool gated = g.numel() > 0;
        const Tensor gc = gated ? g.contiguous() : Tensor();
        deltarule::Args a = argsOf(qc, kc, vc, bc, gc);
        Tensor o = torch::empty_like(vc);
        Tensor kept = torch::empty({a.B, a.H, a.stretches(), a.K, a.V}, vc.options());
        a.o = o.data_ptr<float>();
        a.kept = kept.data_ptr<float>();
        forItems(a, deltarule::forwardGeneric, deltarule::forwardAvx2);
        ctx->save_for_backward({qc, kc, vc, bc, gated ? gc : g, kept});
        ctx->saved_data["gated"] = gated;
        return o;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const bool gated = ctx->saved_data["gated"].toBool();
        const Tensor &q = saved[0], &k = saved[1], &v = saved[2], &beta = saved[3], &kept = saved[5];
        const Tensor g = gated ? saved[4] : Tensor();
        const Tensor dO = grads[0].contiguous();
        deltarule::Args a = argsOf(q, k, v, beta, g);
        a.kept = const_cast<float*>(kept.data_ptr<float>());
        a.dO = dO.data_ptr<float>();
        Tensor dq = torch::empty_like(q), dk = torch::empty_like(k), dv = torch::empty_like(v), dbeta = torch::empty_like(beta);
        Tensor dg = gated ? torch::empty_like(g) : Tensor();
        a.dq = dq.data_ptr<float>();
        a.dk = dk.data_ptr<float>();
        a.dv = dv.data_ptr<float>();
        a.dbeta = dbeta.data_ptr<float>();
        a.dg = gated ? dg.data_ptr<float>() : nullptr;
        forItems(a, deltarule::backwardGeneric, deltarule::backwardAvx2);
        return {dq, dk, dv, dbeta, dg};
    }
};

}  // namespace

bool deltaRuleFusedTakes(const Tensor& q) { return q.device().is_cpu() && q.scalar_type() == torch::kFloat; }

Tensor deltaRuleFused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& logDecay)
{
    return DeltaRuleFunction::apply(q, k, v, beta, logDecay.defined() ? logDecay : torch::empty({0}, q.options()));
}

}  // namespace parrot
