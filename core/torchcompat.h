// What differs between the two LibTorch builds Parrotscope supports: Debian's 1.13 (the default,
// CPU) and a current 2.x from the PyTorch wheel (packaging/torch-from-pip.sh). One place for it,
// instead of version checks scattered through the sources.
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

namespace parrot::compat {

// The key of a parameter's entry in a torch optimiser's state: its TensorImpl's address printed
// as text in 1.13, the address itself in 2.x.
using OptimizerStateKey = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <class Key = OptimizerStateKey>
Key optimizerStateKey(const torch::Tensor& p)
{
    if constexpr (std::is_same_v<Key, std::string>) {
        std::ostringstream os;
        os << static_cast<const void*>(p.unsafeGetTensorImpl());
        return os.str();
    } else {
        return p.unsafeGetTensorImpl();
    }
}

// A CPU allocator (blockcache.cpp) implements allocateBytes(): c10::Allocator::allocate() is
// const in 1.13 and not in 2.x, where copy_data() must be defined too.
class Allocator : public c10::Allocator {
public:
    virtual c10::DataPtr allocateBytes(size_t n) const = 0;
#if TORCH_VERSION_MAJOR >= 2
    c10::DataPtr allocate(size_t n) override { return allocateBytes(n); }
    void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#else
    c10::DataPtr allocate(size_t n) const override { return allocateBytes(n); }
#endif
};

// softmax(q kᵀ / √D + bias) v for q (B, H, S, D), k and v (B, H, T, D) and an additive bias
// (H, S, T) (−inf where a query may not look). 2.x: Torch's scaled_dot_product_attention, its
// fused kernels (memory-efficient attention on a GPU, a blocked kernel on the CPU); the bias in
// the queries' type, as it asks (bfloat16 under autocast). 1.13 has none: the explicit products.
inline torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& bias)
{
#if TORCH_VERSION_MAJOR >= 2
    return at::scaled_dot_product_attention(q, k, v, bias.unsqueeze(0).to(q.scalar_type()));
#else
    const auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1))) + bias.unsqueeze(0);
    return torch::matmul(torch::softmax(scores, -1), v);
#endif
}

// Whether this thread runs under autocast, on the CPU or on a GPU.
inline bool autocastEnabled()
{
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    return at::autocast::is_autocast_enabled(c10::DeviceType::CPU) || at::autocast::is_autocast_enabled(c10::DeviceType::CUDA);
#else
    return at::autocast::is_cpu_enabled() || at::autocast::is_enabled();
#endif
}

// bfloat16 autocast on one device for a scope (Torch keeps it per thread), restoring what was
// there before; nothing when `on` is false. 1.13 has a call per device kind, 2.x one taking it.
class AutocastScope {
public:
    AutocastScope(const torch::Device& device, bool on) : m_type(device.type()), m_on(on)
    {
        if (!m_on) return;
        m_wasEnabled = enabled();
        m_wasType = dtype();
        set(true, at::kBFloat16);
    }
    ~AutocastScope()
    {
        if (!m_on) return;
        set(m_wasEnabled, m_wasType);
        at::autocast::clear_cache();  // the bf16 copies of the weights made in the scope
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    bool enabled() const { return at::autocast::is_autocast_enabled(m_type); }
    at::ScalarType dtype() const { return at::autocast::get_autocast_dtype(m_type); }
    void set(bool enable, at::ScalarType type) const
    {
        at::autocast::set_autocast_dtype(m_type, type);
        at::autocast::set_autocast_enabled(m_type, enable);
    }
#else
    bool cpu() const { return m_type == c10::DeviceType::CPU; }
    bool enabled() const { return cpu() ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled(); }
    at::ScalarType dtype() const { return cpu() ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype(); }
    void set(bool enable, at::ScalarType type) const
    {
        if (cpu()) {
            at::autocast::set_autocast_cpu_dtype(type);
            at::autocast::set_cpu_enabled(enable);
        } else {
            at::autocast::set_autocast_gpu_dtype(type);
            at::autocast::set_enabled(enable);
        }
    }
#endif
    c10::DeviceType m_type;
    bool m_on;
    bool m_wasEnabled = false;
    at::ScalarType m_wasType = at::kFloat;
};

}  // namespace parrot::compat
