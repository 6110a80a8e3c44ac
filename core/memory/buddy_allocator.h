// buddy_allocator.h: Fluid's BuddyAllocator. Power-of-two blocks carved from power-of-two
// arena chunks taken from a SystemAllocator; freed blocks coalesce with their buddies. All
// bookkeeping lives outside the managed memory (it may be device memory the host cannot touch),
// in per-arena arrays indexed by min-block slot, so alloc and free are O(log arena) with no heap
// traffic. A small per-thread front cache serves the common case (a size freed and allocated
// again) with no lock at all. Requests over `large_threshold` skip the power-of-two blocks (an
// 80 MiB tensor would take 128): they get their own system allocation rounded to 1/16 of their
// size's power of two, and freed ones are kept for a request of about their size (as PyTorch's
// and Fluid's allocators treat big sizes) until EmptyCache or the budget needs them back.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/memory/allocator.h"
#include "core/platform/spin_lock.h"

namespace tide::core::memory {

class BuddyAllocator : public PlaceAllocator {
 public:
  struct Options {
    size_t min_block = 256;              // smallest block; a power of two
    size_t initial_chunk = 64ull << 20;  // first arena; later ones at least this big
    size_t max_chunk = 1ull << 30;       // larger requests go straight to the system allocator
    size_t budget = SIZE_MAX;            // most bytes to take from the system allocator
    size_t large_threshold = 0;          // larger requests get their own allocation; 0: max_chunk
    std::string budget_source;           // what set the budget (a flag), named when it runs out
  };

  BuddyAllocator(std::unique_ptr<SystemAllocator> system, Options options, std::string name);
  ~BuddyAllocator() override;

  void* Alloc(size_t size) override;
  void Free(void* ptr) override;
  AllocatorStats Stats() const override;
  // Returns cached large blocks and wholly free arenas to the system allocator.
  void EmptyCache() override;

 private:
  struct Arena;
  static constexpr uint8_t kFree = 0x80;       // state bit: block is free
  static constexpr uint8_t kAllocated = 0x40;  // state bit: block is handed out
  static constexpr uint8_t kCached = 0xC0;     // state bits: block sits in the free cache
  static constexpr uint8_t kOrderMask = 0x3f;
  static constexpr uint32_t kNil = UINT32_MAX;

  void* AllocBlock(int order);
  void* TakeFree(int order);  // from the free lists only
  // Returns every cached block to the free lists, coalescing (before growing or failing).
  void FlushCache();
  Arena* AddArena(int order);
  Arena* FindArena(const void* ptr) const;
  // `over_budget`: the budget refused it (not the system allocator), so its source is named.
  [[noreturn]] void OutOfMemory(size_t size, const char* why, bool over_budget) const;
  static void Push(Arena* a, uint32_t slot, int order);
  // Frees a block into the free lists, coalescing with free buddies.
  void Release(Arena* a, uint32_t slot, int order);
  static void Unlink(Arena* a, uint32_t slot, int order);

  std::unique_ptr<SystemAllocator> system_;
  Options opt_;
  std::string name_;
  int min_shift_;
  mutable SpinLock mu_;
  std::vector<std::unique_ptr<Arena>> arenas_;  // sorted by base address
  void* AllocLarge(size_t size, size_t want);   // under mu_
  void ReleaseCachedLarge();                    // under mu_
  std::unordered_map<void*, size_t> huge_;      // live allocations over large_threshold
  std::multimap<size_t, void*> large_free_;     // freed ones, by size, for reuse
  size_t large_free_bytes_ = 0;
  static constexpr size_t kLargeCacheBytes = size_t(1) << 30;
  std::vector<std::unique_ptr<Arena>>
      retired_;  // arenas given back (lock-free lookups may see them)
  AllocatorStats stats_;
  // Recently freed blocks per order, handed out again without split/coalesce round trips (the
  // common pattern: the same tensor sizes allocated and freed run after run). Bounded.
  static constexpr int kMaxOrders = 48;
  static constexpr size_t kCacheBlocks = 64;       // per order
  static constexpr size_t kCacheBytes = 16 << 20;  // in all
  struct CachedBlock {
    Arena* arena;
    uint32_t slot;
  };
  std::vector<CachedBlock> cache_[kMaxOrders];
  mutable Arena* last_arena_ = nullptr;  // FindArena's first guess
  size_t cache_bytes_ = 0;

 public:
  // A thread's lock-free cache of blocks it freed (small orders only, a few per order). Blocks in
  // it count as free in Stats(). Drained back when the thread exits.
  static constexpr int kThreadOrders = 9;  // min_block << 0 .. << 8 (256 B .. 64 KiB)
  static constexpr int kThreadDepth = 8;
  struct ThreadCache {
    BuddyAllocator* owner = nullptr;
    CachedBlock blocks[kThreadOrders][kThreadDepth];
    uint8_t count[kThreadOrders] = {};
    // Written only by the owning thread; read by Stats() on any thread.
    std::atomic<size_t> bytes{0}, held{0}, allocs{0};
  };
  void DrainThreadCache(ThreadCache* tc);

 private:
  ThreadCache* MyCache();
  void DrainLocked(ThreadCache* tc);  // returns its blocks; the caller holds mu_
  Arena* FindArenaLockFree(const void* ptr) const;
  std::vector<ThreadCache*> thread_caches_;  // registered, under mu_
  static constexpr int kMaxListedArenas = 64;
  std::array<std::atomic<Arena*>, kMaxListedArenas> arena_list_{};  // for lock-free lookups
  std::atomic<int> arena_count_{0};
};

}  // namespace tide::core::memory
