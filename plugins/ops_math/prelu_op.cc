// prelu_op.cc: Fluid's prelu: Out = X > 0 ? X : Alpha * X with a learnt Alpha shared by all of
// X (mode "all", 1 value), per channel (dim 1, C values) or per element of a sample (X's dims
// after the batch), and its grad (dAlpha sums over what shares each alpha).
#include <tide/ops/prelu.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// The kernels read their inputs through tide/ops/prelu.hpp.
template <typename T>
void PreluKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetPreluArgs<T>(ctx);
  for (int64_t e = 0; e < a.n; ++e) a.out[e] = a.x[e] > T(0) ? a.x[e] : a.alpha[a.ai(e)] * a.x[e];
}

template <typename T>
void PreluGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetPreluGradArgs<T>(ctx);
  if (a.dx)
    for (int64_t e = 0; e < a.n; ++e)
      a.dx[e] = a.x[e] > T(0) ? a.dout[e] : a.alpha[a.ai(e)] * a.dout[e];
  if (a.dalpha) {
    std::fill(a.dalpha, a.dalpha + a.alpha_numel, T(0));
    for (int64_t e = 0; e < a.n; ++e)
      if (a.x[e] <= T(0)) a.dalpha[a.ai(e)] += a.dout[e] * a.x[e];
  }
}

void PreluInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), a = ctx.InputDims("Alpha");
  const bool known =
      std::all_of(x.begin() + (x.empty() ? 0 : 1), x.end(), [](int64_t d) { return d >= 0; }) &&
      std::all_of(a.begin(), a.end(), [](int64_t d) { return d >= 0; });
  if (known) tide::ops::PreluAlphaIndexOf(ctx, x, DimsProduct(a));  // the batch dim never matters
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("prelu")
                     .Comment("Out = X > 0 ? X : Alpha * X; Alpha shared by all X (mode 'all'), "
                              "per channel (dim 1) or per element of a sample ('element').")
                     .Input("X", "input")
                     .Input("Alpha", "the learnt slopes")
                     .Output("Out", "same dims as X")
                     .Attr("mode", std::string("all"), "'all', 'channel' or 'element'")
                     .InSet({"all", "channel", "element"})
                     .Attr("data_format", std::string("NCHW"),
                           "NHWC: mode 'channel' takes X's last dim as the channels")
                     .InferShape(PreluInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("prelu_grad")
                           .Input("X", g.Input("X"))
                           .Input("Alpha", g.Input("Alpha"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Alpha"), g.InputGrad("Alpha"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("prelu_grad")
                     .Input("X")
                     .Input("Alpha")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Alpha"))
                     .AsDispensable()
                     .Attr("mode", std::string("all"))
                     .Attr("data_format", std::string("NCHW"))
                     .InferShape([](tide::InferShapeContext& c) {
                       for (const char* p : {"X", "Alpha"}) {
                         std::string gn = GradVarName(p);
                         if (!c.HasOutput(gn.c_str())) continue;
                         c.SetOutputDims(gn.c_str(), c.InputDims(p));
                         c.SetOutputDataType(gn.c_str(), c.InputDataType(p));
                       }
                     }));
TIDE_REGISTER_KERNEL("prelu", "cpu", PreluKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("prelu_grad", "cpu", PreluGradKernel, OPS_MATH_FLOAT_TYPES);
