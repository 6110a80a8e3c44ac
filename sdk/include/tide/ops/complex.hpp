// tide/ops/complex.hpp: complex64 / complex128 (std::complex<float> / <double>) and their real
// types, for kernels templated on an element type and for shape inference that maps one to the
// other (paddle.real, abs of a complex X, complex(X, Y), an FFT's real input).
#ifndef TIDE_OPS_COMPLEX_HPP_
#define TIDE_OPS_COMPLEX_HPP_

#include <complex>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// Whether T is std::complex<float> or std::complex<double>.
template <typename T>
struct IsComplex : std::false_type {};
template <typename R>
struct IsComplex<std::complex<R>> : std::true_type {};
template <typename T>
inline constexpr bool kIsComplex = IsComplex<T>::value;

// The type of a complex T's parts (float for complex64); any other T itself.
template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using RealType = typename RealOf<T>::type;

inline bool IsComplexType(TideDataType t) { return t == TIDE_COMPLEX64 || t == TIDE_COMPLEX128; }

// complex64 -> float32, complex128 -> float64; any other type itself (undefined stays undefined).
inline TideDataType RealTypeOf(TideDataType t) {
  if (t == TIDE_COMPLEX64) return TIDE_FP32;
  if (t == TIDE_COMPLEX128) return TIDE_FP64;
  return t;
}

// float32 -> complex64, float64 -> complex128, a complex type itself; any other type (which has
// no complex counterpart) TIDE_UNDEFINED.
inline TideDataType ComplexTypeOf(TideDataType t) {
  if (t == TIDE_FP32 || t == TIDE_COMPLEX64) return TIDE_COMPLEX64;
  if (t == TIDE_FP64 || t == TIDE_COMPLEX128) return TIDE_COMPLEX128;
  return TIDE_UNDEFINED;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_COMPLEX_HPP_
