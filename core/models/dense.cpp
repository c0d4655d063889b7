#include "core/models/dense.h"

#include "core/kernels/dense16kernel.h"

#include <ATen/Parallel.h>

namespace parrot {

namespace {

thread_local torch::ScalarType t_storage = torch::kFloat;

constexpr int64_t kKernelRows = 8;           // up to this many rows read the 16-bit weights directly
constexpr int64_t kBlockFloats = int64_t(4) << 20;  // a widened block of weights: 16 MB of float32

}  // namespace

WeightStorage::WeightStorage(torch::ScalarType dtype) : m_previous(t_storage) { t_storage = dtype; }
WeightStorage::~WeightStorage() { t_storage = m_previous; }
torch::ScalarType WeightStorage::current() { return t_storage; }

void storeWeight(torch::Tensor& weight)
{
    if (t_storage == torch::kFloat || !weight.defined() || weight.scalar_type() == t_storage) return;
    torch::NoGradGuard noGrad;
    weight.set_data(weight.detach().to(t_storage));
    weight.set_requires_grad(false);  // only ever run, never trained
}

torch::nn::Linear storedLinear(const torch::nn::LinearOptions& options)
{
    if (t_storage == torch::kFloat) return torch::nn::Linear(options);
    torch::nn::Linear l(torch::nn::LinearOptions(1, 1).bias(options.bias()));  // then its real shapes, uninitialised
    torch::NoGradGuard noGrad;
    l->options = options;
    l->weight.set_data(torch::empty({options.out_features(), options.in_features()}, torch::TensorOptions().dtype(t_storage)));
    l->weight.set_requires_grad(false);
    if (options.bias()) l->bias.set_data(torch::zeros({options.out_features()}));
    return l;
}

torch::nn::Embedding storedEmbedding(int64_t count, int64_t dim)
{
    if (t_storage == torch::kFloat) return torch::nn::Embedding(count, dim);
    torch::nn::Embedding e(1, 1);
    torch::NoGradGuard noGrad;
    e->options = torch::nn::EmbeddingOptions(count, dim);
    e->weight.set_data(torch::empty({count, dim}, torch::TensorOptions().dtype(t_storage)));
    e->weight.set_requires_grad(false);
    return e;
}

bool isSixteenBit(const torch::Tensor& t)
{
    return t.defined() && (t.scalar_type() == torch::kHalf || t.scalar_type() == torch::kBFloat16);
}

bool sixteenBitRunsFast(const torch::Device& device) { return device.is_cpu() && dense16::haveAvx2F16c(); }

namespace {

// Generating with a float32 model: a few rows, in inference mode, on the CPU. Torch's own product
// for one row runs well below the memory's speed here; the kernel reads each weight once for all
// rows. Anything with autograd (training) or many rows keeps Torch's op.
bool generatingRows(const torch::Tensor& x, const torch::Tensor& weight)
{
    return c10::InferenceMode::is_enabled() && x.is_cpu() && weight.is_cpu() && x.scalar_type() == torch::kFloat &&
           weight.scalar_type() == torch::kFloat && weight.dim() == 2 && weight.stride(1) == 1 && x.dim() >= 1 &&
           x.numel() / std::max<int64_t>(1, x.size(-1)) <= kKernelRows && dense16::haveAvx2F16c();
}

torch::Tensor kernelProduct(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)
{
    const int64_t out = weight.size(0), in = weight.size(1);
    const auto x2 = x.reshape({-1, in}).to(torch::kFloat).contiguous();
    auto shape = x.sizes().vec();
    shape.back() = out;
    auto y = torch::empty({x2.size(0), out}, x2.options());
    const auto b = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::Tensor();
    dense16::Args a;
    a.x = x2.data_ptr<float>();
    a.rows = x2.size(0);
    a.in = in;
    a.ldx = in;
    if (weight.scalar_type() == torch::kFloat) a.w32 = weight.data_ptr<float>();
    else a.w = reinterpret_cast<const uint16_t*>(weight.data_ptr());
    a.ldw = weight.stride(0);
    a.bf16 = weight.scalar_type() == torch::kBFloat16;
    a.bias = b.defined() ? b.data_ptr<float>() : nullptr;
    a.y = y.data_ptr<float>();
    a.ldy = out;
    at::parallel_for(0, out, 32, [&](int64_t o0, int64_t o1) { dense16::gemvAvx2(a, o0, o1); });
    return y.view(shape);
}

}  // namespace

torch::Tensor denseLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)
{
    if (!isSixteenBit(weight)) return generatingRows(x, weight) ? kernelProduct(x, weight, bias) : torch::linear(x, weight, bias);
    const int64_t out = weight.size(0), in = weight.size(1);
    TORCH_CHECK(x.size(-1) == in, "denseLinear: input of ", x.size(-1), " features, weight of ", in);
    auto x2 = x.reshape({-1, in}).to(torch::kFloat).contiguous();
    const int64_t rows = x2.size(0);
    auto shape = x.sizes().vec();
    shape.back() = out;
    if (x2.is_cpu() && rows <= kKernelRows && weight.stride(1) == 1 && dense16::haveAvx2F16c()) return kernelProduct(x2, weight, bias).view(shape);
    auto y = torch::empty({rows, out}, x2.options());
    const int64_t block = std::max<int64_t>(16, kBlockFloats / std::max<int64_t>(1, in));
    const bool own = x2.is_cpu() && weight.stride(1) == 1;  // widened by the kernel into a buffer kept per thread
    thread_local torch::Tensor t_buffer;
    if (own && (!t_buffer.defined() || t_buffer.numel() < std::min(block, out) * in))
        t_buffer = torch::empty({std::min(block, out) * in}, torch::kFloat);
    const auto* w16 = own ? reinterpret_cast<const uint16_t*>(weight.data_ptr()) : nullptr;
    const bool bf16 = weight.scalar_type() == torch::kBFloat16, fast = dense16::haveAvx2F16c();
    for (int64_t o0 = 0; o0 < out; o0 += block) {
        const int64_t n = std::min(block, out - o0);
        auto ys = y.narrow(1, o0, n);
        torch::Tensor w;
        if (own) {
            float* dst = t_buffer.data_ptr<float>();
            const uint16_t* src = w16 + o0 * weight.stride(0);
            at::parallel_for(0, n, 64, [&](int64_t r0, int64_t r1) {
                if (fast) dense16::widenAvx2(src, weight.stride(0), in, bf16, dst, r0, r1);
                else dense16::widenGeneric(src, weight.stride(0), in, bf16, dst, r0, r1);
            });
            w = t_buffer.narrow(0, 0, n * in).view({n, in});
        } else {
            w = weight.narrow(0, o0, n).to(torch::kFloat);
        }
        if (bias.defined()) torch::addmm_out(ys, bias.narrow(0, o0, n).to(torch::kFloat), x2, w.t());
        else torch::mm_out(ys, x2, w.t());
    }
    return y.view(shape);
}

torch::Tensor denseT(const torch::Tensor& x, const torch::Tensor& weight)
{
    return isSixteenBit(weight) || generatingRows(x, weight) ? denseLinear(x, weight) : torch::matmul(x, weight.t());
}

torch::Tensor dense(const torch::nn::Linear& l, const torch::Tensor& x)
{
    return isSixteenBit(l->weight) || generatingRows(x, l->weight) ? denseLinear(x, l->weight, l->bias) : l.ptr()->forward(x);
}

torch::Tensor denseEmbedding(const torch::Tensor& weight, const torch::Tensor& idx)
{
    return isSixteenBit(weight) ? torch::embedding(weight, idx).to(torch::kFloat) : torch::embedding(weight, idx);
}

torch::Tensor dense(const torch::nn::Embedding& e, const torch::Tensor& idx)
{
    return isSixteenBit(e->weight) ? denseEmbedding(e->weight, idx) : e.ptr()->forward(idx);
}

}  // namespace parrot
