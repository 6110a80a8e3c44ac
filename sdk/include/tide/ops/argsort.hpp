// tide/ops/argsort.hpp: argsort's order, for every implementation of it, so Out and Indices are
// the same everywhere: ascending (descending: largest first) by value, NaN after every number
// (descending: before), -0 equal to 0, and equal values in X's order (a stable sort, also when
// descending). Host and device; ArgsortKey for a device's sort.
#ifndef TIDE_OPS_ARGSORT_HPP_
#define TIDE_OPS_ARGSORT_HPP_

#include <tide/ops/host_device.hpp>

#include <math.h>
#include <string.h>

#include <cstdint>
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

// The key argsort sorts value `v` by on a device: an integer whose `<` (and bit order, for a radix
// sort) is ArgsortLess's order, so a stable sort of the keys gives argsort's Indices. Integers
// are their own keys; a float's key is its bits with every NaN as one positive NaN and -0 as 0,
// flipped so that unsigned order is numeric order (NaN after +inf).
template <typename T>
struct ArgsortKeyOf {
  using type = T;
};
template <>
struct ArgsortKeyOf<float> {
  using type = uint32_t;
};
template <>
struct ArgsortKeyOf<double> {
  using type = uint64_t;
};

template <typename T>
TIDE_OPS_HOST_DEVICE typename ArgsortKeyOf<T>::type ArgsortKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = typename ArgsortKeyOf<T>::type;
    if (v != v) v = static_cast<T>(NAN);
    if (v == T(0)) v = T(0);
    U bits;
    memcpy(&bits, &v, sizeof(bits));
    const U sign = U(1) << (sizeof(U) * 8 - 1);
    return (bits & sign) ? U(~bits) : U(bits | sign);
  } else {
    return v;
  }
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ARGSORT_HPP_
