// log_softmax_op.cc: Paddle 2.x's log_softmax (F.log_softmax): Out = X - log(sum(exp(X))) along
// one axis (by the row's max, so it neither overflows nor underflows to -inf), and its grad. The
// inputs are read as softmax's (tide/ops/softmax.hpp): X or Out as [pre, n, post] around the axis.
#include <cmath>
#include <tide/ops/softmax.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::AxisSplit;

template <typename T>
void LogSoftmaxKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetSoftmaxArgs<T>(ctx);
  const AxisSplit s = a.s;
  const T* x = a.x;
  T* out = a.out;
  tide::ParallelFor(ctx, s.pre * s.post, s.n * 4, [=](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t base = (r / s.post) * s.n * s.post + r % s.post;
      T m = x[base];
      for (int64_t j = 1; j < s.n; ++j) m = std::max(m, x[base + j * s.post]);
      T sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += std::exp(x[base + j * s.post] - m);
      const T lse = m + std::log(sum);
      for (int64_t j = 0; j < s.n; ++j) out[base + j * s.post] = x[base + j * s.post] - lse;
    }
  });
}

// dX = dOut - exp(Out) * sum(dOut) along the axis.
template <typename T>
void LogSoftmaxGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetSoftmaxGradArgs<T>(ctx);
  const AxisSplit s = a.s;
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      const int64_t base = i * s.n * s.post + k;
      T sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += a.dout[base + j * s.post];
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = base + j * s.post;
        a.dx[e] = a.dout[e] - std::exp(a.out[e]) * sum;
      }
    }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("log_softmax")
                     .Comment("Out = X - log(sum(exp(X))) along `axis` (log of softmax).")
                     .Input("X", "input")
                     .Output("Out", "same dims as X")
                     .Attr("axis", int32_t(-1), "the axis normalised over")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("log_softmax_grad")
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("log_softmax_grad")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", int32_t(-1))
                     .InferShape(tide::SameShapeAsInput("Out", GradVarName("X"))));
TIDE_REGISTER_KERNEL("log_softmax", "cpu", LogSoftmaxKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("log_softmax_grad", "cpu", LogSoftmaxGradKernel, OPS_MATH_FLOAT_TYPES);
