// tide/kernels/norm.hpp: the plain CPU forward kernel of layer_norm, group_norm and
// instance_norm (X seen as groups normalised on their own, tide/ops/norm.hpp; Y = Scale * (X -
// mean) / sqrt(var + epsilon) + Bias), the statistics summed in double, header-only: ops_nn
// registers it (and its grads call NormStats), and a compiled model (tide.aot.compile) calls it
// directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_NORM_HPP_
#define TIDE_KERNELS_NORM_HPP_

#include <cmath>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/norm.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Group k's statistics, its elements summed in NormGroups::Offset's order.
template <typename T>
void NormStats(const T* x, const ops::NormGroups& g, int64_t k, double eps, T* mean, T* rstd,
               T* var) {
  const int64_t n = g.size;
  double m = 0, v = 0;
  for (int64_t j = 0; j < n; ++j) m += x[g.Offset(k, j)];
  m /= n;
  for (int64_t j = 0; j < n; ++j) {
    const double d = x[g.Offset(k, j)] - m;
    v += d * d;
  }
  v /= n;
  *mean = static_cast<T>(m);
  *var = static_cast<T>(v);
  *rstd = static_cast<T>(1.0 / std::sqrt(v + eps));
}

// Y, and the groups' means and variances (instance_norm: 1 / sqrt(var + epsilon)) where wanted.
template <typename T>
void Norm(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const auto in = ops::GetNormArgs<T>(ctx);
  const ops::NormGroups& g = in.g;
  const double eps = in.eps;
  const T* xd = in.x;
  const T* scale = in.scale;
  const T* bias = in.bias;
  T* y = in.y;
  Tensor mt = ctx.OptionalOutput(ops::NormMeanName(op)),
         vt = ctx.OptionalOutput(ops::NormVarName(op));
  const Dims stat = ops::NormStatDims(ctx, in.x_dims, g);
  T* md = mt ? mt.mutable_data<T>(stat, ctx.place()) : nullptr;
  T* vd = vt ? vt.mutable_data<T>(stat, ctx.place()) : nullptr;
  ParallelFor(ctx, g.groups, g.size * 4, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      T mean, rstd, var;
      NormStats(xd, g, k, eps, &mean, &rstd, &var);
      if (md) md[k] = mean;
      if (vd) vd[k] = ops::IsInstanceNorm(op) ? rstd : var;
      for (int64_t j = 0; j < g.size; ++j) {
        const int64_t i = g.Offset(k, j), a = g.AffineIndex(i);
        y[i] = (xd[i] - mean) * rstd * (scale ? scale[a] : T(1)) + (bias ? bias[a] : T(0));
      }
    }
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_NORM_HPP_
