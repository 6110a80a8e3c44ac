// host_ints.h: Paddle 2.x's tensor-valued attributes (slice's StartsTensor, unsqueeze2's
// AxesTensor, gather's Axis, the interps' Scale, scale's ScaleTensor, fill_constant's
// ValueTensor, ...) for the CUDA kernels: tide/ops/int_inputs.hpp's readers and checks, with the
// input read back to the host when the core moved it to the device (the kernel waits for it, as
// reshape's Shape does).
#pragma once

#include <cstdint>
#include <cstring>
#include <tide/ops/int_inputs.hpp>
#include <vector>

#include "gpu.h"

namespace tide_cuda {

// tide/ops' reader of a small input for a kernel on `g`: a copy back from the device, or from
// the host where the input is there already.
struct ReadBack {
  const Gpu& g;
  void operator()(const Tensor& t, void* dst, size_t bytes) const {
    if (bytes == 0) return;
    if (t.place() == g.place())
      g.CopyToHostSync(dst, t.raw_data(), bytes);
    else
      std::memcpy(dst, t.raw_data(), bytes);  // on the host already
  }
};

// The values of input param[i].
inline std::vector<int64_t> HostIntValues(const KernelContext& ctx, const Gpu& g, const char* param,
                                          size_t i = 0) {
  return tide::ops::IntValues(ctx, param, i, ReadBack{g});
}

// The one value of input param[i].
inline int64_t HostIntScalar(const KernelContext& ctx, const Gpu& g, const char* param,
                             size_t i = 0) {
  return tide::ops::IntScalar(ctx, param, i, ReadBack{g});
}

// One value from each variable of a duplicable input (a "...TensorList").
inline std::vector<int64_t> HostIntScalars(const KernelContext& ctx, const Gpu& g,
                                           const char* param) {
  return tide::ops::IntScalars(ctx, param, ReadBack{g});
}

// The one value of float32 or float64 input `param` (e.g. the interps' Scale).
inline double HostFloatScalar(const KernelContext& ctx, const Gpu& g, const char* param) {
  return tide::ops::FloatScalar(ctx, param, ReadBack{g});
}

// The one float32 / float64 / int32 / int64 element of input `param` (scale's ScaleTensor,
// fill_constant's ValueTensor).
inline tide::ops::Number HostNumber(const KernelContext& ctx, const Gpu& g, const char* param) {
  return tide::ops::NumberInput(ctx, param, ReadBack{g});
}

}  // namespace tide_cuda
