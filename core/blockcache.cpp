#include "core/blockcache.h"

#include "core/kernels/fastpaths.h"
#include "core/torchcompat.h"

#include <c10/core/CPUAllocator.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

namespace parrot {

namespace {

// Every block starts with this header, one cache line, so the data keeps the 64-byte alignment
// Torch's own allocator gives (its vector kernels assume it) and the deleter knows the size.
struct alignas(64) Header {
    size_t total;     // bytes from the header's start: the whole allocation
    uint32_t magic;
    uint32_t mapped;  // 1: a large block (mmap), 0: from the C library
    uint64_t generation;  // large blocks: the generation they were mapped in (blockCacheMark)
};
static_assert(sizeof(Header) == 64);
constexpr uint32_t kMagic = 0x70617272;  // "parr"
constexpr size_t kLarge = size_t(64) << 10;
constexpr size_t kPage = 4096;
// The cache holds at most the larger of this and the most that was ever live at once (in
// training, about one step's tensors: the cache holds them between steps). A freed block that
// would go past it empties the cache first: sizes that stopped repeating (in-context tasks draw
// a new prompt length each step) make room for the ones in use.
constexpr size_t kMinCacheLimit = size_t(256) << 20;

class BlockCache final : public compat::Allocator {
public:
    c10::DataPtr allocateBytes(size_t n) const override
    {
        if (n == 0) return {nullptr, nullptr, &freeBlock, c10::Device(c10::DeviceType::CPU)};
        void* data = n + sizeof(Header) < kLarge ? allocateSmall(n) : instance().allocateLarge(n);
        return {data, data, &freeBlock, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &freeBlock; }

    static BlockCache& instance()
    {
        static BlockCache* cache = new BlockCache;  // never destroyed: tensors may outlive main()
        return *cache;
    }

    void release(uint64_t since = 0)
    {
        std::lock_guard lock(m_mutex);
        if (since == 0) return unmapAll();
        for (auto it = m_free.begin(); it != m_free.end();) {
            if (static_cast<Header*>(it->second)->generation < since) {
                ++it;
                continue;
            }
            munmap(it->second, it->first);
            m_stats.cachedBytes -= it->first;
            it = m_free.erase(it);
        }
    }

    uint64_t mark()
    {
        std::lock_guard lock(m_mutex);
        return ++m_generation;
    }

    void keep(int change)
    {
        bool last = false;
        {
            std::lock_guard lock(m_mutex);
            m_keepers += change;
            last = m_keepers == 0;
        }
        if (last) release();
    }

    BlockCacheStats stats()
    {
        std::lock_guard lock(m_mutex);
        return m_stats;
    }

private:
    static void* allocateSmall(size_t n)
    {
        const size_t total = (n + sizeof(Header) + 63) / 64 * 64;
        auto* h = static_cast<Header*>(std::aligned_alloc(64, total));
        TORCH_CHECK(h, "not enough memory: tried to allocate ", n, " bytes");
        *h = Header{total, kMagic, 0, 0};
        return h + 1;
    }

    void* allocateLarge(size_t n)
    {
        const size_t total = (n + sizeof(Header) + kPage - 1) / kPage * kPage;
        if (Header* h = take(total)) return h + 1;
        // Populated: the tensor is about to be written, and the kernel fills the pages in one go
        // faster than one fault per page.
        const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
        void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (p == MAP_FAILED) {  // what the cache holds may be what is missing
            release();
            p = mmap(nullptr, total, PROT_READ | PROT_WRITE, flags, -1, 0);
        }
        TORCH_CHECK(p != MAP_FAILED, "not enough memory: tried to allocate ", n, " bytes");
        uint64_t generation = 0;
        {
            std::lock_guard lock(m_mutex);
            m_stats.liveBytes += total;
            m_stats.mapped += 1;
            generation = m_generation;
            notePeak();
        }
        auto* h = static_cast<Header*>(p);
        *h = Header{total, kMagic, 1, generation};
        return h + 1;
    }

    // The smallest cached block of at least `total` bytes and at most half as much again.
    Header* take(size_t total)
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_free.lower_bound(total);
        if (it == m_free.end() || it->first > total + total / 2) return nullptr;
        auto* h = static_cast<Header*>(it->second);
        m_stats.cachedBytes -= it->first;
        m_stats.liveBytes += it->first;
        m_stats.reused += 1;
        notePeak();
        m_free.erase(it);
        return h;
    }

    void give(Header* h)
    {
        const size_t total = h->total;
        std::lock_guard lock(m_mutex);
        m_stats.liveBytes -= total;
        if (m_keepers == 0) {
            munmap(h, total);
            return;
        }
        if (m_stats.cachedBytes + total > std::max(kMinCacheLimit, m_peakLive)) unmapAll();
        m_free.emplace(total, h);
        m_stats.cachedBytes += total;
    }

    void notePeak()
    {
        m_peakLive = std::max(m_peakLive, m_stats.liveBytes);
        m_stats.peakBytes = std::max(m_stats.peakBytes, m_stats.liveBytes + m_stats.cachedBytes);
    }

    void unmapAll()  // m_mutex held
    {
        for (const auto& [size, p] : m_free) munmap(p, size);
        m_free.clear();
        m_stats.cachedBytes = 0;
    }

    static void freeBlock(void* data)
    {
        if (!data) return;
        Header* h = static_cast<Header*>(data) - 1;
        TORCH_INTERNAL_ASSERT(h->magic == kMagic, "block cache: freeing memory it did not allocate");
        if (h->mapped) instance().give(h);
        else std::free(h);
    }

    std::mutex m_mutex;
    std::multimap<size_t, void*> m_free;  // total size -> block
    int m_keepers = 0;                    // KeepFreedBlocks alive
    size_t m_peakLive = 0;
    uint64_t m_generation = 0;
    BlockCacheStats m_stats;
};

}  // namespace

void installBlockCache()
{
    static const bool once = [] {
        if (!fastPaths()) return false;  // PARROT_REFERENCE_PATHS=1: Torch's own allocator
        c10::SetCPUAllocator(&BlockCache::instance(), /*priority*/ 1);
        return true;
    }();
    (void)once;
}

KeepFreedBlocks::KeepFreedBlocks() { BlockCache::instance().keep(1); }

KeepFreedBlocks::~KeepFreedBlocks() { BlockCache::instance().keep(-1); }

void releaseCachedBlocks() { BlockCache::instance().release(); }

uint64_t blockCacheMark() { return BlockCache::instance().mark(); }

void releaseCachedBlocksSince(uint64_t mark) { BlockCache::instance().release(mark); }

BlockCacheStats blockCacheStats() { return BlockCache::instance().stats(); }

}  // namespace parrot
