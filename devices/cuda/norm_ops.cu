// norm_ops.cu: layer_norm, group_norm (NCHW or NHWC) and instance_norm (+ grads) on the GPU, with
// ops_nn's rules (tide/ops/norm.hpp: X as groups normalised on their own) and formulas: the
// statistics in double, two passes (mean, then the mean squared deviation), as the CPU kernel
// computes them; the grads recompute them from X. Every sum is a ReduceMid (reduce.cuh), the same
// from run to run; a group's sums run over [groups, size] in NormGroups::Offset's order.
// layer_norm also takes float16 and bfloat16 X (computed in float32, Scale and Bias float32).
#include <string>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/norm.hpp>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::NormGroups;

using tide::ops::IsInstanceNorm;

// X, Y, the statistics and X@GRAD are T; Scale, Bias and their grads P = Acc<T> (float32 for
// __half and __nv_bfloat16, which compute in float32: the op declares them AsFloat32Param), T
// otherwise. The kernels use the statistics as P; the outputs get them rounded to T.

// A double as T (through float for the 16-bit types, as the CPU's casts round them).
template <typename T>
__device__ __forceinline__ T FromDouble(double v) {
  if constexpr (kLowFloat<T>)
    return static_cast<T>(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

// Group statistics: mean (double, for the second pass) and, as P, the mean and
// 1 / sqrt(var + epsilon); as T the outputs asked for. The terms see group k's j-th element as
// e = k * size + j.
template <typename T>
struct GroupLoadTerm {
  const T* x;
  NormGroups ng;
  __device__ double operator()(int64_t e, int64_t k) const {
    return static_cast<double>(Load(x, ng.Offset(k, e - k * ng.size)));
  }
};
struct DoubleMeanFinish {
  double* mean;
  double size;
  __device__ void operator()(int64_t k, double s) const { mean[k] = s / size; }
};
template <typename T>
struct SqDevTerm {
  const T* x;
  const double* mean;
  NormGroups ng;
  __device__ double operator()(int64_t e, int64_t k) const {
    const double d = static_cast<double>(Load(x, ng.Offset(k, e - k * ng.size))) - mean[k];
    return d * d;
  }
};
template <typename T, typename P>
struct StatsFinish {
  const double* mean_d;
  P *mean, *rstd;                    // for the kernels
  T *mean_out, *var_out, *rstd_out;  // the outputs asked for (null else)
  double size, eps;
  __device__ void operator()(int64_t k, double s) const {
    const double v = s / size, r = 1.0 / sqrt(v + eps);
    mean[k] = static_cast<P>(mean_d[k]);
    rstd[k] = static_cast<P>(r);
    if (mean_out) mean_out[k] = FromDouble<T>(mean_d[k]);
    if (var_out) var_out[k] = FromDouble<T>(v);
    if (rstd_out) rstd_out[k] = FromDouble<T>(r);
  }
};

template <typename T, typename P>
void GroupStats(const Gpu& g, const T* x, const NormGroups& ng, double eps, P* mean, P* rstd,
                T* mean_out, T* var_out, T* rstd_out) {
  double* mean_d = g.Temp<double>(ng.groups);
  ReduceMid<double>(g, "norm (mean)", 1, ng.groups, ng.size, GroupLoadTerm<T>{x, ng},
                    DoubleMeanFinish{mean_d, double(ng.size)});
  ReduceMid<double>(
      g, "norm (variance)", 1, ng.groups, ng.size, SqDevTerm<T>{x, mean_d, ng},
      StatsFinish<T, P>{mean_d, mean, rstd, mean_out, var_out, rstd_out, double(ng.size), eps});
}

template <typename T, typename P>
__global__ void NormForwardKernel(const T* x, const P* mean, const P* rstd, const P* scale,
                                  const P* bias, NormGroups ng, T* y, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t k = ng.GroupOf(i), a = ng.AffineIndex(i);
    y[i] = static_cast<T>((Load(x, i) - mean[k]) * rstd[k] * (scale ? scale[a] : P(1)) +
                          (bias ? bias[a] : P(0)));
  }
}

template <typename T>
void NormKernel(KernelContext& ctx) {
  using P = Acc<T>;
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const auto in = tide::ops::GetNormArgs<T, P>(ctx);
  const NormGroups& ng = in.g;
  const bool instance = IsInstanceNorm(op);
  Tensor mt = ctx.OptionalOutput(tide::ops::NormMeanName(op));
  Tensor vt = ctx.OptionalOutput(tide::ops::NormVarName(op));
  const Dims stat = tide::ops::NormStatDims(ctx, in.x_dims, ng);
  P* mean = g.Temp<P>(ng.groups);
  P* rstd = g.Temp<P>(ng.groups);
  T* mean_out = mt ? mt.mutable_data<T>(stat, g.place()) : nullptr;
  T* rstd_out = instance && vt ? vt.mutable_data<T>(stat, g.place()) : nullptr;
  T* var_out = !instance && vt ? vt.mutable_data<T>(stat, g.place()) : nullptr;
  GroupStats<T, P>(g, in.x, ng, in.eps, mean, rstd, mean_out, var_out, rstd_out);
  const int64_t n = DimsProduct(in.x_dims);
  Launch(g, "NormForwardKernel", n, NormForwardKernel<T, P>, in.x, static_cast<const P*>(mean),
         static_cast<const P*>(rstd), in.scale, in.bias, ng, in.y, n);
}

// ---------------------------------------------------------------------------------------------
// Grad: with xhat = (x - mean) * rstd and dyh = dy * scale, per group m1 = mean(dyh),
// m2 = mean(dyh * xhat); dX = rstd * (dyh - m1 - xhat * m2); dScale = sum(dy * xhat),
// dBias = sum(dy) over the elements of each Scale/Bias index. e is an offset in X.
template <typename T, typename P>
struct GradTerms {
  const T *x, *dy;
  const P *scale, *mean, *rstd;
  NormGroups ng;
  __device__ P Xhat(int64_t e) const {
    const int64_t k = ng.GroupOf(e);
    return (Load(x, e) - mean[k]) * rstd[k];
  }
  __device__ P Dyh(int64_t e) const {
    return Load(dy, e) * (scale ? scale[ng.AffineIndex(e)] : P(1));
  }
  // X's offset of group k's element at e = k * size + j (a group-wise ReduceMid's index).
  __device__ int64_t InGroup(int64_t e, int64_t k) const { return ng.Offset(k, e - k * ng.size); }
};
template <typename T, typename P>
struct DyhTerm {
  GradTerms<T, P> t;
  __device__ double operator()(int64_t e, int64_t k) const { return t.Dyh(t.InGroup(e, k)); }
};
template <typename T, typename P>
struct DyhXhatTerm {
  GradTerms<T, P> t;
  __device__ double operator()(int64_t e, int64_t k) const {
    const int64_t i = t.InGroup(e, k);
    return t.Dyh(i) * t.Xhat(i);
  }
};
template <typename T, typename P>
struct DyXhatTerm {
  GradTerms<T, P> t;
  __device__ double operator()(int64_t e, int64_t) const { return Load(t.dy, e) * t.Xhat(e); }
};
template <typename T>
struct DyTerm {
  const T* dy;
  __device__ double operator()(int64_t e, int64_t) const { return Load(dy, e); }
};
template <typename P>
struct CastFinish {  // out[j] = sum / divisor, as P
  P* out;
  double divisor;
  __device__ void operator()(int64_t j, double s) const { out[j] = static_cast<P>(s / divisor); }
};

template <typename T, typename P>
__global__ void NormGradXKernel(GradTerms<T, P> t, const P* m1, const P* m2, T* dx, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t k = t.ng.GroupOf(i);
    dx[i] = static_cast<T>(t.rstd[k] * (t.Dyh(i) - m1[k] - t.Xhat(i) * m2[k]));
  }
}

template <typename T>
void NormGradKernel(KernelContext& ctx) {
  using P = Acc<T>;
  Gpu g(ctx);
  const auto in = tide::ops::GetNormGradArgs<T, P>(ctx);
  const NormGroups& ng = in.g;
  const int64_t n = DimsProduct(in.x_dims);
  P* mean = g.Temp<P>(ng.groups);
  P* rstd = g.Temp<P>(ng.groups);
  GroupStats<T, P>(g, in.x, ng, in.eps, mean, rstd, nullptr, nullptr, nullptr);
  const GradTerms<T, P> t{in.x, in.dy, in.scale, mean, rstd, ng};
  if (in.dx) {
    P* m1 = g.Temp<P>(ng.groups);
    P* m2 = g.Temp<P>(ng.groups);
    ReduceMid<double>(g, "norm_grad (m1)", 1, ng.groups, ng.size, DyhTerm<T, P>{t},
                      CastFinish<P>{m1, double(ng.size)});
    ReduceMid<double>(g, "norm_grad (m2)", 1, ng.groups, ng.size, DyhXhatTerm<T, P>{t},
                      CastFinish<P>{m2, double(ng.size)});
    Launch(g, "NormGradXKernel", n, NormGradXKernel<T, P>, t, static_cast<const P*>(m1),
           static_cast<const P*>(m2), in.dx, n);
  }
  // X as [pre, affine, post] around the Scale/Bias index: [groups, size, 1] for layer_norm,
  // [N, C, inner] for the channel norms, [N * inner, C, 1] for group_norm's NHWC.
  const int64_t pre = !ng.inner          ? ng.groups
                      : ng.channels_last ? in.x_dims[0] * ng.inner
                                         : in.x_dims[0];
  const int64_t post = ng.inner && !ng.channels_last ? ng.inner : 1;
  if (in.dscale)
    ReduceMid<double>(g, "norm_grad (dScale)", pre, ng.affine, post, DyXhatTerm<T, P>{t},
                      CastFinish<P>{in.dscale, 1.0});
  if (in.dbias)
    ReduceMid<double>(g, "norm_grad (dBias)", pre, ng.affine, post, DyTerm<T>{in.dy},
                      CastFinish<P>{in.dbias, 1.0});
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("layer_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("layer_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES);
