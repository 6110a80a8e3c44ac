// tide/ops/assign_value.hpp: assign_value (Fluid's assign of a numpy array): Out's dims are
// `shape` and its values the attribute of Out's dtype (fp32_values, int32_values, int64_values, or
// Paddle 2.0's bool_values, Paddle 2.6's fp64_values), which must hold one value per element; as
// every kernel reads them.
#ifndef TIDE_OPS_ASSIGN_VALUE_HPP_
#define TIDE_OPS_ASSIGN_VALUE_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <type_traits>
#include <vector>

namespace tide {
namespace ops {

// The attribute holding the values of a T Out.
template <typename T>
constexpr const char* AssignValuesAttr() {
  if constexpr (std::is_same_v<T, float>) return "fp32_values";
  if constexpr (std::is_same_v<T, double>) return "fp64_values";
  if constexpr (std::is_same_v<T, int32_t>) return "int32_values";
  if constexpr (std::is_same_v<T, int64_t>) return "int64_values";
  return "bool_values";
}

// Out's dims (`ctx`: a kernel's or shape inference's context).
template <typename Context>
Dims AssignValueDims(const Context& ctx) {
  const std::vector<int32_t> shape = ctx.template Attr<std::vector<int32_t>>("shape");
  return Dims(shape.begin(), shape.end());
}

// Out's values, checked against its dims.
template <typename T>
std::vector<T> AssignValues(const KernelContext& ctx, const Dims& dims) {
  const char* attr = AssignValuesAttr<T>();
  std::vector<T> v;
  if constexpr (std::is_same_v<T, bool>) {
    for (int32_t b : ctx.Attr<std::vector<int32_t>>(attr)) v.push_back(b != 0);
  } else if constexpr (std::is_same_v<T, double>) {
    // Paddle before 2.6 (and Tide's PIR reader) hold a float64 Out's values in fp32_values.
    v = ctx.Attr<std::vector<double>>(attr);
    if (v.empty())
      for (float f : ctx.Attr<std::vector<float>>("fp32_values")) v.push_back(f);
  } else {
    v = ctx.Attr<std::vector<T>>(attr);
  }
  const int64_t n = DimsProduct(dims);
  TIDE_CHECK(static_cast<int64_t>(v.size()) == n, "op '", ctx.op_type(), "': ", attr, " holds ",
             v.size(), " values, shape ", ToString(dims), " needs ", n);
  return v;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ASSIGN_VALUE_HPP_
