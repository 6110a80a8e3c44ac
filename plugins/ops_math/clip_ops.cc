// clip_ops.cc: ops for gradient clipping and weight decay: clip, clip_by_norm, squared_l2_norm,
// sqrt and sign, with grads (sign's is zero).
#include <algorithm>
#include <cmath>

#include "common.h"
#include "selected_rows.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// A bound: Paddle 2.x's Min / Max input (one element) when given, else the attribute.
template <typename T>
T ClipBound(const KernelContext& ctx, const char* param, const char* attr) {
  if (!ctx.HasInput(param)) return static_cast<T>(ctx.Attr<float>(attr));
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64), "op '",
             ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one float32/float64, got ", tide::DataTypeName(t.dtype()), " ",
             tide::ToString(t.dims()));
  return t.dtype() == TIDE_FP32 ? static_cast<T>(t.data<float>()[0])
                                : static_cast<T>(t.data<double>()[0]);
}

// Out = min(max(X, min), max). A SelectedRows X, as Fluid's clip_op.h: its rows merged first (a
// row listed twice is one row holding the sum), then the merged values clipped into a SelectedRows
// Out.
template <typename T>
void ClipKernel(KernelContext& ctx) {
  T lo = ClipBound<T>(ctx, "Min", "min"), hi = ClipBound<T>(ctx, "Max", "max");
  TIDE_CHECK(lo <= hi, "op 'clip': min (", lo, ") must not exceed max (", hi, ")");
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) {
    MergedX<T> x = MergeX<T>(ctx);
    for (T& e : x.merged.values) e = std::min(std::max(e, lo), hi);
    return SetMerged(ctx.OutputVar("Out").GetSelectedRows(), x.merged, x.height, x.width,
                     ctx.place());
  }
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.Resize(x.dims());
  EigenEval(ctx, Out<T>(out, ctx), In<T>(x).cwiseMax(lo).cwiseMin(hi));
}

// dX = dOut where min < X < max, else 0.
template <typename T>
void ClipGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  T lo = ClipBound<T>(ctx, "Min", "min"), hi = ClipBound<T>(ctx, "Max", "max");
  dx.Resize(x.dims());
  auto xv = In<T>(x);
  EigenEval(ctx, Out<T>(dx, ctx), In<T>(dout) * ((xv > lo) && (xv < hi)).template cast<T>());
}

template <typename T>
T SumSquares(const Tensor& x) {
  const T* d = x.data<T>();
  T s = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) s += d[i] * d[i];
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
  T max_norm = static_cast<T>(ctx.Attr<float>("max_norm"));
  TIDE_CHECK(max_norm > 0, "op 'clip_by_norm': max_norm must be > 0, got ", max_norm);
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) return ClipByNormRows<T>(ctx, max_norm);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  T norm = std::sqrt(SumSquares<T>(x));
  T factor = norm > max_norm ? max_norm / norm : T(1);
  out.Resize(x.dims());
  EigenEval(ctx, Out<T>(out, ctx), In<T>(x) * factor);
}

template <typename T>
void SquaredL2NormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.mutable_data<T>({1}, ctx.place())[0] = SumSquares<T>(x);
}

template <typename T>
void SquaredL2NormGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  T g = dout.data<T>()[0] * T(2);
  dx.Resize(x.dims());
  EigenEval(ctx, Out<T>(dx, ctx), In<T>(x) * g);
}

template <typename T>
void SqrtKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.Resize(x.dims());
  EigenEval(ctx, Out<T>(out, ctx), In<T>(x).sqrt());
}

// dX = dOut / (2 * Out).
template <typename T>
void SqrtGradKernel(KernelContext& ctx) {
  Tensor out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  dx.Resize(out.dims());
  EigenEval(ctx, Out<T>(dx, ctx), In<T>(dout) / (In<T>(out) * T(2)));
}

template <typename T>
void SignKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.Resize(x.dims());
  EigenEval(ctx, Out<T>(out, ctx), In<T>(x).sign());
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
                     .Attr("min", 0.0f, "lower bound").Attr("max", 0.0f, "upper bound")
                     .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint "
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
                     .Input("X").Input("Out").AsDispensable()
                     .Input("Min").AsDispensable().Input("Max").AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X")).Attr("min", 0.0f).Attr("max", 0.0f)
                     .Attr("mkldnn_data_type", std::string("float32"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("clip", "cpu", ClipKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("clip_grad", "cpu", ClipGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("clip_by_norm")
                     .Comment("Out = X * max_norm / max(L2 norm of X, max_norm). A SelectedRows X "
                              "has its rows merged first and gives a SelectedRows Out.")
                     .Input("X", "input").Output("Out", "same dims as X")
                     .Attr("max_norm", 1.0f, "the largest L2 norm Out may have")
                     .InferShape(SameKindAsX));
TIDE_REGISTER_KERNEL("clip_by_norm", "cpu", ClipByNormKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("squared_l2_norm")
                     .Comment("Out = sum(X^2), a [1] tensor.")
                     .Input("X", "input").Output("Out", "[1]")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {1});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .DefaultGrad());
TIDE_REGISTER_OP(tide::OpSchema("squared_l2_norm_grad")
                     .Input("X").Input("Out").AsDispensable().Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("squared_l2_norm", "cpu", SquaredL2NormKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squared_l2_norm_grad", "cpu", SquaredL2NormGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("sqrt")
                     .Comment("Out = sqrt(X), elementwise.")
                     .Input("X", "input").Output("Out", "same dims as X")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("sqrt_grad").Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("sqrt_grad")
                     .Input("Out").Input(GradVarName("Out")).Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("Out", GradVarName("X"))));
TIDE_REGISTER_KERNEL("sqrt", "cpu", SqrtKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sqrt_grad", "cpu", SqrtGradKernel, OPS_MATH_FLOAT_TYPES);

// sign's gradient is zero (Fluid's SignGradMaker: scale by 0), so a path through it is no error.
TIDE_REGISTER_OP(tide::OpSchema("sign")
                     .Comment("Out = -1, 0 or 1 by the sign of X; its gradient is 0.")
                     .Input("X", "input").Output("Out", "same dims as X")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("scale").Input("X", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("scale", 0.0f).Attr("bias", 0.0f);
                     }));
TIDE_REGISTER_KERNEL("sign", "cpu", SignKernel, OPS_MATH_FLOAT_TYPES);
