// memory.cc: one allocator per place, made on first use from the place's device plugin.
#include "core/memory/memory.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "core/device/device_context.h"
#include "core/memory/buddy_allocator.h"
#include "core/memory/copy_pool.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"

namespace tide::core::memory {
namespace {

// A device's raw memory through its plugin's alloc/free.
class DeviceSystemAllocator : public SystemAllocator {
 public:
  DeviceSystemAllocator(const DeviceInfo& dev, const Place& place) : dev_(dev), place_(place) {}
  void* Alloc(size_t size) override {
    // No real allocation is this large; a plugin rounding it up to its alignment would wrap.
    if (size > static_cast<size_t>(PTRDIFF_MAX))
      TIDE_FAIL(TIDE_RESOURCE_EXHAUSTED, "cannot allocate ", size, " bytes on ", place_.ToString(),
                ": larger than any allocation");
    void* p = nullptr;
    CallPlugin([&] { return dev_.def.alloc(dev_.def.self, place_.device, size, &p); },
               [&] { return StrCat("allocating ", size, " bytes on ", place_.ToString()); },
               dev_.plugin_file);
    if (!p)
      TIDE_FAIL(TIDE_RESOURCE_EXHAUSTED, "device plugin ", dev_.plugin_file,
                " returned no memory for ", size, " bytes on ", place_.ToString());
    return p;
  }
  void Free(void* ptr, size_t size) override { FreeDeviceMemory(dev_, place_, ptr, size); }
  size_t alignment() const override { return dev_.def.alignment ? dev_.def.alignment : 64; }

 private:
  const DeviceInfo& dev_;
  Place place_;
};

// --use_system_allocator: every allocation goes to the device, so sanitizers see each one.
class PassThroughAllocator : public PlaceAllocator {
 public:
  explicit PassThroughAllocator(std::unique_ptr<SystemAllocator> sys) : sys_(std::move(sys)) {}
  void* Alloc(size_t size) override {
    size_t n = std::max<size_t>(size, 1);
    void* p = sys_->Alloc(n);
    std::lock_guard<std::mutex> lock(mu_);
    sizes_[p] = n;
    stats_.used += n;
    stats_.reserved += n;
    stats_.peak_used = std::max(stats_.peak_used, stats_.used);
    ++stats_.live_blocks;
    ++stats_.total_allocs;
    return p;
  }
  void Free(void* ptr) override {
    if (!ptr) return;
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sizes_.find(ptr);
      if (it == sizes_.end()) {
        LOG(ERROR) << "Free of " << ptr << ", which this allocator did not allocate";
        return;
      }
      n = it->second;
      sizes_.erase(it);
      stats_.used -= n;
      stats_.reserved -= n;
      --stats_.live_blocks;
    }
    sys_->Free(ptr, n);
  }
  AllocatorStats Stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  std::unique_ptr<SystemAllocator> sys_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  AllocatorStats stats_;
};

std::unique_ptr<PlaceAllocator> MakeAllocator(const Place& place) {
  const DeviceInfo& dev = CheckedDevice(place);
  auto sys = std::make_unique<DeviceSystemAllocator>(dev, place);
  if (FLAGS_use_system_allocator) return std::make_unique<PassThroughAllocator>(std::move(sys));

  const std::string& kind = place.kind_name();
  for (const char* f : {"fraction_of_", "initial_"})
    MarkFlagConsumed(
        f + kind + (f[0] == 'f' ? "_memory_to_use" : "_memory_in_mb"),
        "the " + kind + " allocator, made at the first allocation on " + place.ToString());
  double fraction = DoubleFlagOr("fraction_of_" + kind + "_memory_to_use", 1.0);
  TIDE_ENFORCE(fraction > 0 && fraction <= 1, "fraction_of_", kind, "_memory_to_use is ", fraction,
               "; it must be in (0, 1]");
  size_t total = 0, available = 0;
  if (dev.def.memory_info)
    CallPlugin([&] { return dev.def.memory_info(dev.def.self, place.device, &total, &available); },
               "reading the memory size of " + place.ToString(), dev.plugin_file);
  BuddyAllocator::Options opt;
  if (total) {
    opt.budget = static_cast<size_t>(fraction * double(total));
    opt.budget_source = StrCat(opt.budget, " B: fraction_of_", kind, "_memory_to_use=", fraction,
                               " of ", total, " B on ", place.ToString());
  }
  const uint64_t initial_mb = Uint64FlagOr("initial_" + kind + "_memory_in_mb", 64);
  TIDE_ENFORCE(initial_mb <= (SIZE_MAX >> 20), "initial_", kind, "_memory_in_mb is ", initial_mb,
               ", more than the address space");
  opt.initial_chunk = static_cast<size_t>(initial_mb) << 20;
  opt.initial_chunk = std::min(opt.initial_chunk, opt.budget);
  opt.max_chunk =
      std::max<size_t>(opt.initial_chunk, std::min<size_t>(opt.budget, size_t(1) << 30));
  opt.large_threshold = size_t(1) << 20;  // bigger tensors get their own, unrounded, allocation
  return std::make_unique<BuddyAllocator>(std::move(sys), opt, place.ToString());
}

// Allocators by place; small kind/device ids (all real ones) are found without a lock.
class AllocatorTable {
 public:
  // At shutdown (before the devices' finalize) every pool gives back what no tensor holds, and
  // from then on gives back each block as it is freed: a device sees every block it lent freed.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_.store(true);
    for (auto& kv : table_) kv.second->EmptyCache();
  }
  bool closed() const { return closed_.load(std::memory_order_relaxed); }

  PlaceAllocator& Get(const Place& place) {
    const bool fast =
        place.kind >= 0 && place.kind < kKinds && place.device >= 0 && place.device < kDevices;
    const size_t i = fast ? size_t(place.kind) * kDevices + size_t(place.device) : 0;
    if (fast)
      if (PlaceAllocator* a = fast_[i].load(std::memory_order_acquire)) return *a;
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = table_[place];
    if (!slot) slot = MakeAllocator(place);
    if (fast) fast_[i].store(slot.get(), std::memory_order_release);
    return *slot;
  }

 private:
  static constexpr int kKinds = 32, kDevices = 16;
  std::mutex mu_;
  std::map<Place, std::unique_ptr<PlaceAllocator>> table_;
  std::array<std::atomic<PlaceAllocator*>, kKinds * kDevices> fast_{};
  std::atomic<bool> closed_{false};
};

AllocatorTable& Table() {
  static auto* t = [] {
    AddDeviceShutdownHook([] {
      CloseCopyPools();  // their blocks are the allocators' own
      Table().Close();
    });
    return new AllocatorTable;  // never destroyed: tensors may be freed during exit
  }();
  return *t;
}

void FreeInto(PlaceAllocator& a, void* ptr) {
  a.Free(ptr);
  if (Table().closed()) a.EmptyCache();  // exiting: nothing will reuse it
}

// Out of memory: the copy stream's cached blocks go back first, then one more try.
void* AllocOrFlush(PlaceAllocator& a, const Place& place, size_t size) {
  try {
    return a.Alloc(size);
  } catch (const Error& e) {
    if (e.code() != TIDE_RESOURCE_EXHAUSTED || EmptyCopyPool(place) == 0) throw;
    return a.Alloc(size);
  }
}

}  // namespace

void* Alloc(const Place& place, size_t size) {
  return AllocOrFlush(Table().Get(place), place, size);
}
void Free(const Place& place, void* ptr) { FreeInto(Table().Get(place), ptr); }
size_t Used(const Place& place) { return Stats(place).used; }
AllocatorStats Stats(const Place& place) {
  AllocatorStats s = Table().Get(place).Stats();
  // The copy stream's cached blocks are held for reuse, in no tensor: reserved, not used.
  size_t cached = 0, blocks = 0;
  CopyPoolCached(place, &cached, &blocks);
  s.used -= std::min(s.used, cached);
  s.live_blocks -= std::min(s.live_blocks, blocks);
  return s;
}
void EmptyCache(const Place& place) {
  EmptyCopyPool(place);
  Table().Get(place).EmptyCache();
}

AllocationPtr AllocShared(const Place& place, size_t size) {
  PlaceAllocator* a = &Table().Get(place);
  void* p = AllocOrFlush(*a, place, size);
  return std::make_shared<Allocation>(p, size, place, [a](void* ptr) { FreeInto(*a, ptr); });
}

}  // namespace tide::core::memory
