// allocation.h: a block of memory on a place, shared by the tensors that view it and returned
// to its allocator when the last one lets go.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/platform/place.h"

namespace tide::core {

class Allocation {
 public:
  using Deleter = std::function<void(void*)>;
  Allocation(void* ptr, size_t size, Place place, Deleter deleter)
      : ptr_(ptr),
        size_(size),
        place_(place),
        deleter_(std::move(deleter)),
        version_(NextVersion()) {}
  ~Allocation() {
    if (deleter_) deleter_(ptr_);
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  void* ptr() const { return ptr_; }
  size_t size() const { return size_; }
  const Place& place() const { return place_; }

  // Names the bytes' contents: a number no allocation has had before, renewed by every write the
  // core sees (mutable_data; an op's outputs after its kernel), so a converted copy of the bytes
  // (data_transform.cc) is reused until they change. 0 once the memory is shared where writes go
  // unseen (a numpy view, DLPack): such contents are never cached.
  uint64_t content_version() const {
    return shared_.load(std::memory_order_relaxed) ? 0 : version_.load(std::memory_order_relaxed);
  }
  void Touch() { version_.store(NextVersion(), std::memory_order_relaxed); }
  void MarkShared() { shared_.store(true, std::memory_order_relaxed); }

  // A run's fetched result, handed to the caller instead of a copy (FetchRun): the core never
  // writes these bytes again. A tensor about to write them moves to a copy first
  // (Tensor::mutable_data, raw_mutable_data), and the executor's variables let go of them when
  // the next run starts (Executor::Run), so that run's writers take fresh memory uncopied.
  // Host memory only.
  bool lent() const { return lent_.load(std::memory_order_relaxed); }
  void Lend() { lent_.store(true, std::memory_order_relaxed); }

 private:
  static uint64_t NextVersion() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  void* ptr_;
  size_t size_;
  Place place_;
  Deleter deleter_;
  std::atomic<uint64_t> version_;
  std::atomic<bool> shared_{false};
  std::atomic<bool> lent_{false};
};

using AllocationPtr = std::shared_ptr<Allocation>;

}  // namespace tide::core
