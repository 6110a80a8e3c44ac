// tide/ops/cross_entropy.hpp: Fluid's guards of cross_entropy and cross_entropy2 against log(0)
// and division by 0 (TolerableValue: -inf becomes -1e20, so Y stays finite and 0 * log(0) is 0),
// and cross_entropy2's rows and its grad's checks, for every implementation of them; the guards
// also in CUDA device code.
#ifndef TIDE_OPS_CROSS_ENTROPY_HPP_
#define TIDE_OPS_CROSS_ENTROPY_HPP_

#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/ops/loss.hpp>
#include <tide/plugin.hpp>

#include <math.h>

#include <algorithm>
#include <cstdint>

namespace tide {
namespace ops {

namespace xe_math {
TIDE_OPS_HOST_DEVICE inline float Log(float x) { return ::logf(x); }
TIDE_OPS_HOST_DEVICE inline double Log(double x) { return ::log(x); }
}  // namespace xe_math

// log(x), with +-inf taken as +-1e20.
template <typename T>
TIDE_OPS_HOST_DEVICE T TolerableLog(T x) {
  const T l = xe_math::Log(x);
  if (l == -static_cast<T>(INFINITY)) return static_cast<T>(-1e20);
  if (l == static_cast<T>(INFINITY)) return static_cast<T>(1e20);
  return l;
}

// A divisor of at least 1e-20 (std::max's choice: a NaN stays NaN).
template <typename T>
TIDE_OPS_HOST_DEVICE T SafeDenominator(T x) {
  return x < static_cast<T>(1e-20) ? static_cast<T>(1e-20) : x;
}

// X [..., D] as n rows of d classes.
struct XeRows {
  int64_t n, d;
};
inline XeRows GetXeRows(const Dims& x) {
  const int64_t d = x.back();
  return {DimsProduct(x) / std::max<int64_t>(d, 1), d};
}

// cross_entropy2_grad: X's dims from XShape, checked against Label, MatchX and Y@GRAD.
inline Dims CrossEntropy2GradXDims(const char* op, const Dims& xshape, const Dims& label,
                                   const Dims& match, const Dims& dy) {
  TIDE_CHECK(xshape.size() >= 3, "op '", op, "': XShape ", ToString(xshape),
             " is not [0] + the dims of an X of rank >= 2");
  const Dims x(xshape.begin() + 1, xshape.end());
  CheckCrossEntropyLabel(op, x, label, false);
  const int64_t n = GetXeRows(x).n;
  TIDE_CHECK(DimsProduct(match) == n && DimsProduct(dy) == n, "op '", op, "': MatchX ",
             ToString(match), " and Y@GRAD ", ToString(dy), " must hold one value per row of X ",
             ToString(x));
  return x;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CROSS_ENTROPY_HPP_
