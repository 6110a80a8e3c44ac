// tensor_util.h: copies between places through the device plugins' copy functions.
#pragma once

#include "core/device/device_context.h"
#include "core/device/download_queue.h"
#include "core/framework/tensor.h"

namespace tide::core {

// Deep-copies src (data, dims, dtype, layout, LoD) into dst on `place`, done as far as any later
// reader can tell: host memory is written when it returns; device memory is written in its
// context's stream order, ahead of anything queued there later (the core synchronises a context
// before the host reads its memory), so copies to a device do not make the host wait.
// `ctx` (may be null) is used when it belongs to the device that does the copy.
void TensorCopySync(const LoDTensor& src, const Place& place, LoDTensor* dst,
                    DeviceContext* ctx = nullptr);

// TensorCopySync for a tensor that arrives on a device (a feed, a DataLoader's batch): from the
// host to a place whose device has a copy stream (DeviceContext::ForRole), the copy goes on that
// stream, into new memory (dst gets its own block: the one it held may still be read by queued
// kernels), and the place's compute stream waits for it with an event, so the copy overlaps the
// kernels queued before it. Otherwise exactly TensorCopySync.
void TensorUpload(const LoDTensor& src, const Place& place, LoDTensor* dst,
                  DeviceContext* ctx = nullptr);

// TensorCopySync to the host for a value a run fetches: from a place whose device has a copy-out
// stream (DeviceContext::ForRole), the copy is queued there after the work queued so far on the
// place's compute stream, and is in `dst` once `queue` finished; the compute stream's later work
// waits for it on the device, not the host. Otherwise exactly TensorCopySync (in dst on return).
void TensorDownload(const LoDTensor& src, LoDTensor* dst, DownloadQueue* queue);

}  // namespace tide::core
