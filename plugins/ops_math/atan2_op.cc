// atan2_op.cc: Paddle's atan2 (paddle.atan2: Out = atan2(X1, X2), the angle of the point
// (X2, X1), X1 and X2 broadcast numpy-style) and its grad (dX1 = X2 / (X1^2 + X2^2),
// dX2 = -X1 / (X1^2 + X2^2), each summed over the dims its operand is repeated along).
#include <algorithm>
#include <cmath>
#include <string>
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

// X1's and X2's numpy broadcast, an error naming both when they do not broadcast.
NumpyBroadcast Atan2Broadcast(const char* op, const Dims& x1, const Dims& x2) {
  TIDE_CHECK(tide::ops::NumpyFits(x1, x2), "op '", op, "': X1 ", tide::ToString(x1), " and X2 ",
             tide::ToString(x2), " do not broadcast");
  return GetNumpyBroadcast(op, x1, x2);
}

void Atan2InferShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(ctx.InputDataType("X1") == ctx.InputDataType("X2"), "op '", ctx.op_type(), "': X1 is ",
             tide::DataTypeName(ctx.InputDataType("X1")), " but X2 is ",
             tide::DataTypeName(ctx.InputDataType("X2")));
  const Dims x1 = ctx.InputDims("X1"), x2 = ctx.InputDims("X2");
  const bool known = std::none_of(x1.begin(), x1.end(), [](int64_t d) { return d < 0; }) &&
                     std::none_of(x2.begin(), x2.end(), [](int64_t d) { return d < 0; });
  // Unknown (-1) dims are checked when the kernel runs.
  ctx.SetOutputDims("Out", known ? Atan2Broadcast(ctx.op_type(), x1, x2).out
                                 : (x1.size() >= x2.size() ? x1 : x2));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X1"));
}

template <typename T>
void Atan2Kernel(KernelContext& ctx) {
  Tensor x1 = ctx.Input("X1"), x2 = ctx.Input("X2");
  const NumpyBroadcast nb = Atan2Broadcast(ctx.op_type(), x1.dims(), x2.dims());
  const T *a = x1.data<T>(), *b = x2.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(nb.out, ctx.place());
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    o[e] = std::atan2(a[i], b[j]);
  }
}

template <typename T>
void Atan2GradKernel(KernelContext& ctx) {
  Tensor x1 = ctx.Input("X1"), x2 = ctx.Input("X2");
  const NumpyBroadcast nb = Atan2Broadcast(ctx.op_type(), x1.dims(), x2.dims());
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), nb.out);
  const T *a = x1.data<T>(), *b = x2.data<T>(), *g = dout.data<T>();
  const std::string d1n = GradVarName("X1"), d2n = GradVarName("X2");
  T* d1 = nullptr;
  T* d2 = nullptr;
  if (ctx.HasOutput(d1n.c_str())) {
    d1 = ctx.Output(d1n.c_str()).mutable_data<T>(x1.dims(), ctx.place());
    std::fill(d1, d1 + x1.numel(), T(0));
  }
  if (ctx.HasOutput(d2n.c_str())) {
    d2 = ctx.Output(d2n.c_str()).mutable_data<T>(x2.dims(), ctx.place());
    std::fill(d2, d2 + x2.numel(), T(0));
  }
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    const T r2 = a[i] * a[i] + b[j] * b[j];
    if (d1) d1[i] += g[e] * b[j] / r2;
    if (d2) d2[j] -= g[e] * a[i] / r2;
  }
}

void Atan2GradShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X1", "X2"}); }

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("atan2")
                     .Comment("Out = atan2(X1, X2) (paddle.atan2), X1 and X2 broadcast "
                              "numpy-style.")
                     .Input("X1", "the y coordinate")
                     .Input("X2", "the x coordinate, X1's type")
                     .Output("Out", "the angle in [-pi, pi]")
                     .InferShape(Atan2InferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("atan2_grad")
                           .Input("X1", g.Input("X1"))
                           .Input("X2", g.Input("X2"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X1"), g.InputGrad("X1"))
                           .Output(GradVarName("X2"), g.InputGrad("X2"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("atan2_grad")
                     .Input("X1")
                     .Input("X2")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X1"))
                     .AsDispensable()
                     .Output(GradVarName("X2"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X1")
                     .InferShape(Atan2GradShape));
TIDE_REGISTER_KERNEL("atan2", "cpu", Atan2Kernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("atan2_grad", "cpu", Atan2GradKernel, OPS_MATH_FLOAT_TYPES);
