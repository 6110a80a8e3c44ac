// tide/kernels/softmax.hpp: the plain CPU kernel of softmax (along one axis, numerically
// stable: the maximum subtracted before exp), header-only: ops_math registers it, and a compiled
// model (tide.aot.compile) calls it directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_SOFTMAX_HPP_
#define TIDE_KERNELS_SOFTMAX_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tide/eigen.hpp>
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

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_SOFTMAX_HPP_
