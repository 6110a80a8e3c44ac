// tide/low_precision.hpp: the 2-byte float element types, tide::float16 (IEEE half) and
// tide::bfloat16 (float32's exponent, 8 bits of mantissa): Eigen's, so kernels get Eigen's
// arithmetic and vectorisation on them. Their conversions from float round to nearest even and
// keep NaN a NaN (of the same sign); to float they are exact. With their data types, so that
// Tensor::data<tide::bfloat16>() and the registration macros take them like float.
#ifndef TIDE_LOW_PRECISION_HPP_
#define TIDE_LOW_PRECISION_HPP_

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <tide/plugin/data_type.hpp>

namespace tide {

using float16 = Eigen::half;
using bfloat16 = Eigen::bfloat16;

template <>
struct DataTypeTrait<float16> {
  static constexpr TideDataType value = TIDE_FP16;
};
template <>
struct DataTypeTrait<bfloat16> {
  static constexpr TideDataType value = TIDE_BF16;
};

// Arrays of bfloat16, as their bits, from and to float, bit for bit as Eigen converts each value,
// in integer loops a compiler vectorizes (Eigen's portable build converts one value at a time).
// A pack may compile them for several ISAs by calling them from target_clones functions (ops_math's
// bf16_convert.cc).
// y[i] = x[i] rounded to the nearest even bfloat16; a NaN becomes the quiet NaN of its sign.
inline void FloatToBfloat16Bits(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], sizeof u);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
    y[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}
// y[i] = x[i] widened to float (exact).
inline void Bfloat16BitsToFloat(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(&y[i], &u, sizeof u);
  }
}
inline const uint16_t* Bits(const bfloat16* p) { return reinterpret_cast<const uint16_t*>(p); }
inline uint16_t* Bits(bfloat16* p) { return reinterpret_cast<uint16_t*>(p); }
static_assert(sizeof(bfloat16) == sizeof(uint16_t), "bfloat16 is its 16 bits");

}  // namespace tide

#endif  // TIDE_LOW_PRECISION_HPP_
