// Torch's CPU allocator replaced by one that keeps large freed buffers for reuse.
//
// A training step allocates and frees the same activations, of the same sizes, every step. With
// the C library's allocator that costs one of two things: handed back to the kernel, every
// step page-faults them in again (about a tenth of a step in perf); kept, they fragment its
// arenas (one per thread, and the split batch runs on two threads), whose resident memory grew
// by 100 MB and more over a run while the live tensors stayed under 90 MB. This cache keeps each
// freed block of 64 KiB or more (mapped on its own, never mixed with small allocations) and
// hands it to the next request of its size; small blocks go to the C library.
// It keeps blocks only while a KeepFreedBlocks lives (a training run holds one): elsewhere --
// the explorer's probes, evaluation at ever new lengths -- sizes rarely repeat, and each large
// block is unmapped when freed. The resident memory of a run is its peak of live tensors plus
// what is cached, about one step's tensors; an evaluation inside a run gives back the blocks it
// mapped after each length (its sizes are not a step's; the step's own stay cached), and the
// last KeepFreedBlocks to end gives back everything.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parrot {

// Installs the cache as Torch's CPU allocator, once per process; with the fast paths off
// (PARROT_REFERENCE_PATHS=1) Torch's own allocator stays, so runs can be compared old against new.
void installBlockCache();

// While one lives, large freed blocks are kept for reuse (any thread's: the split batch frees
// on OpenMP's threads what the trainer's thread allocated). The last one to end gives them back.
class KeepFreedBlocks {
public:
    KeepFreedBlocks();
    ~KeepFreedBlocks();
    KeepFreedBlocks(const KeepFreedBlocks&) = delete;
    KeepFreedBlocks& operator=(const KeepFreedBlocks&) = delete;
};

// Gives every cached block that is not in use back to the system.
void releaseCachedBlocks();

// A mark, and every cached block mapped after it given back: what one phase of work (an
// evaluation's length) added, leaving what was cached before it.
uint64_t blockCacheMark();
void releaseCachedBlocksSince(uint64_t mark);

struct BlockCacheStats {
    size_t liveBytes = 0;    // large blocks in use
    size_t cachedBytes = 0;  // large blocks freed and kept
    size_t peakBytes = 0;    // the largest live + cached so far
    size_t reused = 0;       // requests served from the cache
    size_t mapped = 0;       // requests that mapped a new block
};
BlockCacheStats blockCacheStats();

}  // namespace parrot
