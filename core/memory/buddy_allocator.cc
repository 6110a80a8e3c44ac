// buddy_allocator.cc: block split/coalesce over out-of-band per-slot state and free lists.
#include "core/memory/buddy_allocator.h"

#include <glog/logging.h>

#include <algorithm>

#include "core/platform/enforce.h"

namespace tide::core::memory {
namespace {
int CeilLog2(uint64_t x) { return x <= 1 ? 0 : 64 - __builtin_clzll(x - 1); }

// Per-slot state is read and written with relaxed atomics: a block a thread owns has its state
// byte changed by that thread without the lock (thread cache), beside bytes others change.
inline uint8_t LoadState(const std::vector<uint8_t>& st, size_t slot) {
  return __atomic_load_n(&st[slot], __ATOMIC_RELAXED);
}
inline void StoreState(std::vector<uint8_t>& st, size_t slot, uint8_t v) {
  __atomic_store_n(&st[slot], v, __ATOMIC_RELAXED);
}

// This thread's caches, one per allocator it uses (few); drained when the thread exits.
struct ThreadCaches {
  static constexpr int kSlots = 4;
  BuddyAllocator::ThreadCache* slots[kSlots] = {};
  ~ThreadCaches() {
    for (auto*& c : slots)
      if (c) {
        if (c->owner) c->owner->DrainThreadCache(c);
        delete c;
        // exit() runs the main thread's TLS destructors before the atexit handlers, and one of
        // those (ShutdownDevices -> EmptyCache) looks at this thread's slots again.
        c = nullptr;
      }
  }
};
// initial-exec: one fs-relative load instead of a __tls_get_addr call (32 bytes fit glibc's
// static TLS reserve, also when the core is loaded by dlopen, e.g. under Python).
thread_local ThreadCaches t_caches __attribute__((tls_model("initial-exec")));
bool IsPow2(uint64_t x) { return x && !(x & (x - 1)); }
}  // namespace

std::string AllocatorStats::ToString() const {
  return StrCat("used ", used, " B (peak ", peak_used, "), reserved ", reserved, " B in ", arenas,
                " arena(s) of a ", budget, " B budget, ", live_blocks, " live block(s)");
}

// One chunk from the system allocator, split into 2^max_order min-blocks.
struct BuddyAllocator::Arena {
  char* base;
  size_t size;
  int max_order;
  std::vector<uint8_t> state;        // per slot; meaningful at the first slot of each block
  std::vector<uint32_t> next, prev;  // free-list links per slot
  std::vector<uint32_t> head;        // free-list head per order
  uint64_t nonempty = 0;             // bit k: head[k] has a block
};

BuddyAllocator::BuddyAllocator(std::unique_ptr<SystemAllocator> system, Options options,
                               std::string name)
    : system_(std::move(system)), opt_(options), name_(std::move(name)) {
  TIDE_ENFORCE(IsPow2(opt_.min_block), "min_block must be a power of two");
  opt_.min_block = std::max(opt_.min_block, system_->alignment());
  min_shift_ = CeilLog2(opt_.min_block);
  opt_.initial_chunk = size_t(1) << CeilLog2(std::max(opt_.initial_chunk, opt_.min_block));
  opt_.max_chunk = std::max(opt_.initial_chunk, size_t(1) << CeilLog2(opt_.max_chunk));
  if (!opt_.large_threshold || opt_.large_threshold > opt_.max_chunk)
    opt_.large_threshold = opt_.max_chunk;
  stats_.budget = opt_.budget;
  for (auto& c : cache_) c.reserve(kCacheBlocks);  // no heap traffic on the hot path
}

BuddyAllocator::~BuddyAllocator() {
  for (ThreadCache* tc : thread_caches_) {  // their blocks go with the arenas
    stats_.live_blocks -= tc->held.load();
    tc->owner = nullptr;
  }
  if (stats_.live_blocks)
    LOG(WARNING) << name_ << ": destroyed with " << stats_.live_blocks << " live block(s)";
  for (auto& a : arenas_) system_->Free(a->base, a->size);
  for (auto& kv : huge_) system_->Free(kv.first, kv.second);
  for (auto& kv : large_free_) system_->Free(kv.second, kv.first);
}

void BuddyAllocator::Push(Arena* a, uint32_t slot, int order) {
  StoreState(a->state, slot, kFree | static_cast<uint8_t>(order));
  a->prev[slot] = kNil;
  a->next[slot] = a->head[order];
  if (a->head[order] != kNil) a->prev[a->head[order]] = slot;
  a->head[order] = slot;
  a->nonempty |= uint64_t(1) << order;
}

void BuddyAllocator::Unlink(Arena* a, uint32_t slot, int order) {
  uint32_t p = a->prev[slot], n = a->next[slot];
  if (p != kNil)
    a->next[p] = n;
  else
    a->head[order] = n;
  if (n != kNil) a->prev[n] = p;
  if (a->head[order] == kNil) a->nonempty &= ~(uint64_t(1) << order);
}

void BuddyAllocator::OutOfMemory(size_t size, const char* why, bool over_budget) const {
  TIDE_FAIL(
      TIDE_RESOURCE_EXHAUSTED, "out of memory on ", name_, ": asked for ", size, " bytes (", why,
      "); ", stats_.ToString(),
      over_budget && !opt_.budget_source.empty()
          ? StrCat("; the budget is ", opt_.budget_source, " (raise it if the memory is there)")
          : "");
}

BuddyAllocator::Arena* BuddyAllocator::AddArena(int order) {
  size_t size = std::max(opt_.initial_chunk, opt_.min_block << order);
  if (stats_.reserved + size > opt_.budget) {
    // A smaller arena that still fits the request, if the budget allows one.
    size = opt_.min_block << order;
    if (stats_.reserved + size > opt_.budget) return nullptr;
  }
  void* base = system_->Alloc(size);
  auto a = std::make_unique<Arena>();
  a->base = static_cast<char*>(base);
  a->size = size;
  a->max_order = CeilLog2(size >> min_shift_);
  size_t slots = size >> min_shift_;
  a->state.assign(slots, 0);
  a->next.assign(slots, kNil);
  a->prev.assign(slots, kNil);
  a->head.assign(a->max_order + 1, kNil);
  Push(a.get(), 0, a->max_order);
  stats_.reserved += size;
  Arena* raw = a.get();
  auto pos = std::upper_bound(
      arenas_.begin(), arenas_.end(), raw,
      [](const Arena* x, const std::unique_ptr<Arena>& y) { return x->base < y->base; });
  arenas_.insert(pos, std::move(a));
  stats_.arenas = arenas_.size();
  int n = arena_count_.load(std::memory_order_relaxed);
  if (n < kMaxListedArenas) {  // beyond that, frees of its blocks take the lock
    arena_list_[n].store(raw, std::memory_order_release);
    arena_count_.store(n + 1, std::memory_order_release);
  }
  return raw;
}

void* BuddyAllocator::TakeFree(int order) {
  for (auto& ap : arenas_) {
    Arena* a = ap.get();
    if (order > a->max_order) continue;
    uint64_t avail = a->nonempty >> order;
    if (!avail) continue;
    int k = order + __builtin_ctzll(avail);
    uint32_t slot = a->head[k];
    Unlink(a, slot, k);
    while (k > order) {  // split, keeping the lower half
      --k;
      Push(a, slot + (uint32_t(1) << k), k);
    }
    StoreState(a->state, slot, kAllocated | static_cast<uint8_t>(order));
    return a->base + (size_t(slot) << min_shift_);
  }
  return nullptr;
}

void* BuddyAllocator::AllocBlock(int order) {
  if (void* p = TakeFree(order)) return p;
  // Cached blocks (the shared cache, this thread's) may coalesce into what is needed: before
  // taking a new arena.
  ThreadCache* mine = nullptr;
  for (ThreadCache* c : t_caches.slots)
    if (c && c->owner == this) mine = c;
  if (cache_bytes_ || (mine && mine->held.load(std::memory_order_relaxed))) {
    FlushCache();
    if (mine) DrainLocked(mine);
    if (void* p = TakeFree(order)) return p;
  }
  if (!AddArena(order)) return nullptr;
  return TakeFree(order);
}

void* BuddyAllocator::Alloc(size_t size) {
  size_t want = std::max<size_t>(size, 1);
  if (want <= (opt_.min_block << (kThreadOrders - 1))) {  // this thread's cache, no lock
    int order = CeilLog2((want + opt_.min_block - 1) >> min_shift_);
    ThreadCache* tc = MyCache();
    if (tc && tc->count[order]) {
      CachedBlock b = tc->blocks[order][--tc->count[order]];
      StoreState(b.arena->state, b.slot, kAllocated | static_cast<uint8_t>(order));
      tc->bytes.store(tc->bytes.load(std::memory_order_relaxed) - (opt_.min_block << order),
                      std::memory_order_relaxed);
      tc->held.store(tc->held.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      tc->allocs.store(tc->allocs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return b.arena->base + (size_t(b.slot) << min_shift_);
    }
  }
  std::lock_guard<SpinLock> lock(mu_);
  void* p = nullptr;
  size_t granted = 0;
  if (want > opt_.large_threshold) {
    p = AllocLarge(size, want);
    granted = huge_[p];
  } else {
    int order = CeilLog2((want + opt_.min_block - 1) >> min_shift_);
    granted = opt_.min_block << order;
    if (order < kMaxOrders && !cache_[order].empty()) {
      CachedBlock b = cache_[order].back();
      cache_[order].pop_back();
      cache_bytes_ -= granted;
      StoreState(b.arena->state, b.slot, kAllocated | static_cast<uint8_t>(order));
      p = b.arena->base + (size_t(b.slot) << min_shift_);
    } else {
      p = AllocBlock(order);
      if (!p) OutOfMemory(size, "no free block and the budget allows no new arena", true);
    }
  }
  stats_.used += granted;
  size_t in_thread_caches = 0;  // counted in stats_.used, but free
  for (const ThreadCache* tc : thread_caches_)
    in_thread_caches += tc->bytes.load(std::memory_order_relaxed);
  stats_.peak_used = std::max(stats_.peak_used, stats_.used - in_thread_caches);
  ++stats_.live_blocks;
  ++stats_.total_allocs;
  return p;
}

void* BuddyAllocator::AllocLarge(size_t size, size_t want) {
  // Rounding up must not wrap around, nor the budget sum overflow (reserved <= budget).
  if (want > SIZE_MAX / 2) OutOfMemory(size, "larger than any allocation", false);
  size_t granule = std::max(opt_.min_block, (size_t(1) << (CeilLog2(want + 1) - 1)) >> 4);
  size_t granted = (want + granule - 1) / granule * granule;
  // A freed block of about this size (at most 1/8 bigger) is reused.
  auto it = large_free_.lower_bound(granted);
  if (it != large_free_.end() && it->first - granted <= granted / 8) {
    void* p = it->second;
    huge_[p] = it->first;
    large_free_bytes_ -= it->first;
    large_free_.erase(it);
    return p;
  }
  if (granted > opt_.budget - stats_.reserved) ReleaseCachedLarge();
  if (granted > opt_.budget - stats_.reserved) OutOfMemory(size, "over the budget", true);
  void* p = nullptr;
  try {
    p = system_->Alloc(granted);
  } catch (const Error&) {
    if (large_free_.empty()) throw;
    ReleaseCachedLarge();  // the device's own memory may be what ran out
    p = system_->Alloc(granted);
  }
  huge_[p] = granted;
  stats_.reserved += granted;
  return p;
}

void BuddyAllocator::ReleaseCachedLarge() {
  for (auto& kv : large_free_) {
    system_->Free(kv.second, kv.first);
    stats_.reserved -= kv.first;
  }
  large_free_.clear();
  large_free_bytes_ = 0;
}

void BuddyAllocator::EmptyCache() {
  for (ThreadCache* c : t_caches.slots)  // this thread's cached blocks first
    if (c && c->owner == this) DrainThreadCache(c);
  std::lock_guard<SpinLock> lock(mu_);
  FlushCache();
  ReleaseCachedLarge();
  // A wholly free arena is one free block of its top order. Its memory goes back; the Arena
  // stays allocated (retired, empty) since lock-free lookups may still read it.
  for (auto it = arenas_.begin(); it != arenas_.end();) {
    Arena* a = it->get();
    if (LoadState(a->state, 0) != (kFree | static_cast<uint8_t>(a->max_order))) {
      ++it;
      continue;
    }
    system_->Free(a->base, a->size);
    stats_.reserved -= a->size;
    a->size = 0;
    retired_.push_back(std::move(*it));
    it = arenas_.erase(it);
  }
  stats_.arenas = arenas_.size();
  last_arena_ = nullptr;
}

BuddyAllocator::Arena* BuddyAllocator::FindArena(const void* ptr) const {
  const char* p = static_cast<const char*>(ptr);
  if (last_arena_ && p >= last_arena_->base && p < last_arena_->base + last_arena_->size)
    return last_arena_;
  auto it =
      std::upper_bound(arenas_.begin(), arenas_.end(), ptr,
                       [](const void* p, const std::unique_ptr<Arena>& a) { return p < a->base; });
  if (it == arenas_.begin()) return nullptr;
  Arena* a = (it - 1)->get();
  if (p >= a->base + a->size) return nullptr;
  last_arena_ = a;
  return a;
}

void BuddyAllocator::Free(void* ptr) {
  if (!ptr) return;
  if (Arena* a = FindArenaLockFree(ptr)) {  // into this thread's cache, no lock
    size_t offset = static_cast<size_t>(static_cast<char*>(ptr) - a->base);
    uint32_t slot = static_cast<uint32_t>(offset >> min_shift_);
    uint8_t state = LoadState(a->state, slot);
    int order = state & kOrderMask;
    ThreadCache* tc = nullptr;
    if (!(offset & (opt_.min_block - 1)) && (state & ~kOrderMask) == kAllocated &&
        order < kThreadOrders && (tc = MyCache()) && tc->count[order] < kThreadDepth) {
      StoreState(a->state, slot, kCached | static_cast<uint8_t>(order));
      tc->blocks[order][tc->count[order]++] = {a, slot};
      tc->bytes.store(tc->bytes.load(std::memory_order_relaxed) + (opt_.min_block << order),
                      std::memory_order_relaxed);
      tc->held.store(tc->held.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
  }
  std::lock_guard<SpinLock> lock(mu_);
  Arena* a = FindArena(ptr);
  if (!a) {
    auto it = huge_.find(ptr);
    if (it == huge_.end()) {
      LOG(ERROR) << name_ << ": Free of " << ptr << ", which this allocator did not allocate";
      return;
    }
    stats_.used -= it->second;
    --stats_.live_blocks;
    if (large_free_bytes_ + it->second <= kLargeCacheBytes) {  // kept for a like-sized request
      large_free_.emplace(it->second, ptr);
      large_free_bytes_ += it->second;
    } else {
      system_->Free(ptr, it->second);
      stats_.reserved -= it->second;
    }
    huge_.erase(it);
    return;
  }
  size_t offset = static_cast<size_t>(static_cast<char*>(ptr) - a->base);
  uint32_t slot = static_cast<uint32_t>(offset >> min_shift_);
  const uint8_t state = LoadState(a->state, slot);
  if ((offset & (opt_.min_block - 1)) || (state & ~kOrderMask) != kAllocated) {
    LOG(ERROR) << name_ << ": Free of " << ptr << ", which is not a live block (double free?)";
    return;
  }
  int order = state & kOrderMask;
  size_t bytes = opt_.min_block << order;
  stats_.used -= bytes;
  --stats_.live_blocks;
  if (order < kMaxOrders && cache_[order].size() < kCacheBlocks &&
      cache_bytes_ + bytes <= kCacheBytes) {
    StoreState(a->state, slot, kCached | static_cast<uint8_t>(order));
    cache_[order].push_back({a, slot});
    cache_bytes_ += bytes;
    return;
  }
  StoreState(a->state, slot, 0);
  Release(a, slot, order);
}

void BuddyAllocator::Release(Arena* a, uint32_t slot, int order) {
  while (order < a->max_order) {  // coalesce with free buddies
    uint32_t buddy = slot ^ (uint32_t(1) << order);
    if (LoadState(a->state, buddy) != (kFree | order)) break;
    Unlink(a, buddy, order);
    StoreState(a->state, buddy, 0);
    slot = std::min(slot, buddy);
    ++order;
  }
  Push(a, slot, order);
}

void BuddyAllocator::FlushCache() {
  for (int order = 0; order < kMaxOrders; ++order) {
    for (const CachedBlock& b : cache_[order]) {
      StoreState(b.arena->state, b.slot, 0);
      Release(b.arena, b.slot, order);
    }
    cache_[order].clear();
  }
  cache_bytes_ = 0;
}

AllocatorStats BuddyAllocator::Stats() const {
  std::lock_guard<SpinLock> lock(mu_);
  AllocatorStats s = stats_;
  for (const ThreadCache* tc : thread_caches_) {  // cached blocks are free; their reuses count
    s.used -= tc->bytes.load(std::memory_order_relaxed);
    s.live_blocks -= tc->held.load(std::memory_order_relaxed);
    s.total_allocs += tc->allocs.load(std::memory_order_relaxed);
  }
  return s;
}

BuddyAllocator::ThreadCache* BuddyAllocator::MyCache() {
  ThreadCaches& mine = t_caches;
  ThreadCache** spare = nullptr;
  for (auto& c : mine.slots) {
    if (c && c->owner == this) return c;
    if (!spare && (!c || !c->owner)) spare = &c;
  }
  if (!spare) return nullptr;  // this thread uses too many allocators: the locked path serves it
  if (!*spare) *spare = new ThreadCache;
  ThreadCache* tc = *spare;
  std::fill(std::begin(tc->count), std::end(tc->count), 0);
  tc->bytes = tc->held = tc->allocs = 0;
  std::lock_guard<SpinLock> lock(mu_);
  tc->owner = this;
  thread_caches_.push_back(tc);
  return tc;
}

void BuddyAllocator::DrainLocked(ThreadCache* tc) {
  for (int order = 0; order < kThreadOrders; ++order) {
    for (int i = 0; i < tc->count[order]; ++i) {
      const CachedBlock& b = tc->blocks[order][i];
      StoreState(b.arena->state, b.slot, 0);
      Release(b.arena, b.slot, order);
    }
    tc->count[order] = 0;
  }
  stats_.used -= tc->bytes.exchange(0);
  stats_.live_blocks -= tc->held.exchange(0);
  stats_.total_allocs += tc->allocs.exchange(0);
}

void BuddyAllocator::DrainThreadCache(ThreadCache* tc) {
  std::lock_guard<SpinLock> lock(mu_);
  DrainLocked(tc);
  thread_caches_.erase(std::remove(thread_caches_.begin(), thread_caches_.end(), tc),
                       thread_caches_.end());
  tc->owner = nullptr;
}

BuddyAllocator::Arena* BuddyAllocator::FindArenaLockFree(const void* ptr) const {
  const char* p = static_cast<const char*>(ptr);
  for (int i = 0, n = arena_count_.load(std::memory_order_acquire); i < n; ++i) {
    Arena* a = arena_list_[i].load(std::memory_order_acquire);
    if (p >= a->base && p < a->base + a->size) return a;
  }
  return nullptr;
}

}  // namespace tide::core::memory
