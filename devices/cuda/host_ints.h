// host_ints.h: Paddle 2.x's tensor-valued attributes (slice's StartsTensor, unsqueeze2's
// AxesTensor, gather's Axis, the interps' Scale, scale's ScaleTensor, fill_constant's
// ValueTensor, ...) for the CUDA kernels: the int32 / int64 values (or the one number) of a small
// input, read back to the host when the core moved it to the device (the kernel waits for them,
// as reshape's Shape does), with tide/ops/int_inputs.hpp's checks and messages.
#pragma once

#include <tide/ops/int_inputs.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu.h"

namespace tide_cuda {

// The bytes of tensor t (`width` per element) on the host.
inline std::vector<unsigned char> HostBytes(const Gpu& g, const Tensor& t, size_t width) {
  std::vector<unsigned char> bytes(static_cast<size_t>(t.numel()) * width);
  if (bytes.empty()) return bytes;
  if (t.place() == g.place())
    g.CopyToHostSync(bytes.data(), t.raw_data(), bytes.size());
  else
    std::memcpy(bytes.data(), t.raw_data(), bytes.size());  // on the host already
  return bytes;
}

// The values of input param[i].
inline std::vector<int64_t> HostIntValues(const KernelContext& ctx, const Gpu& g,
                                          const char* param, size_t i = 0) {
  Tensor t = ctx.Input(param, i);
  const TideDataType dt = t.dtype();
  TIDE_CHECK(dt == TIDE_INT32 || dt == TIDE_INT64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param, i), "') must be int32 or int64, got ", tide::DataTypeName(dt));
  const size_t n = static_cast<size_t>(t.numel());
  const size_t width = dt == TIDE_INT32 ? sizeof(int32_t) : sizeof(int64_t);
  const std::vector<unsigned char> bytes = HostBytes(g, t, width);
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

// The one value of float32 or float64 input `param` (e.g. the interps' Scale), with
// tide/ops/int_inputs.hpp's FloatScalar checks and messages.
inline double HostFloatScalar(const KernelContext& ctx, const Gpu& g, const char* param) {
  Tensor t = ctx.Input(param);
  const TideDataType dt = t.dtype();
  TIDE_CHECK(dt == TIDE_FP32 || dt == TIDE_FP64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') must be float32 or float64, got ", tide::DataTypeName(dt));
  TIDE_CHECK(t.numel() == 1, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one value, got ", t.numel());
  const std::vector<unsigned char> bytes = HostBytes(g, t, dt == TIDE_FP32 ? 4 : 8);
  if (dt == TIDE_FP32) {
    float f;
    std::memcpy(&f, bytes.data(), sizeof f);
    return f;
  }
  double d;
  std::memcpy(&d, bytes.data(), sizeof d);
  return d;
}

// The one float32 / float64 / int32 / int64 element of input `param` (scale's ScaleTensor,
// fill_constant's ValueTensor), with tide/ops/int_inputs.hpp's NumberInput checks and messages.
inline tide::ops::Number HostNumber(const KernelContext& ctx, const Gpu& g, const char* param) {
  return tide::ops::NumberInput(ctx, param, [&](const Tensor& t, void* dst, size_t bytes) {
    const std::vector<unsigned char> b = HostBytes(g, t, bytes);
    std::memcpy(dst, b.data(), bytes);
  });
}

}  // namespace tide_cuda
