// tide/low_precision.hpp: the 2-byte float element types, tide::float16 (IEEE half) and
// tide::bfloat16 (float32's exponent, 8 bits of mantissa): Eigen's, so kernels get Eigen's
// arithmetic and vectorisation on them. Their conversions from float round to nearest even and
// keep NaN a NaN (of the same sign); to float they are exact. With their data types, so that
// Tensor::data<tide::bfloat16>() and the registration macros take them like float.
#ifndef TIDE_LOW_PRECISION_HPP_
#define TIDE_LOW_PRECISION_HPP_

#include <Eigen/Core>
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

}  // namespace tide

#endif  // TIDE_LOW_PRECISION_HPP_
