// tide/kernels/softmax.hpp: the plain CPU kernel of softmax (along one axis, numerically
// stable: the maximum subtracted before exp), header-only: ops_math registers it, and a compiled
// model (tide.aot.compile) calls it directly (tide/kernels/registry.hpp). With it, the causal
// mask of fused_softmax_mask_upper_triangle (oneDNN's kernel adds it the same way).
#ifndef TIDE_KERNELS_SOFTMAX_HPP_
#define TIDE_KERNELS_SOFTMAX_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/softmax.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Softmax along the middle dim of `s` ([pre, n, post]) from x into out, which may be x.
template <typename T>
void SoftmaxLines(const T* xd, T* od, const ops::AxisSplit& s) {
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      const T* xi = xd + i * s.n * s.post + k;
      T* oi = od + i * s.n * s.post + k;
      T mx = xi[0];
      for (int64_t j = 1; j < s.n; ++j) mx = std::max(mx, xi[j * s.post]);
      T sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += (oi[j * s.post] = std::exp(xi[j * s.post] - mx));
      for (int64_t j = 0; j < s.n; ++j) oi[j * s.post] /= sum;
    }
}

// Softmax's lines split over the CPU pool by `pre` (each line computed as SoftmaxLines does: the
// same values on any number of threads). On one thread, a LLaMA prefill's [1, 16, 128, 128]
// attention probabilities took 1 ms per op.
template <typename T>
void Softmax(KernelContext& ctx) {
  const auto a = tide::ops::GetSoftmaxArgs<T>(ctx);
  const ops::AxisSplit& s = a.s;
  const int64_t line = s.n * s.post;
  ParallelFor(ctx, s.pre, 16 * line, [&](int64_t i0, int64_t i1) {
    SoftmaxLines(a.x + i0 * line, a.out + i0 * line, ops::AxisSplit{i1 - i0, s.n, s.post, s.axis});
  });
}

// fused_softmax_mask_upper_triangle's mask: out = x with `value` added to the entries (i, j) of
// the last two dims [q, k] where j - i >= diagonal (a causal mask's strictly upper triangle at
// diagonal 1), as x + tril_triu(fill_any_like(x, value), diagonal, lower=false) computes it; -inf
// gives those entries probability 0. `rows` rows of k from row `row0` of X on (i = row % q),
// over the CPU pool.
template <typename T>
void AddUpperTriangleMask(const KernelContext& ctx, const T* x, T* out, int64_t rows, int64_t q,
                          int64_t k, T value, int64_t diagonal, int64_t row0 = 0) {
  ParallelFor(ctx, rows, 2 * k, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * k;
      T* o = out + r * k;
      const int64_t from = std::min(k, std::max<int64_t>(0, (row0 + r) % q + diagonal));
      if (o != xr) std::copy(xr, xr + from, o);
      for (int64_t j = from; j < k; ++j) o[j] = xr[j] + value;
    }
  });
}

// The mask's arguments: X as rows of its last dim, q = its second-to-last dim (1 for a vector).
struct UpperTriangleMask {
  int64_t rows = 0, q = 1, k = 0;
  double value = 0;
  int64_t diagonal = 1;
};
inline UpperTriangleMask GetUpperTriangleMask(const KernelContext& ctx, const Dims& d) {
  TIDE_CHECK(!d.empty(), "op '", ctx.op_type(), "': X must have at least 1 dim, got a 0-D tensor");
  UpperTriangleMask m;
  m.k = d.back();
  m.q = d.size() >= 2 ? d[d.size() - 2] : 1;
  m.rows = m.k > 0 ? ops::DimsProduct(d) / m.k : 0;
  m.value = ctx.Attr<float>("mask_value");
  m.diagonal = ctx.Attr<int32_t>("diagonal");
  return m;
}

// fused_softmax_mask_upper_triangle: softmax along the last dim of x plus the mask.
template <typename T>
void SoftmaxMaskUpperTriangle(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UpperTriangleMask m = GetUpperTriangleMask(ctx, x.dims());
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  AddUpperTriangleMask<T>(ctx, x.data<T>(), out, m.rows, m.q, m.k, static_cast<T>(m.value),
                          m.diagonal);
  ParallelFor(ctx, m.rows, 16 * m.k, [&](int64_t r0, int64_t r1) {
    SoftmaxLines(out + r0 * m.k, out + r0 * m.k, ops::AxisSplit{r1 - r0, m.k, 1, 0});
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_SOFTMAX_HPP_
