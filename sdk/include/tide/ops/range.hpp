// tide/ops/range.hpp: range's inputs, length and elements ([Start, End) by Step), with its errors,
// for every implementation of it; RangeValue also in CUDA device code.
#ifndef TIDE_OPS_RANGE_HPP_
#define TIDE_OPS_RANGE_HPP_

#include <cmath>
#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// Start, End and Step hold one element each.
inline void CheckRangeInputs(const KernelContext& ctx) {
  for (const char* p : {"Start", "End", "Step"}) {
    const Dims d = ctx.Input(p).dims();
    TIDE_CHECK(DimsProduct(d) == 1, "op '", ctx.op_type(), "': ", p, " ('", ctx.InputName(p),
               "') must hold one element, got ", ToString(d));
  }
}

// The number of elements of [start, end) by step (`step_var` names Step's variable); integers
// count exactly, floats as ceil((end - start) / step) in T.
template <typename T>
int64_t RangeSize(const char* op, T start, T end, T step, const std::string& step_var) {
  TIDE_CHECK(step != T(0), "op '", op, "': Step ('", step_var, "') is 0");
  if constexpr (std::is_integral_v<T>) {
    return step > 0 ? (end > start ? (end - start + step - 1) / step : 0)
                    : (start > end ? (start - end - step - 1) / (-step) : 0);
  } else {
    const T n = std::ceil((end - start) / step);
    // 2^62: far beyond any tensor, and exact in float and double.
    TIDE_CHECK(!std::isnan(n) && n < T(4611686018427387904.0), "op '", op, "': Start ", start,
               ", End ", end, " and Step ", step, " give no finite number of elements");
    return n > T(0) ? static_cast<int64_t>(n) : 0;
  }
}

// Element i of the range.
template <typename T>
TIDE_OPS_HOST_DEVICE T RangeValue(T start, T step, int64_t i) {
  return static_cast<T>(start + static_cast<T>(i) * step);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_RANGE_HPP_
