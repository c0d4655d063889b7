// What differs between the two LibTorch builds Parrotscope supports: Debian's 1.13 (the default,
// CPU) and a current 2.x from the PyTorch wheel (packaging/torch-from-pip.sh). One place for it,
// instead of version checks scattered through the sources.
#pragma once

#include <c10/core/Allocator.h>
#include <torch/torch.h>
#include <torch/version.h>

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

}  // namespace parrot::compat
