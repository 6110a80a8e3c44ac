// dist_op.cc: Paddle's dist (paddle.dist: Out = the p-norm of Z = X - Y, X and Y broadcast
// numpy-style, a 0-D result: p = 0 counts Z's non-zeros, inf / -inf take max / min |Z|, else
// (sum |Z|^p)^(1/p)) and its grad, dZ per Paddle's p_norm rule summed over the dims each operand
// is repeated along (dY = -dZ): p = 0 has none; inf / -inf give sign(Z) dOut to every element
// whose |Z| is the norm (ties each take it all, as Paddle's); else
// sign(Z) |Z|^(p-1) / Out^(p-1) dOut, and 0 where Out or Z is 0.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

template <typename T>
T Sign(T v) {
  return static_cast<T>((v > T(0)) - (v < T(0)));
}

template <typename T>
void DistKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  const T *xd = x.data<T>(), *yd = y.data<T>();
  const double p = ctx.Attr<float>("p");
  T* out = ctx.Output("Out").mutable_data<T>(Dims{}, ctx.place());
  // Accumulated in double: a long Z loses no float precision in the sum.
  double acc = std::isinf(p) && p < 0 ? std::numeric_limits<double>::infinity() : 0.0;
  if (std::isinf(p) && p > 0 && nb.numel == 0) acc = 0.0;
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    const double z = std::abs(static_cast<double>(xd[i]) - static_cast<double>(yd[j]));
    if (p == 0)
      acc += z != 0;
    else if (std::isinf(p))
      acc = p > 0 ? std::max(acc, z) : std::min(acc, z);
    else
      acc += std::pow(z, p);
  }
  *out = static_cast<T>(p == 0 || std::isinf(p) ? acc : std::pow(acc, 1.0 / p));
}

template <typename T>
void DistGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  const T *xd = x.data<T>(), *yd = y.data<T>();
  const T norm = *ctx.Input("Out").data<T>();
  const T dout = *ctx.Input(GradVarName("Out").c_str()).data<T>();
  const T p = static_cast<T>(ctx.Attr<float>("p"));
  const std::string dxn = GradVarName("X"), dyn = GradVarName("Y");
  T* dx = nullptr;
  T* dy = nullptr;
  if (ctx.HasOutput(dxn.c_str())) {
    dx = ctx.Output(dxn.c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  if (ctx.HasOutput(dyn.c_str())) {
    dy = ctx.Output(dyn.c_str()).mutable_data<T>(y.dims(), ctx.place());
    std::fill(dy, dy + y.numel(), T(0));
  }
  if (p == T(0) || norm == T(0)) return;
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    const T z = xd[i] - yd[j];
    T dz = T(0);
    if (std::isinf(p))
      dz = std::abs(z) == norm ? Sign(z) * dout : T(0);
    else if (z != T(0))
      dz = Sign(z) * std::pow(std::abs(z) / norm, p - T(1)) * dout;
    if (dx) dx[i] += dz;
    if (dy) dy[j] -= dz;
  }
}

void DistInferShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(ctx.InputDataType("X") == ctx.InputDataType("Y"), "op '", ctx.op_type(), "': X is ",
             tide::DataTypeName(ctx.InputDataType("X")), " but Y is ",
             tide::DataTypeName(ctx.InputDataType("Y")));
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  const bool known = std::none_of(x.begin(), x.end(), [](int64_t d) { return d < 0; }) &&
                     std::none_of(y.begin(), y.end(), [](int64_t d) { return d < 0; });
  if (known) GetNumpyBroadcast(ctx.op_type(), x, y);  // unknown dims: checked when the kernel runs
  ctx.SetOutputDims("Out", Dims{});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("dist")
                     .Comment("Out = the p-norm of X - Y (paddle.dist), X and Y broadcast "
                              "numpy-style; 0-D.")
                     .Input("X", "the first operand")
                     .Input("Y", "the second operand, X's type")
                     .Output("Out", "0-D")
                     .Attr("p", 2.0f, "the norm's order: 0 (non-zeros), inf, -inf or any other")
                     .InferShape(DistInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("dist_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("dist_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("p", 2.0f)
                     .KernelDataTypeFrom("X")
                     .InferShape(GradsLikeXY));
TIDE_REGISTER_KERNEL("dist", "cpu", DistKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("dist_grad", "cpu", DistGradKernel, OPS_MATH_FLOAT_TYPES);
