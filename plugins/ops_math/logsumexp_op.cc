// logsumexp_op.cc: Paddle 2.x's logsumexp (paddle.logsumexp): Out = log(sum(exp(X))) over the
// dims of `axis` (all of them with reduce_all or an empty axis; a 0-D Out then, unless keepdim),
// by each group's max (no overflow); and its grad (dX = dOut exp(X - Out)).
#include <cmath>
#include <limits>
#include <set>
#include <tide/ops/axis.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// Which dims are reduced, and Out's dims.
struct LseGeom {
  std::vector<bool> reduced;
  Dims out;
};

template <typename Ctx>
LseGeom GetLseGeom(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const auto axis = ctx.template Attr<std::vector<int32_t>>("axis");
  const bool keep = ctx.template Attr<bool>("keepdim");
  const bool all = ctx.template Attr<bool>("reduce_all") || axis.empty();
  LseGeom g;
  g.reduced.assign(x.size(), all);
  if (!all)
    for (int32_t a : axis) g.reduced[tide::ops::NormAxis(op, a, x.size())] = true;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!g.reduced[i])
      g.out.push_back(x[i]);
    else if (keep)
      g.out.push_back(1);
  }
  return g;
}

// The Out element each X element reduces into, in X's row-major order.
std::vector<int64_t> OutIndexOf(const Dims& x, const std::vector<bool>& reduced) {
  std::vector<int64_t> idx(tide::ops::DimsProduct(x));
  std::vector<int64_t> pos(x.size(), 0);
  for (size_t e = 0; e < idx.size(); ++e) {
    int64_t o = 0;
    for (size_t k = 0; k < x.size(); ++k)
      if (!reduced[k]) o = o * x[k] + pos[k];
    idx[e] = o;
    for (int k = static_cast<int>(x.size()) - 1; k >= 0; --k) {
      if (++pos[k] < x[k]) break;
      pos[k] = 0;
    }
  }
  return idx;
}

template <typename T>
void LogsumexpKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const LseGeom g = GetLseGeom(ctx, x.dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(g.out, ctx.place());
  const int64_t on = tide::ops::DimsProduct(g.out);
  const std::vector<int64_t> oi = OutIndexOf(x.dims(), g.reduced);
  std::vector<T> m(on, -std::numeric_limits<T>::infinity()), s(on, T(0));
  for (size_t e = 0; e < oi.size(); ++e) m[oi[e]] = std::max(m[oi[e]], xd[e]);
  for (size_t e = 0; e < oi.size(); ++e) {
    const T mx = m[oi[e]];
    s[oi[e]] += std::isinf(mx) ? (xd[e] == mx ? T(1) : T(0)) : std::exp(xd[e] - mx);
  }
  for (int64_t i = 0; i < on; ++i) o[i] = m[i] + std::log(s[i]);
}

template <typename T>
void LogsumexpGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const LseGeom g = GetLseGeom(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.out);
  const std::vector<int64_t> oi = OutIndexOf(x.dims(), g.reduced);
  const T* xd = x.data<T>();
  const T* od = out.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  for (size_t e = 0; e < oi.size(); ++e) dx[e] = gd[oi[e]] * std::exp(xd[e] - od[oi[e]]);
}

void LogsumexpInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", GetLseGeom(ctx, ctx.InputDims("X")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::OpSchema LseAttrs(tide::OpSchema s) {
  return s.Attr("axis", std::vector<int32_t>{0}, "the reduced dims (empty: all)")
      .Attr("keepdim", false, "keep the reduced dims as 1s")
      .Attr("reduce_all", false, "reduce every dim");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LseAttrs(tide::OpSchema("logsumexp")
                              .Comment("Out = log(sum(exp(X))) over the dims of axis.")
                              .Input("X", "the input")
                              .Output("Out", "X's dims without the reduced ones"))
                     .InferShape(LogsumexpInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("logsumexp_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(LseAttrs(tide::OpSchema("logsumexp_grad")
                              .Input("X")
                              .Input("Out")
                              .Input(GradVarName("Out"))
                              .Output(GradVarName("X")))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("logsumexp", "cpu", LogsumexpKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("logsumexp_grad", "cpu", LogsumexpGradKernel, OPS_MATH_FLOAT_TYPES);
