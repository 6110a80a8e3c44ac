// cast_op.cc: cast (Out = X converted to out_dtype); its grad casts back. A float cast to an
// integer type is defined for every value (C++ leaves NaN and out-of-range values undefined):
// it truncates toward zero, saturates at the type's limits (+-inf included), and NaN becomes 0.
#include <tide/ops/cast.hpp>
#include <tide/ops/dtype_attr.hpp>

#include "common.h"

namespace ops_math {
namespace {

// A float to an integer type: tide/ops/cast.hpp's rule, as on every device.
template <typename From, typename To>
struct Saturating {
  To operator()(From v) const { return tide::ops::SaturatingCast<To>(v); }
};

template <typename From, typename To>
void CastTo(const KernelContext& ctx, const Tensor& x, Tensor& out) {
  out.Resize(x.dims());
  if constexpr (tide::ops::NeedsSaturatingCast<From, To>::value)
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).unaryExpr(Saturating<From, To>()));
  else
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).template cast<To>());
}

template <typename T>
void CastKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  auto to = tide::ops::DataTypeAttr(ctx, "out_dtype");
  switch (to) {
    case TIDE_FP32: CastTo<T, float>(ctx, x, out); break;
    case TIDE_FP64: CastTo<T, double>(ctx, x, out); break;
    case TIDE_INT32: CastTo<T, int32_t>(ctx, x, out); break;
    case TIDE_INT64: CastTo<T, int64_t>(ctx, x, out); break;
    case TIDE_BOOL: CastTo<T, bool>(ctx, x, out); break;
    case TIDE_UINT8: CastTo<T, uint8_t>(ctx, x, out); break;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'cast': no CPU cast from ", tide::DataTypeName(x.dtype()),
                 " to ", tide::DataTypeName(to));
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("cast")
                     .Comment("Out = X converted to out_dtype; float to integer truncates, saturates at the "
                              "limits and maps NaN to 0.")
                     .Input("X", "input").Output("Out", "X's values as out_dtype")
                     .Attr("in_dtype", int32_t(TIDE_FP32), "X's element type (TideDataType)")
                     .Attr("out_dtype", int32_t(TIDE_FP32), "Out's element type (TideDataType)")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", c.InputDims("X"));
                       c.SetOutputDataType("Out", tide::ops::DataTypeAttr(c, "out_dtype"));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("cast")
                           .Input("X", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("in_dtype", g.Attr<int32_t>("out_dtype"))
                           .Attr("out_dtype", g.Attr<int32_t>("in_dtype"));
                     }));
TIDE_REGISTER_KERNEL("cast", "cpu", CastKernel, float, double, int32_t, int64_t, bool, uint8_t);
