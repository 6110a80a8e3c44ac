// allocation.h: a block of memory on a place, shared by the tensors that view it and returned
// to its allocator when the last one lets go.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "core/platform/place.h"

namespace tide::core {

class Allocation {
 public:
  using Deleter = std::function<void(void*)>;
  Allocation(void* ptr, size_t size, Place place, Deleter deleter)
      : ptr_(ptr), size_(size), place_(place), deleter_(std::move(deleter)) {}
  ~Allocation() {
    if (deleter_) deleter_(ptr_);
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  void* ptr() const { return ptr_; }
  size_t size() const { return size_; }
  const Place& place() const { return place_; }

 private:
  void* ptr_;
  size_t size_;
  Place place_;
  Deleter deleter_;
};

using AllocationPtr = std::shared_ptr<Allocation>;

}  // namespace tide::core
