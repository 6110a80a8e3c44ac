// loss_ops.cu: ops_nn's losses and metrics on the GPU: softmax_with_cross_entropy (log-sum-exp,
// hard or soft labels, ignore_index, any class axis) and cross_entropy (Fluid's log(0) guard),
// with grads; top_k (ties by lower index) with its grad; accuracy. A label or index out of range
// is found on the device and reported by the next synchronisation (see gpu.h, DeviceError).
#include <cmath>
#include <tide/ops/cross_entropy.hpp>
#include <tide/ops/loss.hpp>
#include <tide/ops/metric.hpp>

#include "host_ints.h"
#include "reduce.cuh"

namespace tide_cuda {
namespace {

inline unsigned RowGrid(int64_t rows) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(rows, 1), 65535));
}

using tide::ops::ClassView;

// ---------------------------------------------------------------------------------------------
// softmax_with_cross_entropy: Logits viewed as [pre, K, post] around the class axis.
// One block per row (the K classes of one position, `post` apart).
template <typename T>
__global__ void SwceKernel(const T* x, const T* soft_lbl, const int64_t* hard_lbl, int64_t ignore,
                           T* sm, T* loss, int64_t rows, int64_t k, int64_t post, int* err) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / post) * k * post + r % post;
    T mx = T(-INFINITY);
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x) mx = max(mx, x[base + c * post]);
    mx = BlockMax(mx, T(-INFINITY));
    T sum = 0;
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x) sum += Exp(x[base + c * post] - mx);
    sum = BlockSum(sum);
    const T lse = Log(sum) + mx;  // log(sum(exp(x)))
    T soft = 0;
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {
      const int64_t e = base + c * post;
      sm[e] = Exp(x[e] - lse);
      if (soft_lbl) soft -= soft_lbl[e] * (x[e] - lse);
    }
    if (soft_lbl) soft = BlockSum(soft);
    if (threadIdx.x == 0) {
      if (soft_lbl) {
        loss[r] = soft;
      } else {
        const int64_t cls = hard_lbl[r];
        if (cls == ignore) {
          loss[r] = T(0);
        } else if (cls < 0 || cls >= k) {
          RaiseDeviceError(err, kLabelOutOfRange);
          loss[r] = T(NAN);
        } else {
          loss[r] = lse - x[base + cls * post];
        }
      }
    }
  }
}

template <typename T>
void Swce(KernelContext& ctx) {
  // use_softmax = false (Logits holding probabilities) is declined: the CPU kernel runs it.
  if (!ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
               "' (CUDA kernel): use_softmax = false is the CPU kernel's");
  Gpu g(ctx);
  const auto a = tide::ops::GetSwceArgs<T>(ctx);
  if (a.rows() == 0) return;
  SwceKernel<T><<<RowGrid(a.rows()), BlockFor(a.v.k, 256), 0, g.stream()>>>(
      a.logits, a.label.soft, a.label.hard, a.ignore, a.softmax, a.loss, a.rows(), a.v.k, a.v.post,
      g.error_word());
  g.CheckLaunch("SwceKernel");
}

// Logits@GRAD = (Softmax * sum(Label) - Label) * Loss@GRAD; one-hot Label when hard, 0 for
// ignore_index rows.
template <typename T>
__global__ void SwceGradKernel(const T* sm, const T* soft_lbl, const int64_t* hard_lbl,
                               int64_t ignore, const T* g, T* d, int64_t rows, int64_t k,
                               int64_t post, int* err) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / post) * k * post + r % post;
    if (soft_lbl) {
      T s = 0;
      for (int64_t c = threadIdx.x; c < k; c += blockDim.x) s += soft_lbl[base + c * post];
      s = BlockSum(s);
      for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {
        const int64_t e = base + c * post;
        d[e] = (sm[e] * s - soft_lbl[e]) * g[r];
      }
      continue;
    }
    const int64_t cls = hard_lbl[r];
    const bool bad = cls != ignore && (cls < 0 || cls >= k);
    if (bad && threadIdx.x == 0) RaiseDeviceError(err, kLabelOutOfRange);
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {
      const int64_t e = base + c * post;
      d[e] = (cls == ignore || bad) ? T(0) : (sm[e] - (c == cls ? T(1) : T(0))) * g[r];
    }
  }
}

template <typename T>
void SwceGrad(KernelContext& ctx) {
  // use_softmax = false (Logits holding probabilities) is declined: the CPU kernel runs it.
  if (!ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
               "' (CUDA kernel): use_softmax = false is the CPU kernel's");
  Gpu g(ctx);
  const auto a = tide::ops::GetSwceGradArgs<T>(ctx);
  if (a.rows() == 0 || a.v.k == 0) return;
  SwceGradKernel<T><<<RowGrid(a.rows()), BlockFor(a.v.k, 256), 0, g.stream()>>>(
      a.softmax, a.label.soft, a.label.hard, a.ignore, a.dloss, a.dlogits, a.rows(), a.v.k,
      a.v.post, g.error_word());
  g.CheckLaunch("SwceGradKernel");
}

// ---------------------------------------------------------------------------------------------
// cross_entropy: X [..., D] of probabilities, one row per D; the CPU's guards against log(0) and
// division by 0 (tide/ops/cross_entropy.hpp: a NaN stays NaN).
using tide::ops::SafeDenominator;
using tide::ops::TolerableLog;

template <typename T>
__global__ void XeHardKernel(const T* x, const int64_t* lbl, int64_t ignore, T* y, int64_t n,
                             int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = lbl[i];
    if (cls == ignore) {
      y[i] = T(0);
    } else if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kLabelOutOfRange);
      y[i] = T(NAN);
    } else {
      y[i] = -TolerableLog(x[i * d + cls]);
    }
  }
}

template <typename T>
__global__ void XeSoftKernel(const T* x, const T* lbl, T* y, int64_t n, int64_t d) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    T s = 0;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      s += lbl[i * d + j] * TolerableLog(x[i * d + j]);
    s = BlockSum(s);
    if (threadIdx.x == 0) y[i] = -s;
  }
}

template <typename T>
void Xe(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetXeArgs<T>(ctx);
  if (a.n == 0) return;
  if (a.label.soft) {
    XeSoftKernel<T>
        <<<RowGrid(a.n), BlockFor(a.d, 256), 0, g.stream()>>>(a.x, a.label.soft, a.y, a.n, a.d);
    g.CheckLaunch("XeSoftKernel");
    return;
  }
  Launch(g, "XeHardKernel", a.n, XeHardKernel<T>, a.x, a.label.hard, a.ignore, a.y, a.n, a.d,
         g.error_word());
}

// Hard: dX[label] = -dY / X[label], 0 elsewhere (and for ignore_index); soft: dX = -dY * Label / X.
template <typename T>
__global__ void XeGradSoftKernel(const T* x, const T* lbl, const T* dy, T* dx, int64_t total,
                                 int64_t d) {
  TIDE_CUDA_LOOP(e, total) { dx[e] = -dy[e / d] * lbl[e] / SafeDenominator(x[e]); }
}

template <typename T>
__global__ void XeGradHardKernel(const T* x, const int64_t* lbl, int64_t ignore, const T* dy, T* dx,
                                 int64_t n, int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = lbl[i];
    if (cls == ignore) continue;
    if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kLabelOutOfRange);
      continue;
    }
    dx[i * d + cls] = -dy[i] / SafeDenominator(x[i * d + cls]);
  }
}

template <typename T>
void XeGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetXeGradArgs<T>(ctx);
  const int64_t total = a.n * a.d;
  if (a.label.soft) {
    Launch(g, "XeGradSoftKernel", total, XeGradSoftKernel<T>, a.x, a.label.soft, a.dy, a.dx, total,
           a.d);
    return;
  }
  g.Zero(a.dx, sizeof(T) * size_t(total));
  Launch(g, "XeGradHardKernel", a.n, XeGradHardKernel<T>, a.x, a.label.hard, a.ignore, a.dy, a.dx,
         a.n, a.d, g.error_word());
}

// ---------------------------------------------------------------------------------------------
// top_k: one block per row; k rounds, each picking the best element after the previous pick in
// the order (value descending, index ascending), so ties keep the lower index first.
constexpr int kTopKThreads = 256;

template <typename T>
__device__ __forceinline__ bool Before(T av, int64_t ai, T bv, int64_t bi) {
  return av > bv || (av == bv && ai < bi);  // a comes first
}

template <typename T>
__global__ void TopKKernel(const T* x, T* out, int64_t* idx, int64_t rows, int64_t d, int64_t k) {
  __shared__ T sv[kTopKThreads];
  __shared__ int64_t si[kTopKThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T last_v = T(0);
    int64_t last_i = -1;
    for (int64_t j = 0; j < k; ++j) {
      T bv = T(0);
      int64_t bi = -1;
      for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
        const T v = xr[c];
        if (last_i >= 0 && !Before(last_v, last_i, v, c)) continue;  // already picked
        if (bi < 0 || Before(v, c, bv, bi)) {
          bv = v;
          bi = c;
        }
      }
      sv[threadIdx.x] = bv;
      si[threadIdx.x] = bi;
      __syncthreads();
      for (int s = kTopKThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
          const T ov = sv[threadIdx.x + s];
          const int64_t oi = si[threadIdx.x + s];
          if (oi >= 0 &&
              (si[threadIdx.x] < 0 || Before(ov, oi, sv[threadIdx.x], si[threadIdx.x]))) {
            sv[threadIdx.x] = ov;
            si[threadIdx.x] = oi;
          }
        }
        __syncthreads();
      }
      last_v = sv[0];
      last_i = si[0];
      if (threadIdx.x == 0) {
        out[r * k + j] = last_v;
        idx[r * k + j] = last_i;
      }
      __syncthreads();  // sv/si are rewritten by the next round
    }
  }
}

template <typename T>
void TopK(KernelContext& ctx) {
  Gpu g(ctx);
  // Fluid's K input (read back to the host) over the attribute.
  const auto a = tide::ops::GetTopKArgs<T>(ctx, ReadBack{g});
  if (a.rows == 0 || a.k == 0) return;
  TopKKernel<T>
      <<<RowGrid(a.rows), kTopKThreads, 0, g.stream()>>>(a.x, a.out, a.indices, a.rows, a.d, a.k);
  g.CheckLaunch("TopKKernel");
}

// X@GRAD[Indices[r, j]] += Out@GRAD[r, j], 0 elsewhere.
template <typename T>
__global__ void TopKGradKernel(const int64_t* id, const T* g, T* dx, int64_t total, int64_t k,
                               int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t c = id[i];
    if (c < 0 || c >= d) {
      RaiseDeviceError(err, kIndexOutOfRange);
      continue;
    }
    atomicAdd(dx + (i / k) * d + c, g[i]);
  }
}

template <typename T>
void TopKGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetTopKGradArgs<T>(ctx);
  const auto [rows, d, k] = a.v;
  g.Zero(a.dx, sizeof(T) * size_t(rows * d));
  Launch(g, "TopKGradKernel", rows * k, TopKGradKernel<T>, a.indices, a.dout, a.dx, rows * k, k, d,
         g.error_word());
}

// ---------------------------------------------------------------------------------------------
// accuracy: one block counts the rows whose label is among their k indices.
__global__ void AccuracyKernel(const int64_t* id, const int64_t* label, int64_t n, int64_t k,
                               float* accuracy, int32_t* correct, int32_t* total) {
  long long hits = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    for (int64_t j = 0; j < k; ++j)
      if (id[i * k + j] == label[i]) {
        ++hits;
        break;
      }
  hits = BlockSum(hits);
  if (threadIdx.x == 0) {
    *accuracy = n ? static_cast<float>(hits) / static_cast<float>(n) : 0.0f;
    *correct = static_cast<int32_t>(hits);
    *total = static_cast<int32_t>(n);
  }
}

template <typename T>
void Accuracy(KernelContext& ctx) {
  Gpu g(ctx);
  const tide::ops::AccuracyArgs a = tide::ops::GetAccuracyArgs(ctx);
  AccuracyKernel<<<1, 256, 0, g.stream()>>>(a.indices, a.label, a.n, a.k, a.accuracy, a.correct,
                                            a.total);
  g.CheckLaunch("AccuracyKernel");
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("softmax_with_cross_entropy", "gpu", Swce, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy_grad", "gpu", SwceGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy", "gpu", Xe, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy_grad", "gpu", XeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("top_k", "gpu", TIDE_HOST_INPUTS("K"), TopK, float, double,
                                 int32_t, int64_t);
TIDE_REGISTER_KERNEL("top_k_grad", "gpu", TopKGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("accuracy", "gpu", Accuracy, TIDE_CUDA_FLOAT_TYPES);
