// renorm_op.cc: Paddle's renorm (paddle.renorm(x, p, axis, max_norm)): each slice X[..., i, ...]
// along `axis` whose p-norm (over all its elements) exceeds max_norm is scaled to norm max_norm
// (by max_norm / norm, no epsilon, as Paddle); the others pass unchanged. Its grad, Paddle's: in a
// scaled slice, with S = sum |X|^p, dX = scale dOut - max_norm S^(-1-1/p) sum(dOut X)
// |X|^(p-1) sign(X).
#include <cmath>
#include <tide/ops/axis.hpp>
#include <vector>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// X as [pre, n, post] around the axis: slice i is X[:, i, :].
struct RenormGeom {
  int64_t pre, n, post;
  int64_t Slice(int64_t e) const { return e / post % n; }
};

RenormGeom GeomOf(const KernelContext& ctx, const Dims& x) {
  TIDE_CHECK(!x.empty(), "op '", ctx.op_type(), "': X must have at least one dim, got []");
  const int a = tide::ops::NormAxis(ctx.op_type(), ctx.Attr<int32_t>("axis"), x.size());
  return {DimsProduct(x, 0, a), x[a], DimsProduct(x, a + 1, x.size())};
}

// Each slice's sum |X|^p.
template <typename T>
std::vector<T> PowerSums(const RenormGeom& g, const T* x, int64_t numel, T p) {
  std::vector<T> s(g.n, T(0));
  for (int64_t e = 0; e < numel; ++e) s[g.Slice(e)] += std::pow(std::abs(x[e]), p);
  return s;
}

template <typename T>
void RenormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const RenormGeom g = GeomOf(ctx, x.dims());
  const T p = T(ctx.Attr<float>("p")), max_norm = T(ctx.Attr<float>("max_norm"));
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::vector<T> scale = PowerSums(g, xd, x.numel(), p);
  for (T& s : scale) {
    const T norm = std::pow(s, T(1) / p);
    s = norm > max_norm ? max_norm / norm : T(1);
  }
  for (int64_t e = 0; e < x.numel(); ++e) o[e] = scale[g.Slice(e)] * xd[e];
}

template <typename T>
void RenormGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const RenormGeom g = GeomOf(ctx, x.dims());
  const T p = T(ctx.Attr<float>("p")), max_norm = T(ctx.Attr<float>("max_norm"));
  const T *xd = x.data<T>(), *gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  const int64_t numel = x.numel();
  const std::vector<T> sums = PowerSums(g, xd, numel, p);
  std::vector<T> scale(g.n, T(1)), coef(g.n, T(0)), dot(g.n, T(0));
  for (int64_t i = 0; i < g.n; ++i) {
    const T norm = std::pow(sums[i], T(1) / p);
    if (norm <= max_norm) continue;
    scale[i] = max_norm / norm;
    coef[i] = -max_norm * std::pow(sums[i], T(-1) - T(1) / p);
  }
  for (int64_t e = 0; e < numel; ++e) dot[g.Slice(e)] += xd[e] * gd[e];
  for (int64_t e = 0; e < numel; ++e) {
    const int64_t i = g.Slice(e);
    const T sign = xd[e] >= T(0) ? T(1) : T(-1);
    dx[e] = scale[i] * gd[e];
    if (coef[i] != T(0)) dx[e] += dot[i] * coef[i] * std::pow(std::abs(xd[e]), p - T(1)) * sign;
  }
}

void RenormInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", ctx.op_type(), "': X must have at least one dim, got []");
  tide::ops::NormAxis(ctx.op_type(), ctx.Attr<int32_t>("axis"), x.size());
  const float p = ctx.Attr<float>("p"), max_norm = ctx.Attr<float>("max_norm");
  TIDE_CHECK(p > 0, "op '", ctx.op_type(), "': p must be > 0, got ", p);
  TIDE_CHECK(max_norm >= 0, "op '", ctx.op_type(), "': max_norm must be >= 0, got ", max_norm);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::OpSchema RenormAttrs(tide::OpSchema s) {
  return s.Attr("p", 2.0f, "the p of the slices' norms (> 0)")
      .Attr("axis", int32_t(0), "the dim whose slices are renormed (negative: from the end)")
      .Attr("max_norm", 1.0f, "the largest norm a slice keeps");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(RenormAttrs(tide::OpSchema("renorm")
                                 .Comment("Out = X with each slice along axis whose p-norm "
                                          "exceeds max_norm scaled to max_norm (paddle.renorm).")
                                 .Input("X", "the input")
                                 .Output("Out", "X's dims"))
                     .InferShape(RenormInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("renorm_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(
    RenormAttrs(
        tide::OpSchema("renorm_grad").Input("X").Input(GradVarName("Out")).Output(GradVarName("X")))
        .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("renorm", "cpu", RenormKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("renorm_grad", "cpu", RenormGradKernel, OPS_MATH_FLOAT_TYPES);
