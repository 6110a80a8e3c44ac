// spin_lock.h: a lock for critical sections of a few dozen instructions (the allocator's), which
// a std::mutex's two atomic read-modify-writes would dominate. Yields when contended.
#pragma once

#include <atomic>
#include <thread>

namespace tide::core {

class SpinLock {
 public:
  void lock() {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace tide::core
