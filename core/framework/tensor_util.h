// tensor_util.h: copies between places through the device plugins' copy functions.
#pragma once

#include "core/device/device_context.h"
#include "core/framework/tensor.h"

namespace tide::core {

// Deep-copies src (data, dims, dtype, layout, LoD) into dst on `place`, done as far as any later
// reader can tell: host memory is written when it returns; device memory is written in its
// context's stream order, ahead of anything queued there later (the core synchronises a context
// before the host reads its memory), so copies to a device do not make the host wait.
// `ctx` (may be null) is used when it belongs to the device that does the copy.
void TensorCopySync(const LoDTensor& src, const Place& place, LoDTensor* dst,
                    DeviceContext* ctx = nullptr);

}  // namespace tide::core
