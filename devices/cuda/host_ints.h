// host_ints.h: Paddle 2.x's tensor-valued attributes (slice's StartsTensor, unsqueeze2's
// AxesTensor, gather's Axis, the interps' Scale, scale's ScaleTensor, fill_constant's
// ValueTensor, ...) for the CUDA kernels: tide/ops/int_inputs.hpp's readers and checks, over host
// memory. The kernels declare these inputs host inputs (TideKernelDef.host_inputs), so the core
// hands them over on the host, copied there after the work that wrote them: no kernel waits for
// its device to read one back (tests/layout/check_cuda_host_reads.py).
#pragma once

#include <cstdint>
#include <cstring>
#include <tide/ops/int_inputs.hpp>
#include <vector>

#include "gpu.h"

namespace tide_cuda {

// tide/ops' reader of a small input for a kernel on `g`, on the host. One on the device is an
// input the kernel's registration does not declare a host input (or a core bug): refused, naming
// the op and `param` where known, rather than read back with a wait.
struct ReadBack {
  const Gpu& g;
  const char* param = nullptr;
  void operator()(const Tensor& t, void* dst, size_t bytes) const {
    if (bytes == 0) return;
    static const int32_t host_kind = tide::Place("cpu", 0).c().kind;
    TIDE_CHECK(t.place().c().kind == host_kind, "op '", g.op(), "': input ", param ? param : "",
               param ? " " : "", "(", tide::DataTypeName(t.dtype()), " ", tide::ToString(t.dims()),
               ") is read on the host but is on ", t.place().ToString(),
               ": declare it in the kernel's host inputs (TIDE_REGISTER_KERNEL_HOST_INPUTS)");
    std::memcpy(dst, t.raw_data(), bytes);
  }
};

// The values of input param[i].
inline std::vector<int64_t> HostIntValues(const KernelContext& ctx, const Gpu& g, const char* param,
                                          size_t i = 0) {
  return tide::ops::IntValues(ctx, param, i, ReadBack{g, param});
}

// The one value of input param[i].
inline int64_t HostIntScalar(const KernelContext& ctx, const Gpu& g, const char* param,
                             size_t i = 0) {
  return tide::ops::IntScalar(ctx, param, i, ReadBack{g, param});
}

// One value from each variable of a duplicable input (a "...TensorList").
inline std::vector<int64_t> HostIntScalars(const KernelContext& ctx, const Gpu& g,
                                           const char* param) {
  return tide::ops::IntScalars(ctx, param, ReadBack{g, param});
}

// The one value of float32 or float64 input `param` (e.g. the interps' Scale).
inline double HostFloatScalar(const KernelContext& ctx, const Gpu& g, const char* param) {
  return tide::ops::FloatScalar(ctx, param, ReadBack{g, param});
}

// The one float32 / float64 / int32 / int64 element of input `param` (scale's ScaleTensor,
// fill_constant's ValueTensor).
inline tide::ops::Number HostNumber(const KernelContext& ctx, const Gpu& g, const char* param) {
  return tide::ops::NumberInput(ctx, param, ReadBack{g, param});
}

}  // namespace tide_cuda
