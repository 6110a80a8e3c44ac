// frobenius_norm_op.cc: Paddle's frobenius_norm (paddle.linalg.norm(x, 'fro', axis=...)): Out =
// sqrt(sum X^2) over `dim` (a reduce op: keep_dim, reduce_all; tide/ops/reduce.hpp), and its grad
// dX = dOut X / Out (Paddle's: NaN where Out is 0, as 0 / 0).
#include <cmath>
#include <tide/ops/reduce.hpp>
#include <vector>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::ReduceShape;

// Element e of X lies under Out element index(e).
tide::ops::BroadcastIndex OutIndexOf(const char* op, const Dims& x, const ReduceShape& s) {
  return tide::ops::MakeBroadcastIndex(op, x, s.keep, 0);
}

template <typename T>
void FrobeniusNormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, x.dims());
  const int64_t n_out = DimsProduct(s.keep), total = x.numel();
  T* o = ctx.Output("Out").mutable_data<T>(s.out, ctx.place());
  std::fill(o, o + n_out, T(0));
  const T* xd = total ? x.data<T>() : nullptr;
  const auto index = OutIndexOf(ctx.op_type(), x.dims(), s);
  for (int64_t e = 0; e < total; ++e) o[index(e)] += xd[e] * xd[e];
  for (int64_t i = 0; i < n_out; ++i) o[i] = std::sqrt(o[i]);
}

template <typename T>
void FrobeniusNormGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, /*with_out=*/true);
  const auto index = OutIndexOf(ctx.op_type(), a.x_dims, a.s);
  for (int64_t e = 0; e < a.total; ++e) {
    const int64_t j = index(e);
    a.dx[e] = a.dout[j] * a.x[e] / a.out[j];
  }
}

void FrobeniusNormInferShape(tide::InferShapeContext& ctx) {
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, ctx.InputDims("X"));
  tide::ops::CheckReduceDtypes(ctx, ctx.InputDataType("X"));
  ctx.SetOutputDims("Out", s.out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Fluid's reduce attributes, Paddle's defaults.
tide::OpSchema FrobeniusAttrs(tide::OpSchema s) {
  return s.Attr("dim", std::vector<int32_t>{0}, "the reduced dims (negative: from the end)")
      .Attr("keep_dim", false, "keep the reduced dims as 1s")
      .Attr("reduce_all", false, "reduce every dim (so does an empty dim)")
      .Attr("in_dtype", int32_t(-1), "Paddle 2.x's; -1 or X's type")
      .Attr("out_dtype", int32_t(-1), "Paddle 2.x's; -1 or X's type");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(FrobeniusAttrs(tide::OpSchema("frobenius_norm")
                                    .Comment("Out = sqrt(sum X^2) over dim "
                                             "(paddle.linalg.norm(x, 'fro', axis)).")
                                    .Input("X", "the input")
                                    .Output("Out", "X reduced over dim"))
                     .InferShape(FrobeniusNormInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("frobenius_norm_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(FrobeniusAttrs(tide::OpSchema("frobenius_norm_grad")
                                    .Input("X")
                                    .Input("Out")
                                    .Input(GradVarName("Out"))
                                    .Output(GradVarName("X")))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("frobenius_norm", "cpu", FrobeniusNormKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("frobenius_norm_grad", "cpu", FrobeniusNormGradKernel, OPS_MATH_FLOAT_TYPES);
