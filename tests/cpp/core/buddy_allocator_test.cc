// Tests core/memory/buddy_allocator.h over a fake, counting SystemAllocator.
#include "core/memory/buddy_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/platform/enforce.h"

namespace tide::core::memory {
namespace {

using ::testing::HasSubstr;

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

// What the fake system allocator saw; shared with the test, as the allocator owns the fake.
struct SystemLog {
  std::mutex mu;
  size_t allocs = 0, frees = 0;
  size_t bytes_live = 0;
  std::map<void*, size_t> live;  // pointer -> size asked for
  std::vector<size_t> alloc_sizes;
  int bad_frees = 0;  // frees of unknown pointers or with the wrong size
};

class FakeSystemAllocator : public SystemAllocator {
 public:
  FakeSystemAllocator(std::shared_ptr<SystemLog> log, size_t alignment)
      : log_(std::move(log)), alignment_(alignment) {}
  void* Alloc(size_t size) override {
    size_t rounded = (size + alignment_ - 1) / alignment_ * alignment_;
    void* p = std::aligned_alloc(alignment_, rounded);
    if (!p) throw Error(TIDE_RESOURCE_EXHAUSTED, "fake system allocator: no memory");
    std::lock_guard<std::mutex> lock(log_->mu);
    ++log_->allocs;
    log_->bytes_live += size;
    log_->live[p] = size;
    log_->alloc_sizes.push_back(size);
    return p;
  }
  void Free(void* ptr, size_t size) override {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      auto it = log_->live.find(ptr);
      if (it == log_->live.end() || it->second != size) {
        ++log_->bad_frees;
        return;
      }
      ++log_->frees;
      log_->bytes_live -= size;
      log_->live.erase(it);
    }
    std::free(ptr);
  }
  size_t alignment() const override { return alignment_; }

 private:
  std::shared_ptr<SystemLog> log_;
  size_t alignment_;
};

BuddyAllocator::Options SmallOptions() {
  BuddyAllocator::Options o;
  o.min_block = 256;
  o.initial_chunk = 1 * kMiB;
  o.max_chunk = 4 * kMiB;
  return o;
}

struct Fixture {
  std::shared_ptr<SystemLog> log = std::make_shared<SystemLog>();
  std::unique_ptr<BuddyAllocator> alloc;
  explicit Fixture(BuddyAllocator::Options o = SmallOptions(), size_t alignment = 64) {
    alloc = std::make_unique<BuddyAllocator>(std::make_unique<FakeSystemAllocator>(log, alignment),
                                             o, "test_buddy");
  }
  char* FirstArena() const { return static_cast<char*>(log->live.begin()->first); }
};

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(BuddyAllocatorTest, NothingTakenUntilFirstAlloc) {
  Fixture f;
  EXPECT_EQ(f.log->allocs, 0u);
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.arenas, 0u);
  EXPECT_EQ(s.reserved, 0u);
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.budget, SIZE_MAX);
  f.alloc->Free(nullptr);  // a no-op
  EXPECT_EQ(f.alloc->Stats().live_blocks, 0u);
}

TEST(BuddyAllocatorTest, SplitGivesAdjacentBlocksFromOneArena) {
  Fixture f;
  void* a = f.alloc->Alloc(256);
  void* b = f.alloc->Alloc(256);
  ASSERT_EQ(f.log->allocs, 1u);
  EXPECT_EQ(f.log->alloc_sizes[0], 1 * kMiB);
  char* base = f.FirstArena();
  EXPECT_EQ(a, base);  // the lower half is kept at each split
  EXPECT_EQ(b, base + 256);
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.arenas, 1u);
  EXPECT_EQ(s.reserved, 1 * kMiB);
  EXPECT_EQ(s.used, 512u);
  // The next 512 B block is the buddy of the pair just split.
  void* c = f.alloc->Alloc(512);
  EXPECT_EQ(c, base + 512);
  f.alloc->Free(a);
  f.alloc->Free(b);
  f.alloc->Free(c);
}

TEST(BuddyAllocatorTest, FreedBuddiesCoalesceIntoTheWholeArena) {
  Fixture f;
  std::vector<void*> ptrs;
  for (size_t size : {256u, 256u, 1000u, 4096u, 300u, 65536u, 1u, 8192u, 100000u})
    ptrs.push_back(f.alloc->Alloc(size));
  ASSERT_EQ(f.log->allocs, 1u);
  char* base = f.FirstArena();
  // Free in a scrambled order.
  for (size_t i : {3u, 0u, 7u, 8u, 1u, 5u, 2u, 6u, 4u}) f.alloc->Free(ptrs[i]);
  EXPECT_EQ(f.alloc->Stats().used, 0u);
  void* whole = f.alloc->Alloc(1 * kMiB);
  EXPECT_EQ(whole, base);
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(f.log->allocs, 1u);  // no new arena was needed
  EXPECT_EQ(s.arenas, 1u);
  EXPECT_EQ(s.used, 1 * kMiB);
  f.alloc->Free(whole);
}

TEST(BuddyAllocatorTest, AFreeBlockDoesNotMergeWithAnAllocatedBuddy) {
  Fixture f;
  void* a = f.alloc->Alloc(256);
  void* b = f.alloc->Alloc(256);
  f.alloc->Free(a);
  // a's slot is free at order 0 only: a 512 B request must come from elsewhere.
  void* c = f.alloc->Alloc(512);
  EXPECT_NE(c, a);
  EXPECT_TRUE(Addr(c) >= Addr(b) + 256 || Addr(c) + 512 <= Addr(a));
  // And a 256 B request reuses a's slot.
  EXPECT_EQ(f.alloc->Alloc(256), a);
}

TEST(BuddyAllocatorTest, EveryPointerIsAligned) {
  for (size_t alignment : {64u, 512u, 4096u}) {
    Fixture f(SmallOptions(), alignment);
    std::vector<void*> ptrs;
    size_t sizes = 0;
    for (size_t size = 1; size <= 1 * kMiB; size = size * 3 / 2 + 1, ++sizes) {
      void* p = f.alloc->Alloc(size);
      EXPECT_EQ(Addr(p) % alignment, 0u) << "size " << size << " alignment " << alignment;
      ptrs.push_back(p);
    }
    EXPECT_GT(sizes, 30u);
    for (void* p : ptrs) f.alloc->Free(p);
    EXPECT_EQ(f.alloc->Stats().used, 0u);
  }
}

TEST(BuddyAllocatorTest, MinBlockGrowsToTheSystemAlignment) {
  Fixture f(SmallOptions(), 4096);
  f.alloc->Alloc(1);
  EXPECT_EQ(f.alloc->Stats().used, 4096u);
}

TEST(BuddyAllocatorTest, BlocksAreNaturallyAlignedWithinTheirArena) {
  Fixture f;
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t size : {300u, 256u, 5000u, 256u, 70000u, 1024u, 2000u})
    blocks.push_back({f.alloc->Alloc(size), size});
  char* base = f.FirstArena();
  for (auto [p, size] : blocks) {
    size_t granted = 256;
    while (granted < size) granted *= 2;
    EXPECT_EQ((static_cast<char*>(p) - base) % granted, 0) << size;
  }
}

TEST(BuddyAllocatorTest, UsedCountsPowerOfTwoBlocks) {
  Fixture f;
  struct Case {
    size_t ask, granted;
  };
  const std::vector<Case> cases = {{0, 256},     {1, 256},       {256, 256},     {257, 512},
                                   {512, 512},   {513, 1024},    {1000, 1024},   {768, 1024},
                                   {4097, 8192}, {65536, 65536}, {65537, 131072}};
  size_t used = 0;
  std::vector<void*> ptrs;
  for (const auto& c : cases) {
    ptrs.push_back(f.alloc->Alloc(c.ask));
    used += c.granted;
    EXPECT_EQ(f.alloc->Stats().used, used) << "asked for " << c.ask;
  }
  for (size_t i = 0; i < ptrs.size(); ++i) {
    f.alloc->Free(ptrs[i]);
    used -= cases[i].granted;
    EXPECT_EQ(f.alloc->Stats().used, used);
  }
}

TEST(BuddyAllocatorTest, NewArenaWhenTheFirstIsFull) {
  Fixture f;
  void* a = f.alloc->Alloc(1 * kMiB);
  void* b = f.alloc->Alloc(256);
  EXPECT_EQ(f.log->allocs, 2u);
  EXPECT_EQ(f.alloc->Stats().arenas, 2u);
  EXPECT_EQ(f.alloc->Stats().reserved, 2 * kMiB);
  // A request bigger than the initial chunk (but within max_chunk) gets an arena its size.
  void* c = f.alloc->Alloc(3 * kMiB);
  EXPECT_EQ(f.log->allocs, 3u);
  EXPECT_EQ(f.log->alloc_sizes.back(), 4 * kMiB);
  EXPECT_EQ(f.alloc->Stats().used, 1 * kMiB + 256 + 4 * kMiB);
  f.alloc->Free(a);
  f.alloc->Free(b);
  f.alloc->Free(c);
  // Arenas are kept for reuse, not returned.
  EXPECT_EQ(f.log->frees, 0u);
  EXPECT_EQ(f.alloc->Stats().reserved, 6 * kMiB);
  void* d = f.alloc->Alloc(1 * kMiB);
  void* e = f.alloc->Alloc(1 * kMiB);
  EXPECT_EQ(f.log->allocs, 3u);
  f.alloc->Free(d);
  f.alloc->Free(e);
}

TEST(BuddyAllocatorTest, OverBudgetIsResourceExhausted) {
  BuddyAllocator::Options o = SmallOptions();
  o.budget = 512 * kKiB;
  Fixture f(o);
  try {
    f.alloc->Alloc(1 * kMiB);
    FAIL() << "a 1 MiB request under a 512 KiB budget succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_RESOURCE_EXHAUSTED);
    EXPECT_THAT(e.what(), HasSubstr("out of memory"));
    EXPECT_THAT(e.what(), HasSubstr("test_buddy"));
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(1 * kMiB)));
  }
  EXPECT_EQ(f.log->allocs, 0u);
  // A huge request (over max_chunk) checks the budget too.
  try {
    f.alloc->Alloc(8 * kMiB);
    FAIL() << "an 8 MiB request under a 512 KiB budget succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_RESOURCE_EXHAUSTED);
    EXPECT_THAT(e.what(), HasSubstr("out of memory"));
    EXPECT_THAT(e.what(), HasSubstr("over the budget"));
  }
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.reserved, 0u);
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.total_allocs, 0u);
  EXPECT_EQ(s.budget, 512 * kKiB);
}

TEST(BuddyAllocatorTest, AbsurdSizesDoNotWrapAround) {
  BuddyAllocator::Options o = SmallOptions();
  for (size_t budget : {SIZE_MAX, 2 * kMiB}) {
    o.budget = budget;
    Fixture f(o);
    void* small = f.alloc->Alloc(256);  // something reserved already
    ASSERT_EQ(f.log->allocs, 1u);
    for (size_t ask : {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX - 255, SIZE_MAX - 1024}) {
      try {
        f.alloc->Alloc(ask);
        ADD_FAILURE() << "allocated " << ask << " bytes";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), TIDE_RESOURCE_EXHAUSTED) << ask;
        EXPECT_THAT(e.what(), HasSubstr("out of memory")) << ask;
      }
    }
    // None of them reached the system allocator.
    EXPECT_EQ(f.log->allocs, 1u);
    EXPECT_EQ(f.alloc->Stats().live_blocks, 1u);
    EXPECT_EQ(f.alloc->Stats().reserved, 1 * kMiB);
    f.alloc->Free(small);
  }
}

TEST(BuddyAllocatorTest, TightBudgetTakesASmallerArena) {
  BuddyAllocator::Options o = SmallOptions();
  o.budget = 768 * kKiB;
  Fixture f(o);
  // The 1 MiB initial chunk does not fit, an arena of the request's size does.
  void* a = f.alloc->Alloc(512 * kKiB);
  ASSERT_EQ(f.log->allocs, 1u);
  EXPECT_EQ(f.log->alloc_sizes[0], 512 * kKiB);
  void* b = f.alloc->Alloc(200 * kKiB);
  EXPECT_EQ(f.log->alloc_sizes.back(), 256 * kKiB);
  EXPECT_EQ(f.alloc->Stats().reserved, 768 * kKiB);
  // Now the budget is spent.
  try {
    f.alloc->Alloc(1);
    FAIL() << "allocation past the budget succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_RESOURCE_EXHAUSTED);
    EXPECT_THAT(e.what(), HasSubstr("out of memory"));
  }
  // Freeing makes room again, within the arenas already taken.
  f.alloc->Free(b);
  void* c = f.alloc->Alloc(1);
  EXPECT_EQ(f.log->allocs, 2u);
  f.alloc->Free(a);
  f.alloc->Free(c);
  EXPECT_EQ(f.alloc->Stats().used, 0u);
}

TEST(BuddyAllocatorTest, LargeAllocationsGoStraightToTheSystem) {
  Fixture f;
  size_t ask = 5 * kMiB + 1;  // over max_chunk (4 MiB)
  void* p = f.alloc->Alloc(ask);
  ASSERT_EQ(f.log->allocs, 1u);
  // Rounded to 1/16 of the power of two below it (256 KiB), not up to a power of two (8 MiB).
  const size_t granted = 5 * kMiB + 256 * kKiB;
  EXPECT_EQ(f.log->alloc_sizes[0], granted);
  EXPECT_EQ(f.log->live.count(p), 1u);
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.arenas, 0u);
  EXPECT_EQ(s.reserved, granted);
  EXPECT_EQ(s.used, granted);
  EXPECT_EQ(s.live_blocks, 1u);
  std::memset(p, 0xab, ask);  // the whole request is usable

  void* small = f.alloc->Alloc(256);  // arenas are unaffected
  EXPECT_EQ(f.alloc->Stats().arenas, 1u);

  f.alloc->Free(p);  // kept for a like-sized request, not returned yet
  EXPECT_EQ(f.log->frees, 0u);
  s = f.alloc->Stats();
  EXPECT_EQ(s.reserved, 1 * kMiB + granted);
  EXPECT_EQ(s.used, 256u);
  EXPECT_EQ(s.live_blocks, 1u);
  EXPECT_EQ(s.peak_used, granted + 256);

  void* again = f.alloc->Alloc(5 * kMiB);  // about that size: the same block, no system call
  EXPECT_EQ(again, p);
  EXPECT_EQ(f.log->allocs, 2u);  // the block and the first arena
  f.alloc->Free(again);
  f.alloc->Free(small);
  f.alloc->EmptyCache();  // the large block and the now wholly free arena go back
  EXPECT_EQ(f.log->bad_frees, 0);
  EXPECT_TRUE(f.log->live.empty());
  EXPECT_EQ(f.alloc->Stats().reserved, 0u);
  EXPECT_EQ(f.alloc->Stats().arenas, 0u);
  void* after = f.alloc->Alloc(1024);  // and the allocator still works
  f.alloc->Free(after);
}

TEST(BuddyAllocatorTest, AFreedLargeBlockIsNotReusedForAMuchSmallerRequest) {
  Fixture f;
  void* big = f.alloc->Alloc(16 * kMiB);
  f.alloc->Free(big);
  void* smaller = f.alloc->Alloc(12 * kMiB);  // 16 MiB would waste a quarter: a new block
  EXPECT_NE(smaller, big);
  EXPECT_EQ(f.alloc->Stats().reserved, 28 * kMiB);
  f.alloc->Free(smaller);
}

TEST(BuddyAllocatorTest, CachedLargeBlocksMakeRoomWhenTheBudgetIsReached) {
  BuddyAllocator::Options o = SmallOptions();
  o.budget = 24 * kMiB;
  Fixture f(o);
  void* a = f.alloc->Alloc(16 * kMiB);
  f.alloc->Free(a);
  void* b = f.alloc->Alloc(20 * kMiB);  // 16 + 20 > 24: the cached 16 MiB goes back first
  EXPECT_EQ(f.alloc->Stats().reserved, 20 * kMiB);
  f.alloc->Free(b);
}

TEST(BuddyAllocatorTest, BadFreesAreLoggedNotFatal) {
  Fixture f;
  char* a = static_cast<char*>(f.alloc->Alloc(1024));
  char* arena = f.FirstArena();  // the only system allocation yet (later ones may lie below it)
  void* b = f.alloc->Alloc(256);
  void* huge = f.alloc->Alloc(8 * kMiB);
  f.alloc->Free(huge);
  AllocatorStats before = f.alloc->Stats();
  int on_stack = 0;

  testing::internal::CaptureStderr();
  f.alloc->Free(&on_stack);  // never allocated here
  f.alloc->Free(huge);       // a huge block freed twice
  f.alloc->Free(a + 256);    // inside a live block
  f.alloc->Free(a + 1);      // not on a block boundary
  std::string log = testing::internal::GetCapturedStderr();

  EXPECT_THAT(log, HasSubstr("did not allocate"));
  EXPECT_THAT(log, HasSubstr("not a live block"));
  AllocatorStats after = f.alloc->Stats();
  EXPECT_EQ(after.used, before.used);
  EXPECT_EQ(after.live_blocks, before.live_blocks);
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(f.log->bad_frees, 0);  // nothing bad reached the system allocator

  f.alloc->Free(b);
  testing::internal::CaptureStderr();
  f.alloc->Free(b);  // double free of an arena block
  log = testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("double free"));
  EXPECT_EQ(f.alloc->Stats().live_blocks, 1u);
  EXPECT_EQ(f.alloc->Stats().used, 1024u);

  // The allocator is still sound: a is freed once, and the arena coalesces.
  f.alloc->Free(a);
  EXPECT_EQ(f.alloc->Stats().used, 0u);
  EXPECT_EQ(f.alloc->Alloc(1 * kMiB), arena);
}

TEST(BuddyAllocatorTest, Stats) {
  Fixture f;
  void* a = f.alloc->Alloc(1000);  // 1024
  void* b = f.alloc->Alloc(3000);  // 4096
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.used, 5120u);
  EXPECT_EQ(s.peak_used, 5120u);
  EXPECT_EQ(s.reserved, 1 * kMiB);
  EXPECT_EQ(s.live_blocks, 2u);
  EXPECT_EQ(s.total_allocs, 2u);
  EXPECT_EQ(s.arenas, 1u);
  f.alloc->Free(b);
  void* c = f.alloc->Alloc(256);
  s = f.alloc->Stats();
  EXPECT_EQ(s.used, 1280u);
  EXPECT_EQ(s.peak_used, 5120u);  // the peak stays
  EXPECT_EQ(s.live_blocks, 2u);
  EXPECT_EQ(s.total_allocs, 3u);
  std::string text = s.ToString();
  EXPECT_THAT(text, HasSubstr("used 1280 B (peak 5120)"));
  EXPECT_THAT(text, HasSubstr("reserved 1048576 B in 1 arena(s)"));
  EXPECT_THAT(text, HasSubstr("2 live block(s)"));
  f.alloc->Free(a);
  f.alloc->Free(c);
  s = f.alloc->Stats();
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.total_allocs, 3u);
}

TEST(BuddyAllocatorTest, DestructorReturnsEverythingToTheSystem) {
  Fixture f;
  f.alloc->Alloc(100);
  f.alloc->Alloc(2 * kMiB);
  f.alloc->Alloc(6 * kMiB);  // huge
  EXPECT_EQ(f.log->live.size(), 3u);
  testing::internal::CaptureStderr();  // it warns about the live blocks
  f.alloc.reset();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("3 live block(s)"));
  EXPECT_TRUE(f.log->live.empty());
  EXPECT_EQ(f.log->bytes_live, 0u);
  EXPECT_EQ(f.log->frees, 3u);
  EXPECT_EQ(f.log->bad_frees, 0);
}

size_t Granted(size_t ask) {
  size_t g = 256;
  while (g < ask) g *= 2;
  return g;
}

TEST(BuddyAllocatorTest, RandomStress) {
  Fixture f;
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> log_size(0, 16);    // 1 B .. 64 KiB, log-uniform
  std::map<uintptr_t, std::pair<size_t, uint8_t>> live;  // address -> (granted, fill byte)
  size_t used = 0;
  size_t allocs = 0;

  auto free_one = [&](std::map<uintptr_t, std::pair<size_t, uint8_t>>::iterator it) {
    auto* p = reinterpret_cast<uint8_t*>(it->first);
    // Nobody else wrote into this block.
    ASSERT_EQ(p[0], it->second.second);
    ASSERT_EQ(p[it->second.first - 1], it->second.second);
    f.alloc->Free(p);
    used -= it->second.first;
    live.erase(it);
  };

  for (int step = 0; step < 6000; ++step) {
    bool do_alloc = live.empty() || (rng() % 100) < 55;
    if (do_alloc) {
      size_t lo = size_t(1) << log_size(rng);
      size_t ask = lo + rng() % lo;
      if (ask > 64 * kKiB) ask = 64 * kKiB;
      auto* p = static_cast<uint8_t*>(f.alloc->Alloc(ask));
      size_t g = Granted(ask);
      uintptr_t at = Addr(p);
      // No overlap with the neighbours on either side.
      auto next = live.lower_bound(at);
      if (next != live.end()) ASSERT_LE(at + g, next->first) << "step " << step;
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.first, at) << "step " << step;
      }
      uint8_t fill = static_cast<uint8_t>(1 + allocs++ % 255);
      p[0] = fill;
      p[g - 1] = fill;
      live[at] = {g, fill};
      used += g;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      free_one(it);
      if (HasFatalFailure()) return;
    }
    if (step % 500 == 0) {
      AllocatorStats s = f.alloc->Stats();
      ASSERT_EQ(s.used, used);
      ASSERT_EQ(s.live_blocks, live.size());
    }
  }
  EXPECT_EQ(f.alloc->Stats().total_allocs, allocs);
  EXPECT_GE(allocs, 3000u);
  while (!live.empty()) {
    free_one(live.begin());
    if (HasFatalFailure()) return;
  }
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.live_blocks, 0u);
  size_t arenas = f.log->allocs;
  EXPECT_EQ(s.arenas, arenas);
  EXPECT_GE(arenas, 2u);  // the stress spilled past the first arena
  // Everything coalesced: each arena can be handed out whole again, without new system memory.
  std::vector<void*> whole;
  for (size_t i = 0; i < arenas; ++i) whole.push_back(f.alloc->Alloc(1 * kMiB));
  EXPECT_EQ(f.log->allocs, arenas);
  for (void* p : whole) f.alloc->Free(p);
}

TEST(BuddyAllocatorTest, ConcurrentAllocAndFree) {
  Fixture f;
  constexpr int kThreads = 4;
  std::atomic<int> corrupt{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      std::vector<std::pair<uint8_t*, size_t>> mine;
      for (int i = 0; i < 2000; ++i) {
        if (mine.empty() || rng() % 2) {
          size_t ask = 1 + rng() % (16 * kKiB);
          auto* p = static_cast<uint8_t*>(f.alloc->Alloc(ask));
          std::memset(p, t + 1, ask);
          mine.push_back({p, ask});
        } else {
          size_t k = rng() % mine.size();
          auto [p, ask] = mine[k];
          for (size_t j = 0; j < ask; j += 97)
            if (p[j] != t + 1) ++corrupt;
          f.alloc->Free(p);
          mine[k] = mine.back();
          mine.pop_back();
        }
      }
      for (auto [p, ask] : mine) f.alloc->Free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupt.load(), 0);
  EXPECT_EQ(f.alloc->Stats().used, 0u);
  EXPECT_EQ(f.alloc->Stats().live_blocks, 0u);
}

}  // namespace
}  // namespace tide::core::memory

namespace tide::core::memory {
namespace {

// The per-thread cache: blocks a thread frees come back to it without the lock; they count as
// free in Stats(); a thread's exit returns them (they coalesce again); reuse is counted.
TEST(BuddyAllocatorThreadCacheTest, FreedBlocksAreReusedAndDrainedWhenTheThreadExits) {
  Fixture f;
  void* first = nullptr;
  std::thread worker([&] {
    void* a = f.alloc->Alloc(300);  // a 512 B block
    f.alloc->Free(a);
    void* b = f.alloc->Alloc(400);  // the same order: the cached block again
    EXPECT_EQ(a, b);
    first = b;
    AllocatorStats s = f.alloc->Stats();
    EXPECT_EQ(s.used, 512u);
    EXPECT_EQ(s.live_blocks, 1u);
    EXPECT_EQ(s.total_allocs, 2u);
    f.alloc->Free(b);
    s = f.alloc->Stats();
    EXPECT_EQ(s.used, 0u) << "a block in the thread cache is free";
    EXPECT_EQ(s.live_blocks, 0u);
  });
  worker.join();  // its cache is drained: everything coalesces into the whole arena again
  ASSERT_NE(first, nullptr);
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.used, 0u);
  void* whole = f.alloc->Alloc(s.reserved);
  EXPECT_EQ(f.alloc->Stats().arenas, 1u) << "the drained blocks coalesced; no new arena";
  f.alloc->Free(whole);
}

TEST(BuddyAllocatorThreadCacheTest, OwnCachedBlocksCoalesceBeforeTheArenaGrows) {
  Fixture f;
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(f.alloc->Alloc(256));
  for (void* p : blocks) f.alloc->Free(p);  // all into this thread's cache
  void* whole = f.alloc->Alloc(f.alloc->Stats().reserved);
  EXPECT_EQ(f.alloc->Stats().arenas, 1u);
  f.alloc->Free(whole);
}

TEST(BuddyAllocatorThreadCacheTest, BlocksFreedOnAnotherThreadAreAccountedExactly) {
  Fixture f;
  std::vector<void*> blocks;
  for (int i = 0; i < 32; ++i) blocks.push_back(f.alloc->Alloc(1000));
  std::thread freer([&] {
    for (void* p : blocks) f.alloc->Free(p);
  });
  freer.join();
  AllocatorStats s = f.alloc->Stats();
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.live_blocks, 0u);
  EXPECT_EQ(s.total_allocs, 32u);
}

}  // namespace
}  // namespace tide::core::memory
