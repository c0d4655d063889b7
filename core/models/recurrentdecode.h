// decode() for the recurrent families whose blocks are x + mixer(norm(x)) with one cache per layer
// (Mamba-2, Gated DeltaNet): the prompt at once through each mixer's prefill into an empty cache,
// then a token at a time through its step, constant work each.
#pragma once

#include "core/models/dense.h"
#include "core/models/sequencemodel.h"

namespace parrot {

// idx (B, S) -> the hidden states before the final norm, (B, S, C), or the last position's only when
// state.lastOnly; `caches` empty before the prompt. normOf(block) and mixerOf(block) give a block's
// norm and mixer.
template <class Block, class Cache, class NormOf, class MixerOf>
torch::Tensor decodeThroughCaches(const torch::nn::ModuleList& layers, std::vector<Cache>& caches, DecodeState& state,
                                  const torch::Tensor& idx, const torch::nn::Embedding& embedding, NormOf normOf, MixerOf mixerOf)
{
    torch::Tensor x;
    if (caches.empty()) {
        x = dense(embedding, idx);  // (B, S, C)
        for (const auto& block : *layers) {
            auto* b = block->as<Block>();
            caches.push_back(mixerOf(b)->emptyCache(idx.size(0), x.options()));
            x = x + mixerOf(b)->prefill(normOf(b)(x), caches.back());
        }
    } else {
        std::vector<torch::Tensor> steps;
        for (int64_t t = 0; t < idx.size(1); ++t) {
            torch::Tensor h = dense(embedding, idx.select(1, t));  // (B, C)
            size_t i = 0;
            for (const auto& block : *layers) {
                auto* b = block->as<Block>();
                h = h + mixerOf(b)->step(normOf(b)(h), caches[i++]);
            }
            steps.push_back(h);
        }
        x = torch::stack(steps, 1);
    }
    state.length += idx.size(1);
    if (state.lastOnly && x.size(1) > 1) x = x.narrow(1, x.size(1) - 1, 1);
    return x;
}

}  // namespace parrot
