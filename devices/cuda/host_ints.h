// host_ints.h: Paddle 2.x's tensor-valued attributes (slice's StartsTensor, unsqueeze2's
// AxesTensor, gather's Axis, ...) for the CUDA kernels: the int32 / int64 values of a small input,
// read back to the host when the core moved it to the device (the kernel waits for them, as
// reshape's Shape does), with tide/ops/int_inputs.hpp's checks and messages.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu.h"

namespace tide_cuda {

// The values of input param[i].
inline std::vector<int64_t> HostIntValues(const KernelContext& ctx, const Gpu& g,
                                          const char* param, size_t i = 0) {
  Tensor t = ctx.Input(param, i);
  const TideDataType dt = t.dtype();
  TIDE_CHECK(dt == TIDE_INT32 || dt == TIDE_INT64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param, i), "') must be int32 or int64, got ", tide::DataTypeName(dt));
  const size_t n = static_cast<size_t>(t.numel());
  const size_t width = dt == TIDE_INT32 ? sizeof(int32_t) : sizeof(int64_t);
  std::vector<unsigned char> bytes(n * width);
  if (n > 0) {
    if (t.place() == g.place())
      g.CopyToHostSync(bytes.data(), t.raw_data(), bytes.size());
    else
      std::memcpy(bytes.data(), t.raw_data(), bytes.size());  // on the host already
  }
  std::vector<int64_t> v(n);
  for (size_t k = 0; k < n; ++k) {
    if (dt == TIDE_INT32) {
      int32_t x;
      std::memcpy(&x, bytes.data() + k * width, width);
      v[k] = x;
    } else {
      std::memcpy(&v[k], bytes.data() + k * width, width);
    }
  }
  return v;
}

// The one value of input param[i].
inline int64_t HostIntScalar(const KernelContext& ctx, const Gpu& g, const char* param,
                             size_t i = 0) {
  const std::vector<int64_t> v = HostIntValues(ctx, g, param, i);
  TIDE_CHECK(v.size() == 1, "op '", ctx.op_type(), "': ", param, "[", i, "] ('",
             ctx.InputName(param, i), "') must hold one value, got ", v.size());
  return v[0];
}

// One value from each variable of a duplicable input (a "...TensorList").
inline std::vector<int64_t> HostIntScalars(const KernelContext& ctx, const Gpu& g,
                                           const char* param) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < ctx.InputCount(param); ++i) v.push_back(HostIntScalar(ctx, g, param, i));
  return v;
}

}  // namespace tide_cuda
