// range_shape_where_ops.cu: ops_nn's ops whose output size the host must know before it
// allocates: range (Start, End, Step, host inputs; tide/ops/range.hpp's length and
// elements), shape (Input's dims, int32) and where_index (the coordinates of Condition's true
// elements in row-major order: a scan on the device, its count read back).
#include <cub/device/device_scan.cuh>
#include <tide/ops/range.hpp>
#include <vector>

#include "box.cuh"
#include "host_ints.h"

namespace tide_cuda {
namespace {

// The one element of input `param` as T: a host input of the kernel, which the core hands over
// in its own data type (host_ints.h).
template <typename T>
T HostScalar(const KernelContext& ctx, const Gpu& g, const char* param) {
  const tide::ops::Number n = HostNumber(ctx, g, param);
  return n.is_int ? static_cast<T>(n.i) : static_cast<T>(n.f);
}

// ---------------------------------------------------------------------------------------------
template <typename T>
__global__ void RangeKernel(T start, T step, T* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { out[i] = tide::ops::RangeValue(start, step, i); }
}

template <typename T>
void Range(KernelContext& ctx) {
  Gpu g(ctx);
  tide::ops::CheckRangeInputs(ctx);
  const T start = HostScalar<T>(ctx, g, "Start"), end = HostScalar<T>(ctx, g, "End");
  const T step = HostScalar<T>(ctx, g, "Step");
  const int64_t n = tide::ops::RangeSize(ctx.op_type(), start, end, step, ctx.InputName("Step"));
  T* o = ctx.Output("Out").mutable_data<T>({n}, g.place());
  Launch(g, "RangeKernel", n, RangeKernel<T>, start, step, o, n);
}

// ---------------------------------------------------------------------------------------------
template <typename T>
void Shape(KernelContext& ctx) {
  Gpu g(ctx);
  const Dims d = ctx.Input("Input").dims();
  const std::vector<int32_t> dims(d.begin(), d.end());
  int32_t* o = ctx.Output("Out").mutable_data<int32_t>({int64_t(d.size())}, g.place());
  g.CopyFromHost(o, dims.data(), sizeof(int32_t) * dims.size());
}

// ---------------------------------------------------------------------------------------------
__global__ void TrueFlagsKernel(const bool* c, int64_t* flags, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { flags[i] = c[i] ? 1 : 0; }
}

// Element i of Condition, true, is row rank[i] - 1 of Out (rank: the inclusive count of trues);
// its coordinates are i unravelled over Condition's dims (`v.dims`).
__global__ void WhereCoordsKernel(const bool* c, const int64_t* rank, BoxView v, int64_t* out,
                                  int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    if (!c[i]) continue;
    int64_t* row = out + (rank[i] - 1) * v.rank;
    int64_t e = i;
    for (int d = v.rank - 1; d >= 0; --d) {
      row[d] = e % v.dims[d];
      e /= v.dims[d];
    }
  }
}

template <typename T>
void WhereIndex(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor c = ctx.Input("Condition");
  const BoxView v = MakeBox(g, c.dims(), c.dims(), {}, {});
  const int64_t n = c.numel();
  const bool* cd = c.data<bool>();
  int64_t count = 0;
  int64_t* rank = g.Temp<int64_t>(n);
  if (n > 0) {
    Launch(g, "TrueFlagsKernel", n, TrueFlagsKernel, cd, rank, n);
    size_t bytes = 0;
    TIDE_CUDA_CHECK(g, cub::DeviceScan::InclusiveSum(nullptr, bytes, rank, n, g.stream()));
    TIDE_CUDA_CHECK(g, cub::DeviceScan::InclusiveSum(g.Temp<unsigned char>(int64_t(bytes)), bytes,
                                                     rank, n, g.stream()));
    g.CopyToHostSync(&count, rank + n - 1, sizeof(int64_t));
  }
  int64_t* o = ctx.Output("Out").mutable_data<int64_t>({count, int64_t(v.rank)}, g.place());
  if (count > 0) Launch(g, "WhereCoordsKernel", n, WhereCoordsKernel, cd, rank, v, o, n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("range", "gpu", TIDE_HOST_INPUTS("Start", "End", "Step"), Range,
                                 float, double, int32_t, int64_t);
TIDE_REGISTER_KERNEL("shape", "gpu", Shape, float, double, int32_t, int64_t, bool,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("where_index", "gpu", WhereIndex, bool);
