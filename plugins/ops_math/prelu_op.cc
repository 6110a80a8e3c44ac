// prelu_op.cc: Fluid's prelu: Out = X > 0 ? X : Alpha * X with a learnt Alpha shared by all of
// X (mode "all", 1 value), per channel (dim 1, C values) or per element of a sample (X's dims
// after the batch), and its grad (dAlpha sums over what shares each alpha).
#include <tide/ops/prelu.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using AlphaIndex = tide::ops::PreluAlphaIndex;

// tide/ops/prelu.hpp's rule for the op's mode.
template <typename Ctx>
AlphaIndex GetAlphaIndex(const Ctx& ctx, const Dims& x, int64_t alpha_numel) {
  return tide::ops::GetPreluAlphaIndex(ctx.op_type(), ctx.template Attr<std::string>("mode"), x,
                                       alpha_numel, ctx.InputName("Alpha"));
}

template <typename T>
void PreluKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  const AlphaIndex ai = GetAlphaIndex(ctx, x.dims(), alpha.numel());
  const T* xd = x.data<T>();
  const T* ad = alpha.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t e = 0, n = x.numel(); e < n; ++e) o[e] = xd[e] > T(0) ? xd[e] : ad[ai(e)] * xd[e];
}

template <typename T>
void PreluGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const AlphaIndex ai = GetAlphaIndex(ctx, x.dims(), alpha.numel());
  const T* xd = x.data<T>();
  const T* ad = alpha.data<T>();
  const T* g = dout.data<T>();
  const int64_t n = x.numel();
  if (Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str())) {
    T* d = dx.mutable_data<T>(x.dims(), ctx.place());
    for (int64_t e = 0; e < n; ++e) d[e] = xd[e] > T(0) ? g[e] : ad[ai(e)] * g[e];
  }
  if (Tensor da = ctx.OptionalOutput(GradVarName("Alpha").c_str())) {
    T* d = da.mutable_data<T>(alpha.dims(), ctx.place());
    std::fill(d, d + alpha.numel(), T(0));
    for (int64_t e = 0; e < n; ++e)
      if (xd[e] <= T(0)) d[ai(e)] += g[e] * xd[e];
  }
}

void PreluInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), a = ctx.InputDims("Alpha");
  const bool known = std::all_of(x.begin() + (x.empty() ? 0 : 1), x.end(),
                                 [](int64_t d) { return d >= 0; }) &&
                     std::all_of(a.begin(), a.end(), [](int64_t d) { return d >= 0; });
  if (known) GetAlphaIndex(ctx, x, DimsProduct(a));  // the batch dim never matters
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
                     .Input("X", "input").Input("Alpha", "the learnt slopes")
                     .Output("Out", "same dims as X")
                     .Attr("mode", std::string("all"), "'all', 'channel' or 'element'")
                     .InSet({"all", "channel", "element"})
                     .InferShape(PreluInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("prelu_grad")
                           .Input("X", g.Input("X")).Input("Alpha", g.Input("Alpha"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Alpha"), g.InputGrad("Alpha"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("prelu_grad")
                     .Input("X").Input("Alpha").Input(GradVarName("Out"))
                     .Output(GradVarName("X")).AsDispensable()
                     .Output(GradVarName("Alpha")).AsDispensable()
                     .Attr("mode", std::string("all"))
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
