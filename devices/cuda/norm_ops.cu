// norm_ops.cu: layer_norm, group_norm (NCHW or NHWC) and instance_norm (+ grads) on the GPU, with
// ops_nn's rules (tide/ops/norm.hpp: X as groups normalised on their own) and formulas: the
// statistics in double, two passes (mean, then the mean squared deviation), as the CPU kernel
// computes them; the grads recompute them from X. Every sum is a ReduceMid (reduce.cuh), the same
// from run to run; a group's sums run over [groups, size] in NormGroups::Offset's order.
#include <string>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/norm.hpp>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::NormGroups;

using tide::ops::IsInstanceNorm;

// Group statistics: mean (double, for the second pass) and, as T, the mean, the variance and
// 1 / sqrt(var + epsilon). The terms see group k's j-th element as e = k * size + j.
template <typename T>
struct GroupLoadTerm {
  const T* x;
  NormGroups ng;
  __device__ double operator()(int64_t e, int64_t k) const {
    return static_cast<double>(x[ng.Offset(k, e - k * ng.size)]);
  }
};
template <typename T>
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
    const double d = static_cast<double>(x[ng.Offset(k, e - k * ng.size)]) - mean[k];
    return d * d;
  }
};
template <typename T>
struct StatsFinish {
  const double* mean_d;
  T *mean, *var, *rstd;
  double size, eps;
  __device__ void operator()(int64_t k, double s) const {
    const double v = s / size;
    mean[k] = static_cast<T>(mean_d[k]);
    if (var) var[k] = static_cast<T>(v);
    rstd[k] = static_cast<T>(1.0 / sqrt(v + eps));
  }
};

template <typename T>
void GroupStats(const Gpu& g, const T* x, const NormGroups& ng, double eps, T* mean, T* var,
                T* rstd) {
  double* mean_d = g.Temp<double>(ng.groups);
  ReduceMid<double>(g, "norm (mean)", 1, ng.groups, ng.size, GroupLoadTerm<T>{x, ng},
                    DoubleMeanFinish<T>{mean_d, double(ng.size)});
  ReduceMid<double>(g, "norm (variance)", 1, ng.groups, ng.size, SqDevTerm<T>{x, mean_d, ng},
                    StatsFinish<T>{mean_d, mean, var, rstd, double(ng.size), eps});
}

template <typename T>
__global__ void NormForwardKernel(const T* x, const T* mean, const T* rstd, const T* scale,
                                  const T* bias, NormGroups ng, T* y, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t k = ng.GroupOf(i), a = ng.AffineIndex(i);
    y[i] = (x[i] - mean[k]) * rstd[k] * (scale ? scale[a] : T(1)) + (bias ? bias[a] : T(0));
  }
}

template <typename T>
void NormKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const auto in = tide::ops::GetNormArgs<T>(ctx);
  const NormGroups& ng = in.g;
  const bool instance = IsInstanceNorm(op);
  Tensor mt = ctx.OptionalOutput(tide::ops::NormMeanName(op));
  Tensor vt = ctx.OptionalOutput(tide::ops::NormVarName(op));
  const Dims stat = tide::ops::NormStatDims(ctx, in.x_dims, ng);
  T* mean = mt ? mt.mutable_data<T>(stat, g.place()) : g.Temp<T>(ng.groups);
  T* rstd = instance && vt ? vt.mutable_data<T>(stat, g.place()) : g.Temp<T>(ng.groups);
  T* var = !instance && vt ? vt.mutable_data<T>(stat, g.place()) : nullptr;
  GroupStats<T>(g, in.x, ng, in.eps, mean, var, rstd);
  const int64_t n = DimsProduct(in.x_dims);
  Launch(g, "NormForwardKernel", n, NormForwardKernel<T>, in.x, mean, rstd, in.scale, in.bias, ng,
         in.y, n);
}

// ---------------------------------------------------------------------------------------------
// Grad: with xhat = (x - mean) * rstd and dyh = dy * scale, per group m1 = mean(dyh),
// m2 = mean(dyh * xhat); dX = rstd * (dyh - m1 - xhat * m2); dScale = sum(dy * xhat),
// dBias = sum(dy) over the elements of each Scale/Bias index. e is an offset in X.
template <typename T>
struct GradTerms {
  const T *x, *dy, *scale, *mean, *rstd;
  NormGroups ng;
  __device__ T Xhat(int64_t e) const {
    const int64_t k = ng.GroupOf(e);
    return (x[e] - mean[k]) * rstd[k];
  }
  __device__ T Dyh(int64_t e) const { return dy[e] * (scale ? scale[ng.AffineIndex(e)] : T(1)); }
  // X's offset of group k's element at e = k * size + j (a group-wise ReduceMid's index).
  __device__ int64_t InGroup(int64_t e, int64_t k) const { return ng.Offset(k, e - k * ng.size); }
};
template <typename T>
struct DyhTerm {
  GradTerms<T> t;
  __device__ double operator()(int64_t e, int64_t k) const { return t.Dyh(t.InGroup(e, k)); }
};
template <typename T>
struct DyhXhatTerm {
  GradTerms<T> t;
  __device__ double operator()(int64_t e, int64_t k) const {
    const int64_t i = t.InGroup(e, k);
    return t.Dyh(i) * t.Xhat(i);
  }
};
template <typename T>
struct DyXhatTerm {
  GradTerms<T> t;
  __device__ double operator()(int64_t e, int64_t) const { return t.dy[e] * t.Xhat(e); }
};
template <typename T>
struct DyTerm {
  const T* dy;
  __device__ double operator()(int64_t e, int64_t) const { return dy[e]; }
};
template <typename T>
struct CastFinish {  // out[j] = sum / divisor, as T
  T* out;
  double divisor;
  __device__ void operator()(int64_t j, double s) const { out[j] = static_cast<T>(s / divisor); }
};

template <typename T>
__global__ void NormGradXKernel(GradTerms<T> t, const T* m1, const T* m2, T* dx, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t k = t.ng.GroupOf(i);
    dx[i] = t.rstd[k] * (t.Dyh(i) - m1[k] - t.Xhat(i) * m2[k]);
  }
}

template <typename T>
void NormGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto in = tide::ops::GetNormGradArgs<T>(ctx);
  const NormGroups& ng = in.g;
  const int64_t n = DimsProduct(in.x_dims);
  T* mean = g.Temp<T>(ng.groups);
  T* rstd = g.Temp<T>(ng.groups);
  GroupStats<T>(g, in.x, ng, in.eps, mean, nullptr, rstd);
  const GradTerms<T> t{in.x, in.dy, in.scale, mean, rstd, ng};
  if (in.dx) {
    T* m1 = g.Temp<T>(ng.groups);
    T* m2 = g.Temp<T>(ng.groups);
    ReduceMid<double>(g, "norm_grad (m1)", 1, ng.groups, ng.size, DyhTerm<T>{t},
                      CastFinish<T>{m1, double(ng.size)});
    ReduceMid<double>(g, "norm_grad (m2)", 1, ng.groups, ng.size, DyhXhatTerm<T>{t},
                      CastFinish<T>{m2, double(ng.size)});
    Launch(g, "NormGradXKernel", n, NormGradXKernel<T>, t, m1, m2, in.dx, n);
  }
  // X as [pre, affine, post] around the Scale/Bias index: [groups, size, 1] for layer_norm,
  // [N, C, inner] for the channel norms, [N * inner, C, 1] for group_norm's NHWC.
  const int64_t pre = !ng.inner          ? ng.groups
                      : ng.channels_last ? in.x_dims[0] * ng.inner
                                         : in.x_dims[0];
  const int64_t post = ng.inner && !ng.channels_last ? ng.inner : 1;
  if (in.dscale)
    ReduceMid<double>(g, "norm_grad (dScale)", pre, ng.affine, post, DyXhatTerm<T>{t},
                      CastFinish<T>{in.dscale, 1.0});
  if (in.dbias)
    ReduceMid<double>(g, "norm_grad (dBias)", pre, ng.affine, post, DyTerm<T>{in.dy},
                      CastFinish<T>{in.dbias, 1.0});
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("layer_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("layer_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm", "gpu", NormKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm_grad", "gpu", NormGradKernel, TIDE_CUDA_FLOAT_TYPES);
