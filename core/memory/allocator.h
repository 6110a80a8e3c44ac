// allocator.h: the interfaces under Alloc/Free: a place's raw system allocator (from its device
// plugin) and the allocator the core puts over it.
#pragma once

#include <cstddef>
#include <string>

namespace tide::core::memory {

// Raw memory of one device, as the device plugin gives it. Alloc throws Error on failure.
class SystemAllocator {
 public:
  virtual ~SystemAllocator() = default;
  virtual void* Alloc(size_t size) = 0;
  virtual void Free(void* ptr, size_t size) = 0;
  virtual size_t alignment() const = 0;
};

struct AllocatorStats {
  size_t used = 0;  // bytes handed out (rounded up to blocks)
  size_t peak_used = 0;
  size_t reserved = 0;     // bytes taken from the system allocator
  size_t budget = 0;       // the most it may take
  size_t live_blocks = 0;  // allocations not yet freed
  size_t total_allocs = 0;
  size_t arenas = 0;
  std::string ToString() const;
};

class PlaceAllocator {
 public:
  virtual ~PlaceAllocator() = default;
  virtual void* Alloc(size_t size) = 0;  // throws Error(RESOURCE_EXHAUSTED) when out of memory
  virtual void Free(void* ptr) = 0;
  virtual AllocatorStats Stats() const = 0;
  // Gives memory held for reuse but not in use back to the device.
  virtual void EmptyCache() {}
};

}  // namespace tide::core::memory
