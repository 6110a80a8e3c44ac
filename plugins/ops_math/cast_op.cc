// cast_op.cc: cast (Out = X converted to out_dtype); its grad casts back. A float cast to an
// integer type is defined for every value (C++ leaves NaN and out-of-range values undefined):
// it truncates toward zero, saturates at the type's limits (+-inf included), and NaN becomes 0.
// float16 (Eigen::half) converts through float: to it rounding to nearest even (float64 rounds
// to float first), from it exactly; a float16 to an integer follows the float rule.
#include <tide/ops/cast.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <type_traits>

#include "common.h"

namespace tide {
// Eigen::half tensors are TIDE_FP16 (plugin.hpp knows only the host's built-in types).
template <>
struct DataTypeTrait<Eigen::half> {
  static constexpr TideDataType value = TIDE_FP16;
};
}  // namespace tide

namespace ops_math {
namespace {

// A float to an integer type: tide/ops/cast.hpp's rule, as on every device; a float16 is
// widened to float first.
template <typename From, typename To>
struct Saturating {
  To operator()(From v) const {
    if constexpr (std::is_same_v<From, Eigen::half>)
      return tide::ops::SaturatingCast<To>(static_cast<float>(v));
    else
      return tide::ops::SaturatingCast<To>(v);
  }
};

template <typename From, typename To>
constexpr bool kSaturates = tide::ops::NeedsSaturatingCast<From, To>::value ||
                            (std::is_same_v<From, Eigen::half> && std::is_integral_v<To> &&
                             !std::is_same_v<To, bool>);

template <typename From, typename To>
void CastTo(const KernelContext& ctx, const Tensor& x, Tensor& out) {
  out.Resize(x.dims());
  if constexpr (kSaturates<From, To>)
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).unaryExpr(Saturating<From, To>()));
  else
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).template cast<To>());
}

template <typename T>
void CastKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  auto to = tide::ops::DataTypeAttr(ctx, "out_dtype");
  switch (to) {
    case TIDE_FP32:
      CastTo<T, float>(ctx, x, out);
      break;
    case TIDE_FP64:
      CastTo<T, double>(ctx, x, out);
      break;
    case TIDE_FP16:
      CastTo<T, Eigen::half>(ctx, x, out);
      break;
    case TIDE_INT32:
      CastTo<T, int32_t>(ctx, x, out);
      break;
    case TIDE_INT64:
      CastTo<T, int64_t>(ctx, x, out);
      break;
    case TIDE_BOOL:
      CastTo<T, bool>(ctx, x, out);
      break;
    case TIDE_UINT8:
      CastTo<T, uint8_t>(ctx, x, out);
      break;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'cast': no CPU cast from ", tide::DataTypeName(x.dtype()),
                 " to ", tide::DataTypeName(to));
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("cast")
        .Comment("Out = X converted to out_dtype; float to integer truncates, saturates at the "
                 "limits and maps NaN to 0.")
        .Input("X", "input")
        .Output("Out", "X's values as out_dtype")
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
TIDE_REGISTER_KERNEL("cast", "cpu", CastKernel, float, double, int32_t, int64_t, bool, uint8_t,
                     Eigen::half);
