// batch_norm_ops.cu: batch_norm (train: batch statistics with the running statistics updated in
// place; test / use_global_stats: the running statistics) over NCHW or NHWC, and its grad, on the
// GPU. Own kernels rather than cuDNN's, whose running variance is the unbiased one: these follow
// ops_nn's formulas (biased batch variance, two passes) exactly. float16 and bfloat16 X compute in
// float32, with float32 Scale, Bias and statistics (AsFloat32Param).
#include <cmath>
#include <tide/ops/batch_norm.hpp>

#include "host_ints.h"
#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::BnView;

// X, Y and their grads are T; Scale, Bias, the statistics and their grads P = Acc<T> (float32 for
// __half and __nv_bfloat16, whose kernels compute in float32: the op declares those inputs
// AsFloat32Param, as Paddle's), T otherwise.

// Batch statistics, two passes as the CPU does: mean, then the mean squared deviation.
template <typename P>
struct MeanFinish {
  P* mu;
  P m;
  __device__ void operator()(int64_t c, P s) const { mu[c] = s / m; }
};
template <typename T, typename P>
struct SqDevTerm {
  const T* x;
  const P* mu;
  __device__ P operator()(int64_t e, int64_t c) const {
    const P d = Load(x, e) - mu[c];
    return d * d;
  }
};
template <typename P>
struct VarFinish {
  P *var, *inv_std;
  P m, eps;
  __device__ void operator()(int64_t c, P s) const {
    const P v = s / m;
    var[c] = v;
    inv_std[c] = P(1) / Sqrt(v + eps);
  }
};

// inv_std from the running variance (global statistics).
template <typename P>
__global__ void InvStdKernel(const P* var, P eps, P* inv_std, int64_t c) {
  TIDE_CUDA_LOOP(i, c) { inv_std[i] = P(1) / Sqrt(var[i] + eps); }
}

// Per channel: the running statistics (MeanOut / VarianceOut, usually the Mean / Variance
// buffers themselves: each channel reads before it writes) and SavedMean / SavedVariance.
template <typename P>
__global__ void BnStatsOutKernel(const P* run_mean, const P* run_var, const P* mu,
                                 const P* batch_var, const P* inv_std, P momentum, bool global,
                                 P* mean_out, P* var_out, P* saved_mean, P* saved_var, int64_t c) {
  TIDE_CUDA_LOOP(i, c) {
    const P rm = run_mean[i], rv = run_var[i];
    if (mean_out) mean_out[i] = global ? rm : rm * momentum + mu[i] * (P(1) - momentum);
    if (var_out) var_out[i] = global ? rv : rv * momentum + batch_var[i] * (P(1) - momentum);
    if (saved_mean) saved_mean[i] = mu[i];
    if (saved_var) saved_var[i] = inv_std[i];
  }
}

template <typename T, typename P>
__global__ void BnForwardKernel(const T* x, const P* scale, const P* bias, const P* mu,
                                const P* inv_std, T* y, int64_t total, int64_t c, int64_t inner) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ch = (i / inner) % c;
    const P a = scale[ch] * inv_std[ch], shift = bias[ch] - mu[ch] * a;
    y[i] = static_cast<T>(Load(x, i) * a + shift);
  }
}

template <typename T>
void BnKernel(KernelContext& ctx) {
  using P = Acc<T>;
  Gpu g(ctx);
  const auto a = tide::ops::GetBnArgs<T, ReadBack, P>(ctx, ReadBack{g});
  const BnView v = a.v;
  const P* rm = a.mean;
  const P* rv = a.var;
  const int64_t m = v.outer * v.inner;
  P* mu = g.Temp<P>(v.c);
  P* inv_std = g.Temp<P>(v.c);
  P* batch_var = nullptr;
  if (a.global) {
    g.CopyD2D(mu, rm, sizeof(P) * size_t(v.c));
    Launch(g, "InvStdKernel", v.c, InvStdKernel<P>, rv, a.eps, inv_std, v.c);
  } else {
    batch_var = g.Temp<P>(v.c);
    ReduceMid<P>(g, "batch_norm (mean)", v.outer, v.c, v.inner, LoadTerm<T, P>{a.x},
                 MeanFinish<P>{mu, static_cast<P>(m)});
    ReduceMid<P>(g, "batch_norm (variance)", v.outer, v.c, v.inner, SqDevTerm<T, P>{a.x, mu},
                 VarFinish<P>{batch_var, inv_std, static_cast<P>(m), a.eps});
  }
  auto out_ptr = [&](const char* param) -> P* {
    Tensor t = ctx.OptionalOutput(param);
    return t ? t.mutable_data<P>({v.c}, g.place()) : nullptr;
  };
  P* mean_out = out_ptr("MeanOut");
  P* var_out = out_ptr("VarianceOut");
  P* saved_mean = out_ptr("SavedMean");
  P* saved_var = out_ptr("SavedVariance");
  Launch(g, "BnStatsOutKernel", v.c, BnStatsOutKernel<P>, rm, rv, mu, batch_var, inv_std,
         a.momentum, a.global, mean_out, var_out, saved_mean, saved_var, v.c);
  T* yd = ctx.Output("Y").mutable_data<T>(a.x_dims, g.place());
  const int64_t n = DimsProduct(a.x_dims);
  Launch(g, "BnForwardKernel", n, BnForwardKernel<T, P>, a.x, a.scale, a.bias, mu, inv_std, yd, n,
         v.c, v.inner);
}

// Grad: with xhat = (x - mean) * inv_std, dBias = sum(dy), dScale = sum(dy * xhat),
// dX = scale * inv_std / m * (m * dy - dBias - xhat * dScale); with global statistics
// dX = dy * scale * inv_std.
template <typename T, typename P>
struct DscaleTerm {
  const T *dy, *x;
  const P *mu, *inv_std;
  __device__ P operator()(int64_t e, int64_t c) const {
    return Load(dy, e) * (Load(x, e) - mu[c]) * inv_std[c];
  }
};

template <typename T, typename P>
__global__ void BnGradXKernel(const T* x, const T* dy, const P* scale, const P* mu,
                              const P* inv_std, const P* dbias, const P* dscale, bool global, P m,
                              T* dx, int64_t total, int64_t c, int64_t inner) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ch = (i / inner) % c;
    const P a = scale[ch] * inv_std[ch];
    if (global) {
      dx[i] = static_cast<T>(Load(dy, i) * a);
    } else {
      const P xhat = (Load(x, i) - mu[ch]) * inv_std[ch];
      dx[i] = static_cast<T>(a / m * (m * Load(dy, i) - dbias[ch] - xhat * dscale[ch]));
    }
  }
}

template <typename T>
void BnGradKernel(KernelContext& ctx) {
  using P = Acc<T>;
  Gpu g(ctx);
  const auto a = tide::ops::GetBnGradArgs<T, P>(ctx);
  const BnView v = a.v;
  const bool global = a.global;
  const P* mu = a.mean;
  const P* inv_std = a.var;  // SavedVariance: the batch's inverse std
  if (global) {
    P* is = g.Temp<P>(v.c);
    Launch(g, "InvStdKernel", v.c, InvStdKernel<P>, a.var, a.eps, is, v.c);
    inv_std = is;
  }
  const T* xd = a.x;
  const T* gd = a.dy;
  const P* sd = a.scale;
  Tensor ds = ctx.OptionalOutput(GradVarName("Scale").c_str());
  Tensor db = ctx.OptionalOutput(GradVarName("Bias").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  P* dscale = ds ? ds.mutable_data<P>({v.c}, g.place()) : g.Temp<P>(v.c);
  P* dbias = db ? db.mutable_data<P>({v.c}, g.place()) : g.Temp<P>(v.c);
  ReduceMid<P>(g, "batch_norm_grad (dBias)", v.outer, v.c, v.inner, LoadTerm<T, P>{gd},
               StoreFinish<P, P>{dbias, P(1)});
  ReduceMid<P>(g, "batch_norm_grad (dScale)", v.outer, v.c, v.inner,
               DscaleTerm<T, P>{gd, xd, mu, inv_std}, StoreFinish<P, P>{dscale, P(1)});
  if (!dx) return;
  T* dd = dx.mutable_data<T>(a.x_dims, g.place());
  const int64_t n = DimsProduct(a.x_dims);
  Launch(g, "BnGradXKernel", n, BnGradXKernel<T, P>, xd, gd, sd, mu, inv_std, dbias, dscale, global,
         static_cast<P>(v.outer * v.inner), dd, n, v.c, v.inner);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("batch_norm", "gpu", TIDE_HOST_INPUTS("MomentumTensor"), BnKernel,
                                 TIDE_CUDA_FLOAT_TYPES, TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("batch_norm_grad", "gpu", BnGradKernel, TIDE_CUDA_FLOAT_TYPES,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
