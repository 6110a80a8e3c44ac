// lrn_op.cc: local response normalisation across channels (Fluid 1.x): MidOut = k + alpha *
// sum of X^2 over the n channels around c, Out = X * MidOut^-beta; and its grad. X is NCHW or
// NHWC (data_format); the per-element rules are tide/ops/lrn.hpp's.
#include <tide/ops/lrn.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::GetLrnParams;
using tide::ops::LrnParams;

void LrnInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  GetLrnParams(ctx, x);  // checks X and data_format
  TideDataType t = ctx.InputDataType("X");
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", t);
  ctx.ShareLoD("X", "Out");
  if (ctx.HasOutput("MidOut")) {
    ctx.SetOutputDims("MidOut", x);
    ctx.SetOutputDataType("MidOut", t);
  }
}

template <typename T>
void LrnKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetLrnArgs<T>(ctx);
  ParallelFor(ctx, a.n, a.p.size, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) tide::ops::LrnAt(a.p, a.x, i, a.out, a.mid);
  });
}

template <typename T>
void LrnGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetLrnGradArgs<T>(ctx);
  ParallelFor(ctx, a.n, a.p.size, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      a.dx[i] = tide::ops::LrnGradAt(a.p, a.x, a.out, a.mid, a.dout, i);
  });
}

tide::OpSchema LrnAttrs(tide::OpSchema s) {
  return s.Attr("n", int32_t(5), "channels summed over (odd): c - (n-1)/2 .. c + (n-1)/2")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.i > 0 && v.i % 2 == 1, "attribute 'n' must be a positive odd number, got ",
                   v.i);
      })
      .Attr("k", 2.0f, "the bias k")
      .Attr("alpha", 1e-4f, "the scale alpha of the sum of squares")
      .Attr("beta", 0.75f, "the exponent beta")
      .Attr("data_format", std::string("AnyLayout"), "layout of X: NCHW (AnyLayout) or NHWC")
      .InSet({"NCHW", "NHWC", "AnyLayout"})
      .Attr("is_test", false, "inference hint (ignored by the plain kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LrnAttrs(tide::OpSchema("lrn")
                              .Comment("Local response normalisation across channels: MidOut = k "
                                       "+ alpha * sum(X[c']^2 for the n channels c' centred on c), "
                                       "Out = X * MidOut^(-beta).")
                              .Input("X", "the input, [N, C, H, W] (or [N, H, W, C] with NHWC)")
                              .Output("Out", "the normalised input, X's dims")
                              .Output("MidOut", "k + alpha * the windowed sum of squares, X's dims")
                              .AsIntermediate()
                              .InferShape(LrnInferShape)
                              .Grad([](tide::GradMaker& g) {
                                g.NewOp("lrn_grad")
                                    .Input("X", g.Input("X"))
                                    .Input("Out", g.Output("Out"))
                                    .Input("MidOut", g.Output("MidOut"))
                                    .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                    .Output(GradVarName("X"), g.InputGrad("X"))
                                    .CopyAttrs();
                              })));
TIDE_REGISTER_OP(LrnAttrs(tide::OpSchema("lrn_grad")
                              .Comment("X@GRAD of lrn.")
                              .Input("X", "the forward input")
                              .Input("Out", "the forward output")
                              .Input("MidOut", "the forward MidOut")
                              .Input(GradVarName("Out"), "gradient of Out")
                              .Output(GradVarName("X"), "gradient of X")
                              .KernelDataTypeFrom("X")
                              .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("lrn", "cpu", LrnKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lrn_grad", "cpu", LrnGradKernel, OPS_NN_FLOAT_TYPES);
