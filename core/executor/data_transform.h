// data_transform.h: seed 000's data transform: when the tensor an input holds differs from what
// the chosen kernel expects (place, layout, data type), convert it, through the device plugins'
// copies and the registered layout transforms and casts, into a scratch tensor the kernel reads.
#pragma once

#include <cstdint>
#include <string>

#include "core/executor/op_instance.h"
#include "core/registry/kernel_key.h"

namespace tide::core {

struct TransformCounts {
  uint64_t layouts = 0, copies = 0, casts = 0;
  uint64_t reused = 0;  // conversions skipped: the source had not changed since the last one
  uint64_t total() const { return layouts + copies + casts; }
};

// Whether data in layout `actual` must be converted for a kernel registered with `expected`:
// a library's opaque data only feeds opaque-layout kernels; such a kernel takes plain data; ANY
// accepts any plain layout; NCHW and NHWC differ.
bool NeedsLayoutTransform(TideLayout actual, TideLayout expected);

// Converts input `param`[i] of `op` as its kernel needs (kernel key and place), updating the
// slot's scratch tensors and `counts`. Returns what the kernel should read. Errors name the op,
// the input, the kernel key and the missing transform.
const LoDTensor* TransformInput(const OpInstance& op, const ArgBinding& b, size_t i,
                                InputTransform* t, TransformCounts* counts);

}  // namespace tide::core
