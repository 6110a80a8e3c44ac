// argsort_op.cu: ops_nn's argsort on the GPU: each line along the axis sorted by CUB's stable
// segmented sort on tide/ops/argsort.hpp's integer keys, so Out and Indices (ties in X's order,
// NaN last, also when descending) are the CPU kernel's; the grad scatters Out@GRAD back through
// Indices (an index out of range is a device error naming the op).
#include <cub/device/device_segmented_sort.cuh>
#include <tide/ops/argsort.hpp>
#include <tide/ops/axis.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::AxisSplit;
template <typename T>
using Key = typename tide::ops::ArgsortKeyOf<T>::type;

// Line s = i * post + k of X (viewed as [pre, n, post]) holds X[(i * n + j) * post + k], j < n.
__device__ __forceinline__ int64_t LineElement(const AxisSplit& s, int64_t line, int64_t j) {
  const int64_t i = line / s.post, k = line - i * s.post;
  return (i * s.n + j) * s.post + k;
}

// The sort's input, one line after another: the keys and their positions j.
template <typename T>
__global__ void LinesKernel(const T* x, AxisSplit s, Key<T>* keys, int64_t* pos, int64_t total) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t line = e / s.n, j = e - line * s.n;
    keys[e] = tide::ops::ArgsortKey(x[LineElement(s, line, j)]);
    pos[e] = j;
  }
}

__global__ void LineOffsetsKernel(int64_t n, int64_t* offsets, int64_t lines) {
  TIDE_CUDA_LOOP(l, lines + 1) { offsets[l] = l * n; }
}

// Out and Indices back in X's layout from the sorted positions.
template <typename T>
__global__ void GatherSortedKernel(const T* x, AxisSplit s, const int64_t* sorted_pos, T* out,
                                   int64_t* indices, int64_t total) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t line = e / s.n, j = e - line * s.n;
    const int64_t p = sorted_pos[e], at = LineElement(s, line, j);
    out[at] = x[LineElement(s, line, p)];
    indices[at] = p;
  }
}

template <typename T>
void Argsort(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetArgsortArgs<T>(ctx);
  const AxisSplit s = a.s;
  const bool desc = a.descending;
  const T* xd = a.x;
  T* o = a.out;
  int64_t* ix = a.indices;
  const int64_t total = a.numel, lines = s.pre * s.post;
  if (total == 0) return;
  Key<T>* keys = g.Temp<Key<T>>(total);
  Key<T>* sorted_keys = g.Temp<Key<T>>(total);
  int64_t* pos = g.Temp<int64_t>(total);
  int64_t* sorted_pos = g.Temp<int64_t>(total);
  int64_t* offsets = g.Temp<int64_t>(lines + 1);
  Launch(g, "LinesKernel", total, LinesKernel<T>, xd, s, keys, pos, total);
  Launch(g, "LineOffsetsKernel", lines + 1, LineOffsetsKernel, s.n, offsets, lines);
  auto sort = [&](void* temp, size_t& bytes) {
    return desc ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                      temp, bytes, keys, sorted_keys, pos, sorted_pos, total, lines, offsets,
                      offsets + 1, g.stream())
                : cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, keys, sorted_keys, pos,
                                                            sorted_pos, total, lines, offsets,
                                                            offsets + 1, g.stream());
  };
  size_t bytes = 0;
  TIDE_CUDA_CHECK(g, sort(nullptr, bytes));
  TIDE_CUDA_CHECK(g, sort(g.Temp<unsigned char>(int64_t(bytes)), bytes));
  Launch(g, "GatherSortedKernel", total, GatherSortedKernel<T>, xd, s, sorted_pos, o, ix, total);
}

// X@GRAD[Indices[j]] = Out@GRAD[j] along the axis, into zeros.
template <typename T>
__global__ void ArgsortGradKernel(const int64_t* indices, const T* dout, AxisSplit s, T* dx,
                                  int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t j = indices[e];
    if (j < 0 || j >= s.n) {
      RaiseDeviceError(err, kArgsortIndexOutOfRange);
      continue;
    }
    const int64_t k = e % s.post, i = e / (s.n * s.post);
    dx[(i * s.n + j) * s.post + k] = dout[e];
  }
}

template <typename T>
void ArgsortGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetArgsortGradArgs<T>(ctx);
  const int64_t n = a.s.pre * a.s.n * a.s.post;
  g.Zero(a.dx, sizeof(T) * size_t(n));
  Launch(g, "ArgsortGradKernel", n, ArgsortGradKernel<T>, a.indices, a.dout, a.s, a.dx, n,
         g.error_word());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("argsort", "gpu", Argsort, float, double, int32_t, int64_t);
TIDE_REGISTER_KERNEL("argsort_grad", "gpu", ArgsortGrad, TIDE_CUDA_FLOAT_TYPES);
