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
  ctx.SetOutputDims("Y", tide::ops::CrossEntropyYDims(x, ctx.InputDims("Label")));
  ctx.SetOutputDataType("Y", xt);
  ctx.ShareLoD("X", "Y");
}

// The kernels read their inputs through tide/ops/cross_entropy.hpp; hard labels are checked on
// the host first.
template <typename T>
void XeKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetXeArgs<T>(ctx);
  const int64_t n = a.n, d = a.d;
  if (a.label.soft) {
    for (int64_t i = 0; i < n; ++i) {
      T s = 0;
      for (int64_t j = 0; j < d; ++j) s -= a.label.soft[i * d + j] * TolerableLog(a.x[i * d + j]);
      a.y[i] = s;
    }
    return;
  }
  const int64_t* l = a.label.hard;
  tide::ops::CheckHardLabels(ctx, l, n, d, a.ignore);
  for (int64_t i = 0; i < n; ++i)
    a.y[i] = l[i] == a.ignore ? T(0) : -TolerableLog(a.x[i * d + l[i]]);
}

// Hard: dX[label] = -dY / X[label], 0 elsewhere (and for ignore_index); soft: dX = -dY * Label / X.
template <typename T>
void XeGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetXeGradArgs<T>(ctx);
  const int64_t n = a.n, d = a.d;
  if (a.label.soft) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j)
        a.dx[i * d + j] = -a.dy[i] * a.label.soft[i * d + j] / SafeDenominator(a.x[i * d + j]);
    return;
  }
  const int64_t* l = a.label.hard;
  tide::ops::CheckHardLabels(ctx, l, n, d, a.ignore);
  std::fill(a.dx, a.dx + n * d, T(0));
  for (int64_t i = 0; i < n; ++i)
    if (l[i] != a.ignore) a.dx[i * d + l[i]] = -a.dy[i] / SafeDenominator(a.x[i * d + l[i]]);
}

// cross_entropy2 (hard labels only): Y = -log(X[Label]); MatchX keeps X[Label] and XShape X's
// dims, so the grad needs neither X nor a division by all of it.
template <typename T>
void Xe2Kernel(KernelContext& ctx) {
  const auto a = tide::ops::GetXe2Args<T>(ctx);
  tide::ops::CheckHardLabels(ctx, a.label, a.n, a.d, a.ignore);
  for (int64_t i = 0; i < a.n; ++i) {
    const int64_t l = a.label[i];
    a.match[i] = l == a.ignore ? T(1) : a.x[i * a.d + l];
    a.y[i] = l == a.ignore ? T(0) : -TolerableLog(a.match[i]);
  }
}

template <typename T>
void Xe2GradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetXe2GradArgs<T>(ctx);
  tide::ops::CheckHardLabels(ctx, a.label, a.n, a.d, a.ignore);
  std::fill(a.dx, a.dx + a.n * a.d, T(0));
  for (int64_t i = 0; i < a.n; ++i)
    if (a.label[i] != a.ignore) a.dx[i * a.d + a.label[i]] = -a.dy[i] / SafeDenominator(a.match[i]);
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
                             .Output("Y",
                                     "the cross entropy: Label's dims, the last 1 where "
                                     "Label has X's rank")
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
                     .Input("X", "probabilities, [..., D]")
                     .Input("Label", "int64 class ids")
                     .Output("Y", "Label's dims, the last 1 where Label has X's rank")
                     .Output("XShape", "[0] + X's dims (no data), for the grad")
                     .AsIntermediate()
                     .Output("MatchX", "X[Label] per row, for the grad")
                     .AsIntermediate()
                     .Attr("ignore_index", int32_t(-100),
                           "a label with this value gets Y = 0 and no gradient")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X"), label = c.InputDims("Label");
                       tide::ops::CheckCrossEntropyLabel(c.op_type(), x, label, false);
                       c.SetOutputDims("Y", tide::ops::CrossEntropyYDims(x, label));
                       c.SetOutputDims("MatchX", tide::ops::XeOneValuePerRow(x));
                       for (const char* p : {"Y", "MatchX"})
                         c.SetOutputDataType(p, c.InputDataType("X"));
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
                     .Input("Label")
                     .Input("MatchX")
                     .Input("XShape")
                     .Input(GradVarName("Y"))
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
