// tensor_util.h: copies between places through the device plugins' copy functions.
#pragma once

#include "core/framework/tensor.h"
#include "core/platform/device_context.h"

namespace tide::core {

// Deep-copies src (data, dims, dtype, layout, LoD) into dst on `place`, then waits for the copy.
// `ctx` (may be null) is used when it belongs to the device that does the copy.
void TensorCopySync(const LoDTensor& src, const Place& place, LoDTensor* dst,
                    DeviceContext* ctx = nullptr);

}  // namespace tide::core
