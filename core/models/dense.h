// A pretrained model's large matrices held in 16 bits (WeightDtype, base/weightdtype.h).
// The linear layers and embeddings that the Transformer and Mamba register through stored()
// take the storage dtype of the thread that builds them (WeightStorage), and every forward use
// of their weights goes through dense() / denseLinear() / denseEmbedding(), which compute in
// float32 whatever the weight is held as:
//  - a few rows (generating a token): kernels/dense16kernel reads the 16-bit weights directly,
//    half the bytes of float32;
//  - many rows (a prompt, perplexity): the weight is widened to float32 a block of rows at a time
//    (16 MB), each block multiplied by Torch's float32 product, so the extra memory is one block.
// A float32 weight takes the plain Torch op, but for a few rows on the CPU in inference mode
// (generating), where the same kernel reads float32 weights. Training always takes Torch's op and
// never sees a 16-bit weight.
#pragma once

#include <torch/torch.h>

namespace parrot {

// While alive, models built on this thread hold their stored() weights as `dtype`.
class WeightStorage {
public:
    explicit WeightStorage(torch::ScalarType dtype);
    ~WeightStorage();
    WeightStorage(const WeightStorage&) = delete;
    WeightStorage& operator=(const WeightStorage&) = delete;
    static torch::ScalarType current();  // kFloat unless a WeightStorage says otherwise

private:
    torch::ScalarType m_previous;
};

// A weight already built and initialised, converted to the current storage dtype (nothing
// happens for float32).
void storeWeight(torch::Tensor& weight);
// torch::nn::Linear and Embedding as torch builds them when the storage is float32; for 16-bit
// storage, built at their shapes in that dtype without an initialisation (they are built only to
// be loaded into), so no float32 copy of a large matrix ever exists.
torch::nn::Linear storedLinear(const torch::nn::LinearOptions& options);
torch::nn::Embedding storedEmbedding(int64_t count, int64_t dim);

bool isSixteenBit(const torch::Tensor& t);
// Whether a 16-bit weight on this device multiplies at least as fast as float32 (what
// WeightDtype::Auto asks): on the CPU, when it has AVX2, FMA and F16C for the kernel.
bool sixteenBitRunsFast(const torch::Device& device);

// x (..., in) W(out, in)^T + b -> (..., out), float32.
torch::Tensor denseLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});
// x W^T without a bias, as torch::matmul(x, W.t()) computes it for a float32 W.
torch::Tensor denseT(const torch::Tensor& x, const torch::Tensor& weight);
// l(x) for a float32 layer; denseLinear on its weight and bias otherwise.
torch::Tensor dense(const torch::nn::Linear& l, const torch::Tensor& x);
// Rows of an embedding matrix, float32.
torch::Tensor denseEmbedding(const torch::Tensor& weight, const torch::Tensor& idx);
torch::Tensor dense(const torch::nn::Embedding& e, const torch::Tensor& idx);

}  // namespace parrot
