// logcumsumexp_op.cc: Paddle's logcumsumexp (paddle.logcumsumexp: Out[j] = log(sum(exp(X[i])))
// over i <= j along `axis`; flatten scans X as one line; exclusive leaves X[j] out; reverse
// scans from the end) and its grad. Both keep a running log-sum-exp, so large X does not
// overflow. An empty sum (exclusive's first element) is the type's lowest value, as Paddle's.
// The grad, dX[i] = sum over the j that include i of dOut[j] exp(X[i] - Out[j]), splits dOut
// into its positive and negative parts and scans each in log space the other way.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tide/ops/axis.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// log(exp(a) + exp(b)) without overflow; lowest() stands for log(0).
template <typename T>
T LogAddExp(T a, T b) {
  const T hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi)) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

// The lines of the scan: `outer` blocks of `n` elements `inner` apart.
struct Lines {
  int64_t outer, n, inner;
};

template <typename Ctx>
Lines LinesOf(const Ctx& ctx, const Dims& x) {
  const int32_t axis = ctx.template Attr<int32_t>("axis");
  if (ctx.template Attr<bool>("flatten") || x.empty()) {  // one line of every element
    TIDE_CHECK(axis == 0 || axis == -1, "op '", ctx.op_type(), "': axis ", axis,
               " is out of range for a flattened (or 0-D) X: expected -1 or 0");
    return {1, DimsProduct(x), 1};
  }
  const int a = tide::ops::NormAxis(ctx.op_type(), axis, x.size());
  Lines l{1, x[a], 1};
  for (int k = 0; k < a; ++k) l.outer *= x[k];
  for (size_t k = a + 1; k < x.size(); ++k) l.inner *= x[k];
  return l;
}

// fn(p): p(j) the offset of the line's j-th element in scan order.
template <typename F>
void ForEachLine(const Lines& l, bool reverse, F&& fn) {
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t in = 0; in < l.inner; ++in) {
      const int64_t base = o * l.n * l.inner + in;
      fn([&, base](int64_t j) { return base + (reverse ? l.n - 1 - j : j) * l.inner; });
    }
}

Dims OutDims(const tide::InferShapeContext& ctx, const Dims& x) {
  return ctx.Attr<bool>("flatten") ? Dims{DimsProduct(x)} : x;
}

template <typename T>
void LogcumsumexpKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Lines l = LinesOf(ctx, x.dims());
  const bool exclusive = ctx.Attr<bool>("exclusive"), reverse = ctx.Attr<bool>("reverse");
  const Dims out_dims = ctx.Attr<bool>("flatten") ? Dims{x.numel()} : x.dims();
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(out_dims, ctx.place());
  ForEachLine(l, reverse, [&](auto p) {
    T acc = std::numeric_limits<T>::lowest();
    for (int64_t j = 0; j < l.n; ++j) {
      if (exclusive) o[p(j)] = acc;
      acc = LogAddExp(acc, xd[p(j)]);
      if (!exclusive) o[p(j)] = acc;
    }
  });
}

template <typename T>
void LogcumsumexpGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Lines l = LinesOf(ctx, x.dims());
  const bool exclusive = ctx.Attr<bool>("exclusive"), reverse = ctx.Attr<bool>("reverse");
  const T* xd = x.data<T>();
  const T* out = ctx.Input("Out").data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  constexpr T kLogZero = std::numeric_limits<T>::lowest();
  ForEachLine(l, reverse, [&](auto p) {
    // pos / neg: log of the sum of |dOut[j]| exp(-Out[j]) over the j after (or at) this one.
    T pos = kLogZero, neg = kLogZero;
    for (int64_t j = l.n - 1; j >= 0; --j) {
      const int64_t e = p(j);
      auto add = [&] {
        if (g[e] > T(0)) pos = LogAddExp(pos, std::log(g[e]) - out[e]);
        if (g[e] < T(0)) neg = LogAddExp(neg, std::log(-g[e]) - out[e]);
      };
      if (!exclusive) add();
      dx[e] = std::exp(xd[e] + pos) - std::exp(xd[e] + neg);
      if (exclusive) add();
    }
  });
}

void LogcumsumexpInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  LinesOf(ctx, x);  // checks axis
  ctx.SetOutputDims("Out", OutDims(ctx, x));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void LogcumsumexpGradShape(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("X");
  if (!ctx.HasOutput(dx.c_str())) return;
  ctx.SetOutputDims(dx.c_str(), ctx.InputDims("X"));
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType("X"));
}

tide::OpSchema LogcumsumexpAttrs(tide::OpSchema s) {
  return s.Attr("axis", int32_t{-1}, "the dim of the scan (negative: from the end)")
      .Attr("flatten", false, "scan X's elements as one line (Out is 1-D)")
      .Attr("exclusive", false, "each Out leaves its own X out of the sum")
      .Attr("reverse", false, "scan from the dim's end");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LogcumsumexpAttrs(tide::OpSchema("logcumsumexp")
                                       .Comment("Out = log(cumsum(exp(X))) along axis, computed "
                                                "stably (paddle.logcumsumexp).")
                                       .Input("X", "the input")
                                       .Output("Out", "X's dims (1-D with flatten)")
                                       .InferShape(LogcumsumexpInferShape))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("logcumsumexp_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(LogcumsumexpAttrs(tide::OpSchema("logcumsumexp_grad")
                                       .Input("X")
                                       .Input("Out")
                                       .Input(GradVarName("Out"))
                                       .Output(GradVarName("X"))
                                       .KernelDataTypeFrom("X")
                                       .InferShape(LogcumsumexpGradShape)));
TIDE_REGISTER_KERNEL("logcumsumexp", "cpu", LogcumsumexpKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("logcumsumexp_grad", "cpu", LogcumsumexpGradKernel, OPS_MATH_FLOAT_TYPES);
