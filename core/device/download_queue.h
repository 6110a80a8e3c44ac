// download_queue.h: a run's device-to-host copies of the values it fetches, queued on their
// place's copy-out stream (TIDE_STREAM_COPY_OUT), so that the host waits for those copies and not
// for the work the run queued after them (a training step's backward and optimizer ops).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/device/device_context.h"

namespace tide::core {

class DownloadQueue {
 public:
  DownloadQueue() = default;
  DownloadQueue(const DownloadQueue&) = delete;
  DownloadQueue& operator=(const DownloadQueue&) = delete;
  ~DownloadQueue() { Drop(); }

  // Queues a copy of `size` bytes at `src` (device memory of `compute`'s place, written by the
  // work queued on `compute` so far) to `dst` (host memory that stays alive and unread until
  // Finish). On `copy_out` (compute.ForRole(TIDE_STREAM_COPY_OUT), a context of its own), through
  // pinned memory where the device has it; work queued on `compute` from now on waits for the
  // copy, on the device (a later op may write the bytes).
  void Add(DeviceContext& compute, DeviceContext& copy_out, void* dst, const void* src,
           size_t size);
  // Waits for the queued copies: their bytes are at their destinations when it returns.
  void Finish();
  // Finish for a run that failed: errors are logged, not thrown.
  void Drop() noexcept;

 private:
  struct Item {
    DeviceContext* compute;
    DeviceContext* copy_out;
    void* pinned;  // null: copied straight to dst
    size_t pinned_size;
    void* dst;
    size_t size;
    std::atomic<bool> landed{false};  // the host function moved it to dst
  };
  static void Land(void* item);  // the host function: pinned -> dst
  std::vector<std::unique_ptr<Item>> items_;
};

}  // namespace tide::core
