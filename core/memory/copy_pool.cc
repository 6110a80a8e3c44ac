// copy_pool.cc: the copy stream's blocks, each reused once the compute stream passed its free.
#include "core/memory/copy_pool.h"

#include <glog/logging.h>

#include <map>
#include <mutex>
#include <vector>

#include "core/memory/memory.h"

namespace tide::core::memory {
namespace {

// A block and the event the compute stream recorded when it was last freed.
struct Block {
  void* ptr;
  size_t size;
  void* event;
};

class PlacePool {
 public:
  explicit PlacePool(const Place& place) : place_(place) {}

  AllocationPtr Alloc(DeviceContext& compute, DeviceContext& copy, size_t size) {
    size = (std::max<size_t>(size, 1) + 255) / 256 * 256;
    Block b{nullptr, 0, nullptr};
    bool reused = TakeFree(size, &b);
    if (reused) {
      copy.WaitEvent(b.event);  // after the work that used the block before its free
    } else {
      b = {memory::Alloc(place_, size), size, nullptr};
      try {
        b.event = compute.CreateEvent();
        // The place's allocator may hand out memory queued kernels still use: wait for them,
        // once per new block (reused blocks wait for their own free only).
        copy.WaitFor(compute);
      } catch (...) {
        if (b.event) compute.DestroyEvent(b.event);
        memory::Free(place_, b.ptr);
        throw;
      }
    }
    return std::make_shared<Allocation>(b.ptr, b.size, place_, [this, b](void*) { Return(b); });
  }

  // Gives the blocks kept for reuse back (their last users done first: the events are waited);
  // returns how many.
  size_t Empty() {
    std::vector<Block> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(free_);
    }
    Release(blocks);
    return blocks.size();
  }

  void Cached(size_t* bytes, size_t* blocks) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Block& b : free_) *bytes += b.size;
    *blocks += free_.size();
  }

  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    Empty();
  }

 private:
  static constexpr size_t kMaxFree = 16;  // a DataLoader's queue of batches, a few feeds each

  // The smallest free block of [size, 2 size) bytes, most recently freed first among equals.
  bool TakeFree(size_t size, Block* out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->size >= size && it->size < 2 * size &&
          (best == free_.end() || it->size <= best->size))
        best = it;
    if (best == free_.end()) return false;
    *out = *best;
    free_.erase(best);
    return true;
  }

  // A tensor let go of the block: mark where the compute stream is, keep it for the next upload.
  void Return(const Block& b) {
    DeviceContext* compute = DevicesShutDown() ? nullptr : DeviceContextPool::Global().Find(place_);
    bool marked = false;
    if (compute) {
      try {
        compute->RecordEvent(b.event);
        marked = true;
      } catch (const std::exception& e) {
        LOG(WARNING) << "the copy stream's block on " << place_.ToString() << ": " << e.what();
      }
    }
    std::vector<Block> release;
    bool kept = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (marked && !closed_) {
        kept = true;
        free_.push_back(b);
        if (free_.size() > kMaxFree) {
          release.push_back(free_.front());
          free_.erase(free_.begin());
        }
      }
    }
    if (!kept) {
      // Freed in the compute stream's order, as every block of the place's allocator. The event
      // is left to the process's end: after shutdown the device may be finalized.
      memory::Free(place_, b.ptr);
      return;
    }
    Release(release);
  }

  void Release(const std::vector<Block>& blocks) {
    if (blocks.empty()) return;
    DeviceContext* compute = DeviceContextPool::Global().Find(place_);
    for (const Block& b : blocks) {
      if (compute) {  // else the device is shut down: its events go with the process
        try {
          compute->SynchronizeEvent(b.event);
        } catch (const std::exception& e) {
          LOG(WARNING) << "giving back the copy stream's block on " << place_.ToString() << ": "
                       << e.what();
        }
        compute->DestroyEvent(b.event);
      }
      memory::Free(place_, b.ptr);
    }
  }

  const Place place_;
  std::mutex mu_;
  std::vector<Block> free_;  // oldest first
  bool closed_ = false;
};

std::mutex g_pools_mu;
std::map<Place, PlacePool*>& Pools() {
  static auto* pools = new std::map<Place, PlacePool*>;  // never destroyed: blocks outlive exit
  return *pools;
}

PlacePool* FindPool(const Place& place, bool make) {
  std::lock_guard<std::mutex> lock(g_pools_mu);
  PlacePool*& pool = Pools()[place];
  if (!pool && make) pool = new PlacePool(place);
  return pool;
}

}  // namespace

AllocationPtr AllocForCopy(DeviceContext& compute, DeviceContext& copy, size_t size) {
  return FindPool(compute.place(), true)->Alloc(compute, copy, size);
}

size_t EmptyCopyPool(const Place& place) {
  PlacePool* pool = FindPool(place, false);
  return pool ? pool->Empty() : 0;
}

void CopyPoolCached(const Place& place, size_t* bytes, size_t* blocks) {
  *bytes = *blocks = 0;
  if (PlacePool* pool = FindPool(place, false)) pool->Cached(bytes, blocks);
}

void CloseCopyPools() {
  std::vector<PlacePool*> pools;
  {
    std::lock_guard<std::mutex> lock(g_pools_mu);
    for (auto& kv : Pools())
      if (kv.second) pools.push_back(kv.second);
  }
  for (PlacePool* pool : pools) pool->Close();
}

}  // namespace tide::core::memory
