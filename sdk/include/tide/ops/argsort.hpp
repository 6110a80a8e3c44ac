// tide/ops/argsort.hpp: argsort's order, for every implementation of it, so Out and Indices are
// the same everywhere: ascending (descending: largest first) by value, NaN after every number
// (descending: before), -0 equal to 0, and equal values in X's order (a stable sort, also when
// descending). Host and device.
#ifndef TIDE_OPS_ARGSORT_HPP_
#define TIDE_OPS_ARGSORT_HPP_

#include <tide/ops/host_device.hpp>

#include <math.h>

#include <type_traits>

namespace tide {
namespace ops {

// a < b in argsort's ascending order: a strict weak order also with NaNs (which are equal to
// each other and after every number), unlike operator<.
template <typename T>
TIDE_OPS_HOST_DEVICE bool ArgsortLess(T a, T b) {
  if (b != b) return a == a;  // only a number is before a NaN
  return a < b;
}

// Whether a value `a` goes before `b` (a stable sort keeps equal values in X's order).
template <typename T>
TIDE_OPS_HOST_DEVICE bool ArgsortBefore(T a, T b, bool descending) {
  return descending ? ArgsortLess(b, a) : ArgsortLess(a, b);
}

// The key a radix sort orders value `v` by, so that a stable radix sort (CUB's orders floats by
// their bits, -0 before 0, a NaN by its sign) gives ArgsortBefore's order: every NaN as one
// positive NaN (after +inf), -0 as 0.
template <typename T>
TIDE_OPS_HOST_DEVICE T ArgsortKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) return static_cast<T>(NAN);
    if (v == T(0)) return T(0);
  }
  return v;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ARGSORT_HPP_
