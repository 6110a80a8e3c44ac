// cross_entropy_op.cc: cross_entropy of probabilities X ([..., D]) against hard (int64, [..., 1]
// or [...], ignore_index) or soft ([..., D]) labels, and its grad; cross_entropy2 (hard labels,
// its grad reading MatchX). log(0) is handled as Fluid's
// TolerableValue does: -inf becomes -1e20, so Y stays finite and 0 * log(0) is 0, never NaN; the
// grad divides by max(X, 1e-20) for the same reason (tide/ops/cross_entropy.hpp).
#include <tide/ops/cross_entropy.hpp>
#include <tide/ops/loss.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::SafeDenominator;
using tide::ops::TolerableLog;

void XeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims x = ctx.InputDims("X");
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckCrossEntropyLabel(op, x, ctx.InputDims("Label"), soft);
  TideDataType lt = ctx.InputDataType("Label"), xt = ctx.InputDataType("X");
  TIDE_CHECK(lt == TIDE_UNDEFINED || (soft ? lt == xt : lt == TIDE_INT64), "op '", op,
             "': Label ('", ctx.InputName("Label"), "') must be ",
             soft ? tide::DataTypeName(xt) : "int64",
             " with soft_label = ", soft ? "true" : "false", ", got ", tide::DataTypeName(lt));
  Dims y = x;
  y.back() = 1;
  ctx.SetOutputDims("Y", y);
  ctx.SetOutputDataType("Y", xt);
  ctx.ShareLoD("X", "Y");
}

template <typename T>
void XeKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckCrossEntropyLabel(op, x.dims(), label.dims(), soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  Dims yd = x.dims();
  yd.back() = 1;
  const T* xd = x.data<T>();
  T* y = ctx.Output("Y").mutable_data<T>(yd, ctx.place());
  if (soft) {
    const T* l = label.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      T s = 0;
      for (int64_t j = 0; j < d; ++j) s -= l[i * d + j] * TolerableLog(xd[i * d + j]);
      y[i] = s;
    }
    return;
  }
  const int64_t* l = label.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TIDE_CHECK(l[i] == ignore || (l[i] >= 0 && l[i] < d), "op '", op, "': Label ('",
               ctx.InputName("Label"), "')[", i, "] = ", l[i], " is not a class in [0, ", d,
               ") nor ignore_index (", ignore, ")");
    y[i] = l[i] == ignore ? T(0) : -TolerableLog(xd[i * d + l[i]]);
  }
}

// Hard: dX[label] = -dY / X[label], 0 elsewhere (and for ignore_index); soft: dX = -dY * Label / X.
template <typename T>
void XeGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckCrossEntropyLabel(op, x.dims(), label.dims(), soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  TIDE_CHECK(dy.numel() == n, "op '", op, "': Y@GRAD ", tide::ToString(dy.dims()),
             " does not hold one value per row of X ", tide::ToString(x.dims()));
  const T* xd = x.data<T>();
  const T* g = dy.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  if (soft) {
    const T* l = label.data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j)
        dx[i * d + j] = -g[i] * l[i * d + j] / SafeDenominator(xd[i * d + j]);
    return;
  }
  const int64_t* l = label.data<int64_t>();
  std::fill(dx, dx + n * d, T(0));
  for (int64_t i = 0; i < n; ++i) {
    if (l[i] == ignore) continue;
    TIDE_CHECK(l[i] >= 0 && l[i] < d, "op '", op, "': Label ('", ctx.InputName("Label"), "')[", i,
               "] = ", l[i], " is not a class in [0, ", d, ")");
    dx[i * d + l[i]] = -g[i] / SafeDenominator(xd[i * d + l[i]]);
  }
}

// cross_entropy2 (hard labels only): Y = -log(X[Label]); MatchX keeps X[Label] and XShape X's
// dims, so the grad needs neither X nor a division by all of it.
template <typename T>
void Xe2Kernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  tide::ops::CheckCrossEntropyLabel(op, x.dims(), label.dims(), false);
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", op, "': Label ('", ctx.InputName("Label"),
             "') must be int64, got ", tide::DataTypeName(label.dtype()));
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  Dims yd = x.dims();
  yd.back() = 1;
  const T* xd = x.data<T>();
  const int64_t* l = label.data<int64_t>();
  T* y = ctx.Output("Y").mutable_data<T>(yd, ctx.place());
  T* match = ctx.Output("MatchX").mutable_data<T>(yd, ctx.place());
  if (Tensor xs = ctx.OptionalOutput("XShape")) xs.mutable_data<T>(tide::ops::XShapeDims(x.dims()), ctx.place());
  for (int64_t i = 0; i < n; ++i) {
    TIDE_CHECK(l[i] == ignore || (l[i] >= 0 && l[i] < d), "op '", op, "': Label ('",
               ctx.InputName("Label"), "')[", i, "] = ", l[i], " is not a class in [0, ", d,
               ") nor ignore_index (", ignore, ")");
    match[i] = l[i] == ignore ? T(1) : xd[i * d + l[i]];
    y[i] = l[i] == ignore ? T(0) : -TolerableLog(match[i]);
  }
}

template <typename T>
void Xe2GradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor label = ctx.Input("Label"), match = ctx.Input("MatchX");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const Dims xd = tide::ops::CrossEntropy2GradXDims(op, ctx.Input("XShape").dims(), label.dims(),
                                                    match.dims(), dy.dims());
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(xd);
  const int64_t* l = label.data<int64_t>();
  const T* m = match.data<T>();
  const T* g = dy.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, ctx.place());
  std::fill(dx, dx + n * d, T(0));
  for (int64_t i = 0; i < n; ++i) {
    if (l[i] == ignore) continue;
    TIDE_CHECK(l[i] >= 0 && l[i] < d, "op '", op, "': Label ('", ctx.InputName("Label"), "')[", i,
               "] = ", l[i], " is not a class in [0, ", d, ")");
    dx[i * d + l[i]] = -g[i] / SafeDenominator(m[i]);
  }
}

tide::OpSchema XeAttrs(tide::OpSchema s) {
  return s.Attr("soft_label", false, "Label is a distribution (float, X's dims)")
      .Attr("ignore_index", int32_t(-100),
            "a hard label with this value gets Y = 0 and no gradient");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(XeAttrs(tide::OpSchema("cross_entropy")
                             .Comment("Y = -log(X[Label]) (hard) or -sum(Label * log(X)) (soft) "
                                      "per row; log(0) is taken as -1e20 (Fluid's TolerableValue).")
                             .Input("X", "probabilities, [..., D] (rank >= 2)")
                             .Input("Label",
                                    "int64 class ids, [..., 1], or a float distribution, "
                                    "X's dims (soft_label)")
                             .Output("Y", "the cross entropy, X's dims with a last dim of 1")
                             .KernelDataTypeFrom("X")
                             .InferShape(XeInferShape)
                             .Grad([](tide::GradMaker& g) {
                               g.NewOp("cross_entropy_grad")
                                   .Input("X", g.Input("X"))
                                   .Input("Label", g.Input("Label"))
                                   .Input(GradVarName("Y"), g.OutputGrad("Y"))
                                   .Output(GradVarName("X"), g.InputGrad("X"))
                                   .CopyAttrs();
                             })));
TIDE_REGISTER_OP(XeAttrs(tide::OpSchema("cross_entropy_grad")
                             .Comment("X@GRAD of cross_entropy.")
                             .Input("X", "the forward probabilities")
                             .Input("Label", "the forward labels")
                             .Input(GradVarName("Y"), "gradient of Y")
                             .Output(GradVarName("X"), "gradient of X")
                             .KernelDataTypeFrom("X")
                             .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("cross_entropy", "cpu", XeKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy_grad", "cpu", XeGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("cross_entropy2")
                     .Comment("Y = -log(X[Label]) per row for hard int64 labels ([..., 1] or "
                              "X's dims without the last); log(0) is taken as -1e20.")
                     .Input("X", "probabilities, [..., D]").Input("Label", "int64 class ids")
                     .Output("Y", "X's dims with a last dim of 1")
                     .Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate()
                     .Output("MatchX", "X[Label] per row, for the grad").AsIntermediate()
                     .Attr("ignore_index", int32_t(-100), "a label with this value gets Y = 0 and no gradient")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       tide::ops::CheckCrossEntropyLabel(c.op_type(), x, c.InputDims("Label"), false);
                       Dims y = x;
                       y.back() = 1;
                       for (const char* p : {"Y", "MatchX"}) {
                         c.SetOutputDims(p, y);
                         c.SetOutputDataType(p, c.InputDataType("X"));
                       }
                       if (c.HasOutput("XShape")) {
                         c.SetOutputDims("XShape", tide::ops::XShapeDims(x));
                         c.SetOutputDataType("XShape", c.InputDataType("X"));
                       }
                       c.ShareLoD("X", "Y");
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("cross_entropy2_grad")
                           .Input("Label", g.Input("Label"))
                           .Input("MatchX", g.Output("MatchX"))
                           .Input("XShape", g.Output("XShape"))
                           .Input(GradVarName("Y"), g.OutputGrad("Y"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("cross_entropy2_grad")
                     .Input("Label").Input("MatchX").Input("XShape").Input(GradVarName("Y"))
                     .Output(GradVarName("X"))
                     .Attr("ignore_index", int32_t(-100))
                     .KernelDataTypeFrom("MatchX")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims xs = c.InputDims("XShape");
                       c.SetOutputDims(GradVarName("X").c_str(), Dims(xs.begin() + 1, xs.end()));
                       c.SetOutputDataType(GradVarName("X").c_str(), c.InputDataType("MatchX"));
                     }));
TIDE_REGISTER_KERNEL("cross_entropy2", "cpu", Xe2Kernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy2_grad", "cpu", Xe2GradKernel, OPS_NN_FLOAT_TYPES);
