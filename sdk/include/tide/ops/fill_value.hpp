// tide/ops/fill_value.hpp: fill_constant's value, as Paddle reads it: ValueTensor's one element,
// else a non-empty str_value ("inf", "-inf", "nan", an exact integer), else the float attribute
// `value`; converted to Out's type only where that type holds it (an error naming the op and
// where the value came from, never a saturated or wrapped number). A complex Out takes the value
// as its real part, imaginary 0 (Paddle saves a complex fill as two real fills and `complex`).
// Each device reads ValueTensor its way.
#ifndef TIDE_OPS_FILL_VALUE_HPP_
#define TIDE_OPS_FILL_VALUE_HPP_

#include <cmath>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <tide/ops/complex.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// `v` as a T when T holds it (an integer T: no NaN, no fraction dropped past its range), else an
// error naming where the value came from (C++ leaves such conversions undefined or wrapping). A
// bool is true when v is not 0, as Fluid's static_cast (NaN included).
template <typename T, typename S>
T FitValue(const char* op, S v, const char* from) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<T>) {
    bool fits;
    if constexpr (std::is_floating_point_v<S>)  // [lo, hi + 1): both limits exact as long double
      fits =
          !std::isnan(v) &&
          static_cast<long double>(v) >= static_cast<long double>(std::numeric_limits<T>::min()) &&
          static_cast<long double>(v) <
              static_cast<long double>(std::numeric_limits<T>::max()) + 1.0L;
    else
      fits = v >= static_cast<S>(std::numeric_limits<T>::min()) &&
             v <= static_cast<S>(std::numeric_limits<T>::max());
    if (!fits) {
      std::ostringstream text;
      text << v;
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': ", from, " ", text.str(), " does not fit ",
                 DataTypeName(DataTypeOf<T>()));
    }
  }
  return static_cast<T>(v);
}

// A Number (tide/ops/int_inputs.hpp) as a T, by the rule above.
template <typename T>
T FitNumber(const char* op, const Number& n, const char* from) {
  return n.is_int ? FitValue<T>(op, n.i, from) : FitValue<T>(op, n.f, from);
}

// The fill value of a real T. `value_tensor(param)` gives ValueTensor's one element (NumberInput).
template <typename T, typename ValueTensor>
T RealFillValue(const KernelContext& ctx, ValueTensor value_tensor) {
  const char* op = ctx.op_type();
  if (ctx.HasInput("ValueTensor"))
    return FitNumber<T>(op, value_tensor("ValueTensor"), "ValueTensor");
  const std::string sv = ctx.HasAttr("str_value") ? ctx.Attr<std::string>("str_value") : "";
  if (sv.empty()) return FitValue<T>(op, ctx.Attr<float>("value"), "value");
  if (sv == "inf" || sv == "-inf" || sv == "nan") {
    TIDE_CHECK(std::numeric_limits<T>::has_quiet_NaN, "op '", op, "': str_value '", sv,
               "' needs a floating-point dtype, got ", DataTypeName(DataTypeOf<T>()));
    if (sv == "nan") return std::numeric_limits<T>::quiet_NaN();
    return sv == "inf" ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  }
  // Integers exactly; a bool as Fluid reads it, through a double ("1.0" is true).
  constexpr bool kExact = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  size_t used = 0;
  long long i = 0;
  double d = 0;
  try {
    if constexpr (kExact)
      i = std::stoll(sv, &used);
    else
      d = std::stod(sv, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  TIDE_CHECK(used == sv.size(), "op '", op, "': str_value '", sv, "' is not a number of ",
             DataTypeName(DataTypeOf<T>()));
  if constexpr (kExact) return FitValue<T>(op, i, "str_value");
  return FitValue<T>(op, d, "str_value");
}

// The fill value; of a complex T, the real value with imaginary part 0.
template <typename T, typename ValueTensor>
T FillValue(const KernelContext& ctx, ValueTensor value_tensor) {
  if constexpr (kIsComplex<T>)
    return T(RealFillValue<RealType<T>>(ctx, value_tensor));
  else
    return RealFillValue<T>(ctx, value_tensor);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_FILL_VALUE_HPP_
