// The state-space layers' recurrent state made smaller at inference (base/ablation.h's
// StateShrink): a thread-local scope that Mamba's mixer (selective and S4-Mamba), the S4D kernel
// and so the hybrids' Mamba layers read while they run. The weights are never touched.
//   Dims:     B and C cut to their first k columns, so the other state dimensions stay zero;
//             k = d_state multiplies by ones and runs the plain path: the same values exactly.
//   Channels: the dropped channels' scan output replaced by what a zero state gives (the skip).
//   Bits:     the recurrence run step by step, the state quantised after every step.
#pragma once

#include "base/ablation.h"

#include <torch/torch.h>

namespace parrot {

class StateShrinkScope {
public:
    explicit StateShrinkScope(const StateShrink& shrink);
    ~StateShrinkScope();
    StateShrinkScope(const StateShrinkScope&) = delete;
    StateShrinkScope& operator=(const StateShrinkScope&) = delete;
    static const StateShrink* current();  // nullptr: the whole state
    // Sets the thread's shrink (nullptr: none) and returns the one it replaces.
    static const StateShrink* exchange(const StateShrink* shrink);

private:
    const StateShrink* m_previous;
};

// `t` with its entries at index >= k along `dim` (the d_state axis) zeroed under a Dims shrink;
// `t` itself otherwise.
torch::Tensor keptStateDims(const torch::Tensor& t, int64_t dim);
// Of `channels`, how many keep their state (all of them unless a Channels shrink is on).
int64_t keptChannels(int64_t channels);
// Whether the recurrence must run step by step (a Bits shrink), and its bits (32 when not).
bool shrinkQuantises();
int shrinkBits();
// h (..., N) quantised to `bits` bits per entry, the scale per row of N (StateShrink::Bits).
torch::Tensor quantisedState(const torch::Tensor& h, int bits);
// y (B, D, T) with the channels from keptChannels(D) on set to `zeroState` (B, D, T): what those
// channels give with no state. y itself when every channel keeps its state.
torch::Tensor dropChannelStates(const torch::Tensor& y, const torch::Tensor& zeroState);

}  // namespace parrot

namespace parrot {
struct ScanInputs;
// The selective scan (selectiveScanReference's loop) with the state quantised to `bits` bits
// after every step: (B, D, T), gated by in.z where it is defined.
torch::Tensor quantisedSelectiveScan(const ScanInputs& in, int bits);
// y (B, D, T), the scan's output, with the channels a Channels shrink drops given what they give
// with no state (the skip D u, gated by in.z where it is defined).
torch::Tensor withoutDroppedStates(const torch::Tensor& y, const ScanInputs& in);
// The selective scan under the thread's StateShrink, whatever it is: B and C cut (Dims), the
// dropped channels' states taken away (Channels), or the state quantised each step (Bits).
torch::Tensor shrunkScan(const ScanInputs& in);
}  // namespace parrot
