// tide/ops/cast.hpp: cast's value rule, for every implementation of it: a float converted to an
// integer type truncates toward 0, saturates at the type's limits (+-inf and out-of-range values
// included) and maps NaN to 0, where C++ leaves these undefined. Callable from CUDA kernels.
#ifndef TIDE_OPS_CAST_HPP_
#define TIDE_OPS_CAST_HPP_

#include <cstdint>
#include <tide/ops/host_device.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// The integer types' limits as functions a device can call (no std::numeric_limits there).
template <typename T>
struct IntRange;
#define TIDE_OPS_INT_RANGE(T, LO, HI)                           \
  template <>                                                   \
  struct IntRange<T> {                                          \
    static TIDE_OPS_HOST_DEVICE constexpr T lo() { return LO; } \
    static TIDE_OPS_HOST_DEVICE constexpr T hi() { return HI; } \
  };
TIDE_OPS_INT_RANGE(int8_t, INT8_MIN, INT8_MAX)
TIDE_OPS_INT_RANGE(uint8_t, 0, UINT8_MAX)
TIDE_OPS_INT_RANGE(int16_t, INT16_MIN, INT16_MAX)
TIDE_OPS_INT_RANGE(int32_t, INT32_MIN, INT32_MAX)
TIDE_OPS_INT_RANGE(int64_t, INT64_MIN, INT64_MAX)
#undef TIDE_OPS_INT_RANGE

// Float (float, double) to a non-bool integer type, defined for every value.
template <typename To, typename From>
TIDE_OPS_HOST_DEVICE inline To SaturatingCast(From v) {
  static_assert(std::is_floating_point<From>::value && std::is_integral<To>::value &&
                    !std::is_same<To, bool>::value,
                "SaturatingCast: float to a non-bool integer type");
  if (v != v) return To(0);  // NaN
  // The limits as From: exact for the lower one (0 or -2^k); the upper one (2^k - 1) may round up
  // to 2^k, which is out of range too.
  if (v <= static_cast<From>(IntRange<To>::lo())) return IntRange<To>::lo();
  if (v >= static_cast<From>(IntRange<To>::hi())) return IntRange<To>::hi();
  return static_cast<To>(v);
}

// Whether a From -> To conversion goes through SaturatingCast.
template <typename From, typename To>
struct NeedsSaturatingCast : std::integral_constant<bool, std::is_floating_point<From>::value &&
                                                              std::is_integral<To>::value &&
                                                              !std::is_same<To, bool>::value> {};

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CAST_HPP_
