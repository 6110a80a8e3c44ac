// tide/kernels/scale.hpp: the plain CPU kernel of scale (Out = scale * X + bias, or
// scale * (X + bias); a SelectedRows X gives a SelectedRows Out), header-only: ops_math registers
// it, and a compiled model (tide.aot.compile) calls it directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_SCALE_HPP_
#define TIDE_KERNELS_SCALE_HPP_

#include <tide/kernels/common.hpp>
#include <tide/ops/scale.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// scale or bias as X's type, as Fluid casts them; for an integer X the value must be finite and
// within the type's range (a fuzzer finding: a NaN scale on an int64 X was undefined behaviour).
template <typename T>
T ScaleParam(double v, const char* what) {
  TIDE_CHECK(tide::ops::HoldsScaleValue<T>(v), "op 'scale': ", what, " ", v, " has no ",
             tide::DataTypeName(tide::DataTypeOf<T>()), " value (X is ",
             tide::DataTypeName(tide::DataTypeOf<T>()), ")");
  return static_cast<T>(v);
}

// Out = scale * X + bias (or scale * (X + bias)) elementwise, Out resized like X.
template <typename T>
void ScaleValues(KernelContext& ctx, const Tensor& x, Tensor& out) {
  T scale = ScaleParam<T>(tide::ops::ScaleFactor(ctx), "scale"),
    bias = ScaleParam<T>(ctx.Attr<float>("bias"), "bias");
  out.ResizeLike(x);
  if (ctx.Attr<bool>("bias_after_scale"))
    EigenEval(ctx, Out<T>(out, ctx), In<T>(x) * scale + bias);
  else
    EigenEval(ctx, Out<T>(out, ctx), (In<T>(x) + bias) * scale);
}

// values(ctx, x, out) on X and Out, or, for a SelectedRows X (Fluid), on its values and those of
// a SelectedRows Out given X's rows and height. Another element type's kernel (ops_math's
// bfloat16 one) passes its own values function.
template <typename Values>
void ScaleDenseOrRows(KernelContext& ctx, Values values) {
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) {
    tide::ops::ScaledRows r = tide::ops::GetScaledRows(ctx);
    if (r.x.initialized()) values(ctx, r.x, r.out);
    return;
  }
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  values(ctx, x, out);
}

template <typename T>
void Scale(KernelContext& ctx) {
  ScaleDenseOrRows(ctx, ScaleValues<T>);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_SCALE_HPP_
