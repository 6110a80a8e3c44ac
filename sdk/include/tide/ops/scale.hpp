// tide/ops/scale.hpp: scale's inputs for every implementation: the factor (Paddle 2.x's
// ScaleTensor over the attribute), whether X's type holds the factor and bias (Fluid casts them
// to it), and a SelectedRows X, whose rows and height Out takes.
#ifndef TIDE_OPS_SCALE_HPP_
#define TIDE_OPS_SCALE_HPP_

#include <cmath>
#include <cstdint>
#include <limits>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <type_traits>
#include <vector>

namespace tide {
namespace ops {

// ScaleTensor's one element (read with `read`, see int_inputs.hpp) when given, else `scale`.
template <typename Read = ReadOnHost>
double ScaleFactor(const KernelContext& ctx, Read read = {}) {
  if (!ctx.HasInput("ScaleTensor")) return ctx.Attr<float>("scale");
  return NumberInput(ctx, "ScaleTensor", read).AsDouble();
}

// Whether T holds v: any v for a floating T; for an integer T a finite v in [-2^k, 2^k) (exact in
// double), whose integer part the cast keeps.
template <typename T>
bool HoldsScaleValue(double v) {
  if constexpr (std::is_integral_v<T>)
    return std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v < -static_cast<double>(std::numeric_limits<T>::min());
  return true;
}

// A SelectedRows X: Out, a SelectedRows, gets X's rows and height; `x` is X's values (not
// initialized when X lists no rows) and `out` Out's value tensor, to hold them scaled.
struct ScaledRows {
  Tensor x, out;
};

inline ScaledRows GetScaledRows(const KernelContext& ctx) {
  SelectedRows in = ctx.InputVar("X").GetSelectedRows();
  SelectedRows sr = ctx.OutputVar("Out").GetSelectedRows();
  const std::vector<int64_t> rows = in.rows();
  Tensor x = in.value();
  TIDE_CHECK(x.initialized() || rows.empty(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') lists ", rows.size(), " rows but has no value");
  sr.set_rows(rows);
  sr.set_height(in.height());
  return {x, sr.value()};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SCALE_HPP_
