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
const int64_t* HardLabels(const KernelContext& ctx, const Tensor& label) {
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Label ('",
             ctx.InputName("Label"), "') must be int64 with soft_label = false, got ",
             tide::DataTypeName(label.dtype()));
  return label.data<int64_t>();
}

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
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor logits = ctx.Input("Logits"), label = ctx.Input("Label");
  int axis = 0;
  ClassView v = tide::ops::GetClassView(op, logits.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, logits.dims(), label.dims(), axis, soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  Dims loss_dims = logits.dims();
  loss_dims[axis] = 1;
  const T* x = logits.data<T>();
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : HardLabels(ctx, label);
  T* sm = ctx.Output("Softmax").mutable_data<T>(logits.dims(), g.place());
  T* loss = ctx.Output("Loss").mutable_data<T>(loss_dims, g.place());
  const int64_t rows = v.pre * v.post;
  if (rows == 0) return;
  if (v.k == 0) {  // no classes: an empty sum, log(0)
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': Logits ", tide::ToString(logits.dims()),
               " has no classes on axis ", axis);
  }
  SwceKernel<T><<<RowGrid(rows), BlockFor(v.k, 256), 0, g.stream()>>>(
      x, soft_lbl, hard_lbl, ignore, sm, loss, rows, v.k, v.post, g.error_word());
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
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor softmax = ctx.Input("Softmax"), label = ctx.Input("Label");
  Tensor dloss = ctx.Input(GradVarName("Loss").c_str());
  Tensor dx = ctx.Output(GradVarName("Logits").c_str());
  int axis = 0;
  ClassView v = tide::ops::GetClassView(op, softmax.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, softmax.dims(), label.dims(), axis, soft);
  TIDE_CHECK(dloss.numel() == v.pre * v.post, "op '", op, "': Loss@GRAD ",
             tide::ToString(dloss.dims()), " does not hold one value per row of Softmax ",
             tide::ToString(softmax.dims()));
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const T* sm = softmax.data<T>();
  const T* gd = dloss.data<T>();
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : HardLabels(ctx, label);
  T* d = dx.mutable_data<T>(softmax.dims(), g.place());
  const int64_t rows = v.pre * v.post;
  if (rows == 0 || v.k == 0) return;
  SwceGradKernel<T><<<RowGrid(rows), BlockFor(v.k, 256), 0, g.stream()>>>(
      sm, soft_lbl, hard_lbl, ignore, gd, d, rows, v.k, v.post, g.error_word());
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
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckCrossEntropyLabel(op, x.dims(), label.dims(), soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  Dims yd = x.dims();
  yd.back() = 1;
  const T* xd = x.data<T>();
  T* y = ctx.Output("Y").mutable_data<T>(yd, g.place());
  if (n == 0) return;
  if (soft) {
    const T* l = label.data<T>();
    XeSoftKernel<T><<<RowGrid(n), BlockFor(d, 256), 0, g.stream()>>>(xd, l, y, n, d);
    g.CheckLaunch("XeSoftKernel");
    return;
  }
  const int64_t* l = HardLabels(ctx, label);
  Launch(g, "XeHardKernel", n, XeHardKernel<T>, xd, l, ignore, y, n, d, g.error_word());
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
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckCrossEntropyLabel(op, x.dims(), label.dims(), soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  TIDE_CHECK(dy.numel() == n, "op '", op, "': Y@GRAD ", tide::ToString(dy.dims()),
             " does not hold one value per row of X ", tide::ToString(x.dims()));
  const T* xd = x.data<T>();
  const T* gd = dy.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  if (soft) {
    const T* l = label.data<T>();
    Launch(g, "XeGradSoftKernel", x.numel(), XeGradSoftKernel<T>, xd, l, gd, dx, x.numel(), d);
    return;
  }
  const int64_t* l = HardLabels(ctx, label);
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  Launch(g, "XeGradHardKernel", n, XeGradHardKernel<T>, xd, l, ignore, gd, dx, n, d,
         g.error_word());
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
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  // Fluid's K input (read back to the host) over the attribute.
  const int64_t k = ctx.HasInput("K") ? HostIntScalar(ctx, g, "K") : ctx.Attr<int32_t>("k");
  const Dims od = tide::ops::TopKOutDims(op, x.dims(), &k);
  const int64_t d = x.dims().back(), rows = d ? x.numel() / d : 0;
  const T* xd = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(od, g.place());
  int64_t* idx = ctx.Output("Indices").mutable_data<int64_t>(od, g.place());
  if (rows == 0 || k == 0) return;
  TopKKernel<T><<<RowGrid(rows), kTopKThreads, 0, g.stream()>>>(xd, out, idx, rows, d, k);
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
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), indices = ctx.Input("Indices");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const auto [rows, d, k] = tide::ops::GetTopKGradView(op, x.dims(), indices.dims(), dout.dims());
  const int64_t* id = indices.data<int64_t>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  Launch(g, "TopKGradKernel", rows * k, TopKGradKernel<T>, id, gd, dx, rows * k, k, d,
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
  const char* op = ctx.op_type();
  Tensor indices = ctx.Input("Indices"), label = ctx.Input("Label");
  const auto [n, k] = tide::ops::CheckAccuracyInputs(op, indices.dims(), label.dims());
  const int64_t* id = indices.data<int64_t>();
  const int64_t* l = label.data<int64_t>();
  float* acc = ctx.Output("Accuracy").mutable_data<float>({1}, g.place());
  int32_t* correct = ctx.Output("Correct").mutable_data<int32_t>({1}, g.place());
  int32_t* total = ctx.Output("Total").mutable_data<int32_t>({1}, g.place());
  AccuracyKernel<<<1, 256, 0, g.stream()>>>(id, l, n, k, acc, correct, total);
  g.CheckLaunch("AccuracyKernel");
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("softmax_with_cross_entropy", "gpu", Swce, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy_grad", "gpu", SwceGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy", "gpu", Xe, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy_grad", "gpu", XeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("top_k", "gpu", TopK, float, double, int32_t, int64_t);
TIDE_REGISTER_KERNEL("top_k_grad", "gpu", TopKGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("accuracy", "gpu", Accuracy, TIDE_CUDA_FLOAT_TYPES);
