// batch_norm_ops.cu: batch_norm (train: batch statistics with the running statistics updated in
// place; test / use_global_stats: the running statistics) over NCHW or NHWC, and its grad, on the
// GPU. Own kernels rather than cuDNN's, whose running variance is the unbiased one: these follow
// ops_nn's formulas (biased batch variance, two passes) exactly.
#include <cmath>
#include <tide/ops/batch_norm.hpp>

#include "host_ints.h"
#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::BnView;

// Batch statistics, two passes as the CPU does: mean, then the mean squared deviation.
template <typename T>
struct MeanFinish {
  T* mu;
  T m;
  __device__ void operator()(int64_t c, T s) const { mu[c] = s / m; }
};
template <typename T>
struct SqDevTerm {
  const T *x, *mu;
  __device__ T operator()(int64_t e, int64_t c) const {
    const T d = x[e] - mu[c];
    return d * d;
  }
};
template <typename T>
struct VarFinish {
  T *var, *inv_std;
  T m, eps;
  __device__ void operator()(int64_t c, T s) const {
    const T v = s / m;
    var[c] = v;
    inv_std[c] = T(1) / Sqrt(v + eps);
  }
};

// inv_std from the running variance (global statistics).
template <typename T>
__global__ void InvStdKernel(const T* var, T eps, T* inv_std, int64_t c) {
  TIDE_CUDA_LOOP(i, c) { inv_std[i] = T(1) / Sqrt(var[i] + eps); }
}

// Per channel: the running statistics (MeanOut / VarianceOut, usually the Mean / Variance
// buffers themselves: each channel reads before it writes) and SavedMean / SavedVariance.
template <typename T>
__global__ void BnStatsOutKernel(const T* run_mean, const T* run_var, const T* mu,
                                 const T* batch_var, const T* inv_std, T momentum, bool global,
                                 T* mean_out, T* var_out, T* saved_mean, T* saved_var, int64_t c) {
  TIDE_CUDA_LOOP(i, c) {
    const T rm = run_mean[i], rv = run_var[i];
    if (mean_out) mean_out[i] = global ? rm : rm * momentum + mu[i] * (T(1) - momentum);
    if (var_out) var_out[i] = global ? rv : rv * momentum + batch_var[i] * (T(1) - momentum);
    if (saved_mean) saved_mean[i] = mu[i];
    if (saved_var) saved_var[i] = inv_std[i];
  }
}

template <typename T>
__global__ void BnForwardKernel(const T* x, const T* scale, const T* bias, const T* mu,
                                const T* inv_std, T* y, int64_t total, int64_t c, int64_t inner) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ch = (i / inner) % c;
    const T a = scale[ch] * inv_std[ch], shift = bias[ch] - mu[ch] * a;
    y[i] = x[i] * a + shift;
  }
}

template <typename T>
void BnKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetBnArgs<T>(ctx, ReadBack{g});
  const BnView v = a.v;
  const T* rm = a.mean;
  const T* rv = a.var;
  const int64_t m = v.outer * v.inner;
  T* mu = g.Temp<T>(v.c);
  T* inv_std = g.Temp<T>(v.c);
  T* batch_var = nullptr;
  if (a.global) {
    g.CopyD2D(mu, rm, sizeof(T) * size_t(v.c));
    Launch(g, "InvStdKernel", v.c, InvStdKernel<T>, rv, a.eps, inv_std, v.c);
  } else {
    batch_var = g.Temp<T>(v.c);
    ReduceMid<T>(g, "batch_norm (mean)", v.outer, v.c, v.inner, LoadTerm<T, T>{a.x},
                 MeanFinish<T>{mu, static_cast<T>(m)});
    ReduceMid<T>(g, "batch_norm (variance)", v.outer, v.c, v.inner, SqDevTerm<T>{a.x, mu},
                 VarFinish<T>{batch_var, inv_std, static_cast<T>(m), a.eps});
  }
  auto out_ptr = [&](const char* param) -> T* {
    Tensor t = ctx.OptionalOutput(param);
    return t ? t.mutable_data<T>({v.c}, g.place()) : nullptr;
  };
  T* mean_out = out_ptr("MeanOut");
  T* var_out = out_ptr("VarianceOut");
  T* saved_mean = out_ptr("SavedMean");
  T* saved_var = out_ptr("SavedVariance");
  Launch(g, "BnStatsOutKernel", v.c, BnStatsOutKernel<T>, rm, rv, mu, batch_var, inv_std,
         a.momentum, a.global, mean_out, var_out, saved_mean, saved_var, v.c);
  T* yd = ctx.Output("Y").mutable_data<T>(a.x_dims, g.place());
  const int64_t n = DimsProduct(a.x_dims);
  Launch(g, "BnForwardKernel", n, BnForwardKernel<T>, a.x, a.scale, a.bias, mu, inv_std, yd, n, v.c,
         v.inner);
}

// Grad: with xhat = (x - mean) * inv_std, dBias = sum(dy), dScale = sum(dy * xhat),
// dX = scale * inv_std / m * (m * dy - dBias - xhat * dScale); with global statistics
// dX = dy * scale * inv_std.
template <typename T>
struct DscaleTerm {
  const T *dy, *x, *mu, *inv_std;
  __device__ T operator()(int64_t e, int64_t c) const {
    return dy[e] * (x[e] - mu[c]) * inv_std[c];
  }
};

template <typename T>
__global__ void BnGradXKernel(const T* x, const T* dy, const T* scale, const T* mu,
                              const T* inv_std, const T* dbias, const T* dscale, bool global, T m,
                              T* dx, int64_t total, int64_t c, int64_t inner) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ch = (i / inner) % c;
    const T a = scale[ch] * inv_std[ch];
    if (global) {
      dx[i] = dy[i] * a;
    } else {
      const T xhat = (x[i] - mu[ch]) * inv_std[ch];
      dx[i] = a / m * (m * dy[i] - dbias[ch] - xhat * dscale[ch]);
    }
  }
}

template <typename T>
void BnGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetBnGradArgs<T>(ctx);
  const BnView v = a.v;
  const bool global = a.global;
  const T* mu = a.mean;
  const T* inv_std = a.var;  // SavedVariance: the batch's inverse std
  if (global) {
    T* is = g.Temp<T>(v.c);
    Launch(g, "InvStdKernel", v.c, InvStdKernel<T>, a.var, a.eps, is, v.c);
    inv_std = is;
  }
  const T* xd = a.x;
  const T* gd = a.dy;
  const T* sd = a.scale;
  Tensor ds = ctx.OptionalOutput(GradVarName("Scale").c_str());
  Tensor db = ctx.OptionalOutput(GradVarName("Bias").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  T* dscale = ds ? ds.mutable_data<T>({v.c}, g.place()) : g.Temp<T>(v.c);
  T* dbias = db ? db.mutable_data<T>({v.c}, g.place()) : g.Temp<T>(v.c);
  ReduceMid<T>(g, "batch_norm_grad (dBias)", v.outer, v.c, v.inner, LoadTerm<T, T>{gd},
               StoreFinish<T, T>{dbias, T(1)});
  ReduceMid<T>(g, "batch_norm_grad (dScale)", v.outer, v.c, v.inner,
               DscaleTerm<T>{gd, xd, mu, inv_std}, StoreFinish<T, T>{dscale, T(1)});
  if (!dx) return;
  T* dd = dx.mutable_data<T>(a.x_dims, g.place());
  const int64_t n = DimsProduct(a.x_dims);
  Launch(g, "BnGradXKernel", n, BnGradXKernel<T>, xd, gd, sd, mu, inv_std, dbias, dscale, global,
         static_cast<T>(v.outer * v.inner), dd, n, v.c, v.inner);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("batch_norm", "gpu", TIDE_HOST_INPUTS("MomentumTensor"), BnKernel,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("batch_norm_grad", "gpu", BnGradKernel, TIDE_CUDA_FLOAT_TYPES);
