// index_ops.cu: ops_nn's index ops on the GPU: gather / scatter / gather_nd (+ grads), one_hot,
// arg_max / arg_min and cumsum, with ops_nn's shape rules (tide/ops/index_shape.hpp). The indices
// stay on the device: one out of range is recorded there (its output element left zero) and
// reported by the next synchronisation, naming the op (gpu.h's DeviceError). Gather's Axis input
// is read back to the host.
#include <algorithm>
#include <climits>
#include <string>
#include <tide/ops/axis.hpp>
#include <tide/ops/index_shape.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <type_traits>

#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

using tide::ops::NormAxis;
using tide::ops::SplitAt;

// An int32 or int64 index input: fn(const I* data) with its element type.
template <typename F>
void WithIndex(const KernelContext& ctx, const char* param, const Tensor& t, F&& fn) {
  if (t.dtype() == TIDE_INT32) return fn(t.data<int32_t>());
  TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') must be int32 or int64, got ",
             tide::DataTypeName(t.dtype()));
  fn(t.data<int64_t>());
}

// ---------------------------------------------------------------------------------------------
// gather: Out[p, i, q] = X[p, Index[i], q] for X as [pre, n, post] around axis; the grad adds
// Out@GRAD back (atomics: an index may repeat).
template <typename T, typename I>
__global__ void GatherKernel(const T* x, const I* idx, int64_t m, int64_t n, int64_t post, T* out,
                             int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t q = e % post, pi = e / post, i = pi % m, p = pi / m;
    const int64_t id = idx[i];
    if (id < 0 || id >= n) {
      if (q == 0) RaiseDeviceError(err, kGatherIndexOutOfRange);
      out[e] = T(0);
    } else {
      out[e] = x[(p * n + id) * post + q];
    }
  }
}

template <typename T, typename I>
__global__ void GatherGradKernel(const T* dout, const I* idx, int64_t m, int64_t n, int64_t post,
                                 T* dx, int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t q = e % post, pi = e / post, i = pi % m, p = pi / m;
    const int64_t id = idx[i];
    if (id < 0 || id >= n) {
      if (q == 0) RaiseDeviceError(err, kGatherIndexOutOfRange);
      continue;
    }
    AtomicAdd(dx + (p * n + id) * post + q, dout[e]);
  }
}

template <typename T>
void Gather(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetGatherArgs<T>(ctx, ReadBack{g});  // Axis read back to the host
  const int64_t total = a.s.pre * a.m * a.s.post;
  WithIndex(ctx, "Index", a.index, [&](auto* idx) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(idx)>>;
    Launch(g, "GatherKernel", total, GatherKernel<T, I>, a.x, idx, a.m, a.s.n, a.s.post, a.out,
           total, g.error_word());
  });
}

template <typename T>
void GatherGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetGatherGradArgs<T>(ctx, ReadBack{g});
  const int64_t total = a.s.pre * a.m * a.s.post;
  g.Zero(a.dx, sizeof(T) * size_t(a.x_numel));
  WithIndex(ctx, "Index", a.index, [&](auto* idx) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(idx)>>;
    Launch(g, "GatherGradKernel", total, GatherGradKernel<T, I>, a.dout, idx, a.m, a.s.n, a.s.post,
           a.dx, total, g.error_word());
  });
}

// ---------------------------------------------------------------------------------------------
// scatter: Out = X with rows Ids replaced by (overwrite; of repeated ids the last update wins)
// or added to (else: the listed rows zeroed first, as Fluid) Updates' rows.
template <typename I>
__global__ void LastWriterKernel(const I* ids, int64_t count, int64_t rows, int* last, int* err) {
  TIDE_CUDA_LOOP(i, count) {
    const int64_t id = ids[i];
    if (id < 0 || id >= rows)
      RaiseDeviceError(err, kScatterIdsOutOfRange);
    else
      atomicMax(last + id, static_cast<int>(i));
  }
}

template <typename T, typename I>
__global__ void ScatterRowsKernel(const I* ids, const T* upd, int64_t rows, int64_t row,
                                  const int* last, bool add, T* out, int64_t total) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / row, k = e - i * row;
    const int64_t id = ids[i];
    if (id < 0 || id >= rows) continue;  // recorded by the kernel before
    if (add)
      AtomicAdd(out + id * row + k, upd[e]);
    else if (last[id] == i)
      out[id * row + k] = upd[e];
  }
}

// Zeroes rows Ids of out (Out's added rows; X@GRAD's overwritten ones).
template <typename T, typename I>
__global__ void ZeroRowsKernel(const I* ids, int64_t rows, int64_t row, T* out, int64_t total,
                               int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / row, k = e - i * row;
    const int64_t id = ids[i];
    if (id < 0 || id >= rows) {
      if (k == 0) RaiseDeviceError(err, kScatterIdsOutOfRange);
      continue;
    }
    out[id * row + k] = T(0);
  }
}

// Updates@GRAD row i = Out@GRAD row Ids[i].
template <typename T, typename I>
__global__ void RowsOfKernel(const I* ids, const T* src, int64_t rows, int64_t row, T* out,
                             int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / row, k = e - i * row;
    const int64_t id = ids[i];
    if (id < 0 || id >= rows) {
      if (k == 0) RaiseDeviceError(err, kScatterIdsOutOfRange);
      out[e] = T(0);
    } else {
      out[e] = src[id * row + k];
    }
  }
}

template <typename T>
void Scatter(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetScatterArgs<T>(ctx);
  const int64_t count = a.count, rows = a.rows, row = a.row;
  TIDE_CHECK(count <= INT_MAX, "op '", ctx.op_type(), "': the GPU kernel takes at most ", INT_MAX,
             " Ids");
  T* o = a.out;
  g.CopyD2D(o, a.x, sizeof(T) * size_t(a.x_numel));
  WithIndex(ctx, "Ids", a.ids, [&](auto* id) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(id)>>;
    int* last = nullptr;
    if (a.overwrite) {
      last = g.Temp<int>(rows);
      const size_t bytes = sizeof(int) * size_t(std::max<int64_t>(rows, 1));
      TIDE_CUDA_CHECK(g, cudaMemsetAsync(last, 0xff, bytes, g.stream()));  // -1: no writer
      Launch(g, "LastWriterKernel", count, LastWriterKernel<I>, id, count, rows, last,
             g.error_word());
    } else {
      Launch(g, "ZeroRowsKernel", count * row, ZeroRowsKernel<T, I>, id, rows, row, o, count * row,
             g.error_word());
    }
    Launch(g, "ScatterRowsKernel", count * row, ScatterRowsKernel<T, I>, id, a.updates, rows, row,
           static_cast<const int*>(last), !a.overwrite, o, count * row);
  });
}

template <typename T>
void ScatterGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetScatterGradArgs<T>(ctx);
  const int64_t count = a.count, rows = a.rows, row = a.row;
  WithIndex(ctx, "Ids", a.ids, [&](auto* id) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(id)>>;
    if (a.dx) {
      g.CopyD2D(a.dx, a.dout, sizeof(T) * size_t(a.numel));
      Launch(g, "ZeroRowsKernel", count * row, ZeroRowsKernel<T, I>, id, rows, row, a.dx,
             count * row, g.error_word());
    }
    if (a.dupdates)
      Launch(g, "RowsOfKernel", count * row, RowsOfKernel<T, I>, id, a.dout, rows, row, a.dupdates,
             count * row, g.error_word());
  });
}

// ---------------------------------------------------------------------------------------------
// gather_nd: Index [..., k] picks X[i0, ..., ik-1, :] (X's first k dims and strides below).
constexpr int kMaxRank = 9;
struct NdView {
  int k;
  int64_t dims[kMaxRank], strides[kMaxRank];
};

template <typename T, typename I, bool kGrad>
__global__ void GatherNdKernel(const T* src, const I* idx, NdView v, int64_t inner, T* dst,
                               int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / inner, j = e - i * inner;
    int64_t off = 0;
    bool ok = true;
    for (int d = 0; d < v.k; ++d) {
      const int64_t id = idx[i * v.k + d];
      ok = ok && id >= 0 && id < v.dims[d];
      off += id * v.strides[d];
    }
    if (!ok) {
      if (j == 0) RaiseDeviceError(err, kGatherNdIndexOutOfRange);
      if (!kGrad) dst[e] = T(0);
      continue;
    }
    if (kGrad)
      AtomicAdd(dst + off + j, src[e]);  // src: Out@GRAD, dst: X@GRAD
    else
      dst[e] = src[off + j];
  }
}

// Index's last dim k over X's first k dims (their sizes, and strides in elements).
NdView NdViewOf(const KernelContext& ctx, const Dims& xd, int64_t k, int64_t inner) {
  TIDE_CHECK(k <= kMaxRank, "op '", ctx.op_type(),
             "': the GPU kernel takes Index's last dim <= ", kMaxRank, ", got ", k);
  NdView v{};
  v.k = static_cast<int>(k);
  int64_t stride = inner;
  for (int d = v.k - 1; d >= 0; --d) {
    v.dims[d] = xd[d];
    v.strides[d] = stride;
    stride *= xd[d];
  }
  return v;
}

template <typename T, bool kGrad>
void GatherNd(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetGatherNdArgsOf<T, kGrad>(ctx);
  const NdView v = NdViewOf(ctx, a.x_dims, a.k, a.inner);
  const int64_t total = a.out_numel;
  WithIndex(ctx, "Index", a.index, [&](auto* idx) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(idx)>>;
    if constexpr (!kGrad) {
      Launch(g, "GatherNdKernel", total, GatherNdKernel<T, I, false>, a.x, idx, v, a.inner, a.out,
             total, g.error_word());
    } else {
      g.Zero(a.dx, sizeof(T) * size_t(DimsProduct(a.x_dims)));
      Launch(g, "GatherNdGradKernel", total, GatherNdKernel<T, I, true>, a.dout, idx, v, a.inner,
             a.dx, total, g.error_word());
    }
  });
}
template <typename T>
void GatherNdFwd(KernelContext& c) {
  GatherNd<T, false>(c);
}
template <typename T>
void GatherNdGrad(KernelContext& c) {
  GatherNd<T, true>(c);
}

// ---------------------------------------------------------------------------------------------
// one_hot: X's ids [..., 1] -> Out [..., depth] (zeros but a 1 at each id); allow_out_of_range
// gives a zero row, else an id outside [0, depth) is a device error.
template <typename T, typename I>
__global__ void OneHotKernel(const I* ids, int64_t depth, bool allow, T* out, int64_t n, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t id = ids[i];
    if (id >= 0 && id < depth)
      out[i * depth + id] = T(1);
    else if (!allow)
      RaiseDeviceError(err, kOneHotIdOutOfRange);
  }
}

template <typename T>
void OneHot(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetOneHotArgs<T>(ctx);
  g.Zero(a.out, sizeof(T) * size_t(a.out_numel));
  WithIndex(ctx, "X", a.ids, [&](auto* ids) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(ids)>>;
    Launch(g, "OneHotKernel", a.n, OneHotKernel<T, I>, ids, a.depth, a.allow, a.out, a.n,
           g.error_word());
  });
}

// ---------------------------------------------------------------------------------------------
// arg_max / arg_min along axis, as the CPU's loop (best = 0; j replaces it when strictly better):
// the first of equal extremes, and NaNs never win unless the line starts with one (then index 0).
// Strided or short lines: one thread per output. Long contiguous lines (post = 1): a block per
// line, each thread the first extreme of its non-NaN elements, merged by (value, lower index).
template <typename T, bool kMax>
__device__ __forceinline__ bool Better(T a, T b) {
  return kMax ? a > b : a < b;
}

template <typename T, bool kMax, typename O>
__global__ void ArgKernel(const T* x, int64_t n, int64_t post, O* out, int64_t total) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / post, q = e - i * post;
    const T* line = x + i * n * post + q;
    int64_t best = 0;
    for (int64_t j = 1; j < n; ++j)
      if (Better<T, kMax>(line[j * post], line[best * post])) best = j;
    out[e] = static_cast<O>(best);
  }
}

constexpr int kArgBlock = 256;

template <typename T, bool kMax, typename O>
__global__ void ArgLineKernel(const T* x, int64_t n, O* out, int64_t lines) {
  __shared__ T best_v[kArgBlock];
  __shared__ int64_t best_i[kArgBlock];
  const int t = threadIdx.x;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const T* row = x + line * n;
    T bv = T(0);
    int64_t bi = -1;  // none yet
    for (int64_t j = t; j < n; j += kArgBlock) {
      const T v = row[j];
      if (v != v) continue;  // NaN
      if (bi < 0 || Better<T, kMax>(v, bv)) {
        bv = v;
        bi = j;
      }
    }
    best_v[t] = bv;
    best_i[t] = bi;
    __syncthreads();
    for (int half = kArgBlock / 2; half > 0; half >>= 1) {
      if (t < half) {
        const T ov = best_v[t + half];
        const int64_t oi = best_i[t + half];
        const int64_t mi = best_i[t];
        const bool take = oi >= 0 && (mi < 0 || Better<T, kMax>(ov, best_v[t]) ||
                                      (!Better<T, kMax>(best_v[t], ov) && oi < mi));
        if (take) {
          best_v[t] = ov;
          best_i[t] = oi;
        }
      }
      __syncthreads();
    }
    if (t == 0) {
      const T first = row[0];
      out[line] = static_cast<O>(first != first || best_i[0] < 0 ? 0 : best_i[0]);
    }
    __syncthreads();  // the shared arrays are rewritten for the next line
  }
}

template <typename T, bool kMax, typename O>
void LaunchArg(const Gpu& g, const T* x, const tide::ops::AxisSplit& s, O* out) {
  const int64_t total = s.pre * s.post;
  if (s.post == 1 && s.n >= 4 * kArgBlock && total > 0) {
    const unsigned blocks =
        static_cast<unsigned>(std::min<int64_t>(total, int64_t(std::max(g.sm_count(), 1)) * 32));
    ArgLineKernel<T, kMax, O><<<blocks, kArgBlock, 0, g.stream()>>>(x, s.n, out, total);
    g.CheckLaunch("ArgLineKernel");
    return;
  }
  Launch(g, "ArgKernel", total, ArgKernel<T, kMax, O>, x, s.n, s.post, out, total);
}

template <typename T, bool kMax>
void Arg(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetArgArgs<T>(ctx);
  tide::ops::ArgOutput(ctx, a, [&](auto* out) { LaunchArg<T, kMax>(g, a.x, a.s, out); });
}
template <typename T>
void ArgMax(KernelContext& c) {
  Arg<T, true>(c);
}
template <typename T>
void ArgMin(KernelContext& c) {
  Arg<T, false>(c);
}

// ---------------------------------------------------------------------------------------------
// cumsum along axis (exclusive: without the element itself; reverse: from the end). Lines along a
// strided axis (post > 1) or short ones: one thread per line, summing in the CPU kernel's order
// (float results match it exactly). Long contiguous lines (post = 1): a block per line, scanning
// tiles of the block's size with a running carry (another summation order).
template <typename T>
__global__ void CumsumKernel(const T* x, int64_t n, int64_t post, bool exclusive, bool reverse,
                             T* out, int64_t lines) {
  TIDE_CUDA_LOOP(e, lines) {
    const int64_t i = e / post, q = e - i * post;
    const int64_t base = i * n * post + q;
    T acc = T(0);
    for (int64_t jj = 0; jj < n; ++jj) {
      const int64_t at = base + (reverse ? n - 1 - jj : jj) * post;
      const T v = x[at];
      if (exclusive) {
        out[at] = acc;
        acc += v;
      } else {
        acc += v;
        out[at] = acc;
      }
    }
  }
}

constexpr int kScanBlock = 256;

template <typename T>
__global__ void CumsumLineKernel(const T* x, int64_t n, bool exclusive, bool reverse, T* out,
                                 int64_t lines) {
  __shared__ T tile[kScanBlock];
  const int t = threadIdx.x;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const T* src = x + line * n;
    T* dst = out + line * n;
    T carry = T(0);
    for (int64_t start = 0; start < n; start += kScanBlock) {
      const int64_t jj = start + t;
      const int64_t at = reverse ? n - 1 - jj : jj;
      const T v = jj < n ? src[at] : T(0);
      // Inclusive scan of the tile (Hillis-Steele in shared memory).
      tile[t] = v;
      __syncthreads();
      for (int d = 1; d < kScanBlock; d <<= 1) {
        const T add = t >= d ? tile[t - d] : T(0);
        __syncthreads();
        tile[t] += add;
        __syncthreads();
      }
      const T incl = tile[t], excl = t > 0 ? tile[t - 1] : T(0);
      if (jj < n) dst[at] = carry + (exclusive ? excl : incl);
      carry += tile[kScanBlock - 1];
      __syncthreads();  // the tile is rewritten next round
    }
  }
}

template <typename T>
void Cumsum(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetCumsumArgs<T>(ctx);
  const auto& s = a.s;
  const bool exclusive = a.exclusive, reverse = a.reverse;
  const T* xp = a.x;
  T* o = a.out;
  const int64_t lines = s.pre * s.post;
  if (s.post == 1 && s.n >= 4 * kScanBlock && lines > 0) {
    const unsigned blocks =
        static_cast<unsigned>(std::min<int64_t>(lines, int64_t(std::max(g.sm_count(), 1)) * 32));
    CumsumLineKernel<T>
        <<<blocks, kScanBlock, 0, g.stream()>>>(xp, s.n, exclusive, reverse, o, lines);
    g.CheckLaunch("CumsumLineKernel");
    return;
  }
  Launch(g, "CumsumKernel", lines, CumsumKernel<T>, xp, s.n, s.post, exclusive, reverse, o, lines);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_MOVE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL_HOST_INPUTS("gather", "gpu", TIDE_HOST_INPUTS("Axis"), Gather,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("gather_grad", "gpu", TIDE_HOST_INPUTS("Axis"), GatherGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("scatter", "gpu", Scatter, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("scatter_grad", "gpu", ScatterGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("gather_nd", "gpu", GatherNdFwd, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("gather_nd_grad", "gpu", GatherNdGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("one_hot", "gpu", OneHot, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("arg_max", "gpu", ArgMax, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("arg_min", "gpu", ArgMin, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("cumsum", "gpu", Cumsum, TIDE_CUDA_MOVE_TYPES);
