// tide/kernels/batch_norm.hpp: the plain CPU kernel of batch_norm's forward over NCHW or NHWC
// (inputs read and checked by tide/ops/batch_norm.hpp): is_test / use_global_stats normalise with
// the running statistics and pass them through; training normalises with the batch's mean and
// (biased) variance and updates the running statistics (MeanOut / VarianceOut, usually Mean's and
// Variance's own variables). Header-only: ops_nn registers it, and a compiled model
// (tide.aot.compile) calls it directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_BATCH_NORM_HPP_
#define TIDE_KERNELS_BATCH_NORM_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/batch_norm.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace kernels {

template <typename T>
void BatchNorm(KernelContext& ctx) {
  const auto a = ops::GetBnArgs<T>(ctx);
  const ops::BnView v = a.v;
  const T eps = a.eps, momentum = a.momentum;
  const bool global = a.global;
  const T* xd = a.x;
  const T* sd = a.scale;
  const T* bd = a.bias;
  // Read the running statistics before MeanOut / VarianceOut (usually the same variables)
  // are written.
  std::vector<T> run_mean(a.mean, a.mean + v.c);
  std::vector<T> run_var(a.var, a.var + v.c);
  std::vector<T> mu(v.c), inv_std(v.c);
  const int64_t m = v.outer * v.inner;
  if (global) {
    for (int64_t c = 0; c < v.c; ++c) {
      mu[c] = run_mean[c];
      inv_std[c] = T(1) / std::sqrt(run_var[c] + eps);
    }
  } else {
    std::vector<T> batch_var(v.c);
    ParallelFor(ctx, v.c, m, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        T sum = 0;
        for (int64_t o = 0; o < v.outer; ++o) {
          const T* p = xd + (o * v.c + c) * v.inner;
          for (int64_t i = 0; i < v.inner; ++i) sum += p[i];
        }
        const T mean_c = sum / static_cast<T>(m);
        T sq = 0;
        for (int64_t o = 0; o < v.outer; ++o) {
          const T* p = xd + (o * v.c + c) * v.inner;
          for (int64_t i = 0; i < v.inner; ++i) sq += (p[i] - mean_c) * (p[i] - mean_c);
        }
        mu[c] = mean_c;
        batch_var[c] = sq / static_cast<T>(m);
        inv_std[c] = T(1) / std::sqrt(batch_var[c] + eps);
      }
    });
    if (Tensor mo = ctx.OptionalOutput("MeanOut")) {
      T* d = mo.mutable_data<T>({v.c}, ctx.place());
      for (int64_t c = 0; c < v.c; ++c) d[c] = run_mean[c] * momentum + mu[c] * (T(1) - momentum);
    }
    if (Tensor vo = ctx.OptionalOutput("VarianceOut")) {
      T* d = vo.mutable_data<T>({v.c}, ctx.place());
      for (int64_t c = 0; c < v.c; ++c)
        d[c] = run_var[c] * momentum + batch_var[c] * (T(1) - momentum);
    }
  }
  if (global) {  // the running statistics pass through unchanged
    if (Tensor mo = ctx.OptionalOutput("MeanOut"))
      std::copy(run_mean.begin(), run_mean.end(), mo.mutable_data<T>({v.c}, ctx.place()));
    if (Tensor vo = ctx.OptionalOutput("VarianceOut"))
      std::copy(run_var.begin(), run_var.end(), vo.mutable_data<T>({v.c}, ctx.place()));
  }
  if (Tensor sm = ctx.OptionalOutput("SavedMean"))
    std::copy(mu.begin(), mu.end(), sm.mutable_data<T>({v.c}, ctx.place()));
  if (Tensor sv = ctx.OptionalOutput("SavedVariance"))
    std::copy(inv_std.begin(), inv_std.end(), sv.mutable_data<T>({v.c}, ctx.place()));

  T* yd = ctx.Output("Y").mutable_data<T>(a.x_dims, ctx.place());
  ParallelFor(ctx, v.outer * v.c, v.inner, [&](int64_t b, int64_t e) {
    for (int64_t oc = b; oc < e; ++oc) {
      const int64_t c = oc % v.c;
      const T a = sd[c] * inv_std[c], shift = bd[c] - mu[c] * a;
      const T* p = xd + oc * v.inner;
      T* q = yd + oc * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) q[i] = p[i] * a + shift;
    }
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_BATCH_NORM_HPP_
