// download_queue.cc: fetched values downloaded on the copy-out stream (see download_queue.h).
#include "core/device/download_queue.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <exception>

namespace tide::core {

void DownloadQueue::Drop() noexcept {
  try {
    Finish();
  } catch (const std::exception& e) {
    LOG(WARNING) << "waiting for the downloads of a run that failed: " << e.what();
  } catch (...) {
    LOG(WARNING) << "waiting for the downloads of a run that failed: unknown error";
  }
}

void DownloadQueue::Land(void* item) {
  auto* it = static_cast<Item*>(item);
  std::memcpy(it->dst, it->pinned, it->size);
  it->landed.store(true, std::memory_order_release);
}

void DownloadQueue::Add(DeviceContext& compute, DeviceContext& copy_out, void* dst, const void* src,
                        size_t size) {
  if (size == 0) return;
  auto item = std::make_unique<Item>();
  item->compute = &compute;
  item->copy_out = &copy_out;
  item->dst = dst;
  item->size = size;
  item->pinned = copy_out.TakePinned(size, &item->pinned_size);
  Item* it = item.get();
  items_.push_back(std::move(item));  // owned before anything is queued: Finish waits for it
  copy_out.WaitFor(compute);          // the values the run computed so far
  copy_out.Copy(TIDE_COPY_DEVICE_TO_HOST, it->pinned ? it->pinned : dst, src, size);
  // Out of pinned memory as soon as it lands where the device can say so; Finish does it else.
  if (it->pinned && copy_out.has_host_func()) copy_out.LaunchHostFunc(&Land, it);
  compute.WaitFor(copy_out);
}

void DownloadQueue::Finish() {
  if (items_.empty()) return;
  std::vector<DeviceContext*> done;
  std::exception_ptr error;
  for (const auto& item : items_) {
    if (std::find(done.begin(), done.end(), item->copy_out) != done.end()) continue;
    done.push_back(item->copy_out);
    try {
      item->copy_out->Synchronize();  // also waits for the host functions queued there
    } catch (...) {
      // A fault of the work the copies waited for fails them too (the device contract): the
      // compute context reports it, naming the last op launched there.
      try {
        item->compute->Synchronize();
        if (!error) error = std::current_exception();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
  }
  for (const auto& item : items_) {
    if (!item->pinned) continue;
    if (!error && !item->landed.load(std::memory_order_acquire))
      std::memcpy(item->dst, item->pinned, item->size);
    item->copy_out->GivePinned(item->pinned, item->pinned_size);
  }
  items_.clear();
  if (error) std::rethrow_exception(error);
}

}  // namespace tide::core
