// clip_ops.cc: ops for gradient clipping and weight decay: clip, clip_by_norm, squared_l2_norm,
// sqrt and sign, with grads (sign's is zero).
#include <algorithm>
#include <cmath>
#include <tide/ops/clip.hpp>
#include <tide/ops/reduce.hpp>
#include <tide/ops/unary.hpp>

#include "common.h"
#include "selected_rows.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// Out = min(max(X, min), max). A SelectedRows X, as Fluid's clip_op.h: its rows merged first (a
// row listed twice is one row holding the sum), then the merged values clipped into a SelectedRows
// Out. The bounds: tide/ops/clip.hpp.
template <typename T>
void ClipKernel(KernelContext& ctx) {
  const auto [lo, hi] = tide::ops::GetClipRange<T>(ctx);
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) {
    MergedX<T> x = MergeX<T>(ctx);
    for (T& e : x.merged.values) e = std::min(std::max(e, lo), hi);
    return SetMerged(ctx.OutputVar("Out").GetSelectedRows(), x.merged, x.height, x.width,
                     ctx.place());
  }
  const auto a = tide::ops::GetUnaryArgs<T>(ctx);
  EigenEval(ctx, Out(a.out, a.n), In(a.x, a.n).cwiseMax(lo).cwiseMin(hi));
}

// dX = dOut where min < X < max, else 0.
template <typename T>
void ClipGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetClipGradArgs<T>(ctx);
  const T lo = a.r.lo, hi = a.r.hi;
  auto xv = In(a.io.from, a.io.n);
  EigenEval(ctx, Out(a.io.dx, a.io.n),
            In(a.io.dout, a.io.n) * ((xv > lo) && (xv < hi)).template cast<T>());
}

template <typename T>
T SumSquares(const T* d, int64_t n) {
  T s = 0;
  for (int64_t i = 0; i < n; ++i) s += d[i] * d[i];
  return s;
}

// A SelectedRows X, as Fluid: its rows merged first (a row listed twice counts once, with the
// sum of its values), then the merged values clipped by their norm into a SelectedRows Out.
template <typename T>
void ClipByNormRows(KernelContext& ctx, T max_norm) {
  MergedX<T> x = MergeX<T>(ctx);
  T sq = 0;
  for (T e : x.merged.values) sq += e * e;
  const T norm = std::sqrt(sq), factor = norm > max_norm ? max_norm / norm : T(1);
  for (T& e : x.merged.values) e *= factor;
  SetMerged(ctx.OutputVar("Out").GetSelectedRows(), x.merged, x.height, x.width, ctx.place());
}

// Out = X * max_norm / max(||X||, max_norm).
template <typename T>
void ClipByNormKernel(KernelContext& ctx) {
  const T max_norm = tide::ops::ClipMaxNorm<T>(ctx);
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) return ClipByNormRows<T>(ctx, max_norm);
  const auto a = tide::ops::GetUnaryArgs<T>(ctx);
  const T norm = std::sqrt(SumSquares(a.x, a.n));
  const T factor = norm > max_norm ? max_norm / norm : T(1);
  EigenEval(ctx, Out(a.out, a.n), In(a.x, a.n) * factor);
}

template <typename T>
void SquaredL2NormKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetScalarReduceArgs<T>(ctx);
  a.out[0] = SumSquares(a.x, a.n);
}

template <typename T>
void SquaredL2NormGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetScalarReduceGradArgs<T>(ctx);
  EigenEval(ctx, Out(a.dx, a.n), In(a.x, a.n) * (a.dout[0] * T(2)));
}

template <typename T>
void SqrtKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetUnaryArgs<T>(ctx);
  // std::sqrt per element: Eigen's fast vectorised sqrt is x * rsqrt(x), NaN for +inf.
  EigenEval(ctx, Out(a.out, a.n), In(a.x, a.n).unaryExpr([](T v) { return std::sqrt(v); }));
}

// dX = dOut / (2 * Out).
template <typename T>
void SqrtGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetUnaryGradArgs<T>(ctx, "Out");
  EigenEval(ctx, Out(a.dx, a.n), In(a.dout, a.n) / (In(a.from, a.n) * T(2)));
}

template <typename T>
void SignKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetUnaryArgs<T>(ctx);
  EigenEval(ctx, Out(a.out, a.n), In(a.x, a.n).sign());
}

// clip, clip_by_norm: Out is like X (dims, dtype, LoD); a SelectedRows X (a sparse gradient)
// gives a SelectedRows Out.
void SameKindAsX(tide::InferShapeContext& c) {
  if (c.InputVarType("X") == TIDE_VAR_SELECTED_ROWS)
    c.SetOutputVarType("Out", TIDE_VAR_SELECTED_ROWS);
  tide::SameShapeAsInput("X", "Out")(c);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("clip")
                     .Comment("Out = min(max(X, min), max); Paddle's Min / Max inputs, when "
                              "given, override the attributes. A SelectedRows X has its rows "
                              "merged first and gives a SelectedRows Out.")
                     .Input("X", "input")
                     .Input("Min", "Paddle: the lower bound as a one-element tensor (optional)")
                     .AsDispensable()
                     .Input("Max", "Paddle: the upper bound as a one-element tensor (optional)")
                     .AsDispensable()
                     .Output("Out", "same dims as X")
                     .Attr("min", 0.0f, "lower bound")
                     .Attr("max", 0.0f, "upper bound")
                     .Attr("mkldnn_data_type", std::string("float32"),
                           "oneDNN precision hint "
                           "(ignored)")
                     .InferShape(SameKindAsX)
                     .Grad([](tide::GradMaker& g) {  // the bounds get no gradient
                       auto op = g.NewOp("clip_grad");
                       op.Input("X", g.Input("X"));
                       for (const char* b : {"Min", "Max"})
                         if (!g.Input(b).empty()) op.Input(b, g.Input(b));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("clip_grad")
                     .Input("X")
                     .Input("Out")
                     .AsDispensable()
                     .Input("Min")
                     .AsDispensable()
                     .Input("Max")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("min", 0.0f)
                     .Attr("max", 0.0f)
                     .Attr("mkldnn_data_type", std::string("float32"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("clip", "cpu", ClipKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("clip_grad", "cpu", ClipGradKernel, OPS_MATH_NUMERIC_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("clip_by_norm")
                     .Comment("Out = X * max_norm / max(L2 norm of X, max_norm). A SelectedRows X "
                              "has its rows merged first and gives a SelectedRows Out.")
                     .Input("X", "input")
                     .Output("Out", "same dims as X")
                     .Attr("max_norm", 1.0f, "the largest L2 norm Out may have")
                     .InferShape(SameKindAsX));
TIDE_REGISTER_KERNEL("clip_by_norm", "cpu", ClipByNormKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("squared_l2_norm")
                     .Comment("Out = sum(X^2), a [1] tensor.")
                     .Input("X", "input")
                     .Output("Out", "[1]")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {1});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .DefaultGrad());
TIDE_REGISTER_OP(tide::OpSchema("squared_l2_norm_grad")
                     .Input("X")
                     .Input("Out")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("squared_l2_norm", "cpu", SquaredL2NormKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squared_l2_norm_grad", "cpu", SquaredL2NormGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("sqrt")
                     .Comment("Out = sqrt(X), elementwise.")
                     .Input("X", "input")
                     .Output("Out", "same dims as X")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("sqrt_grad")
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("sqrt_grad")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("Out", GradVarName("X"))));
// complex64 / complex128 (the principal root, numpy's): complex_math_kernels.cc.
TIDE_REGISTER_KERNEL("sqrt", "cpu", SqrtKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sqrt_grad", "cpu", SqrtGradKernel, OPS_MATH_FLOAT_TYPES);

// sign's gradient is zero (Fluid's SignGradMaker: scale by 0), so a path through it is no error.
TIDE_REGISTER_OP(tide::OpSchema("sign")
                     .Comment("Out = -1, 0 or 1 by the sign of X; its gradient is 0.")
                     .Input("X", "input")
                     .Output("Out", "same dims as X")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("scale")
                           .Input("X", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("scale", 0.0f)
                           .Attr("bias", 0.0f);
                     }));
TIDE_REGISTER_KERNEL("sign", "cpu", SignKernel, OPS_MATH_FLOAT_TYPES);
