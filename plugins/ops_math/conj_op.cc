// conj_op.cc: Paddle's conj (paddle.conj: the complex conjugate, element-wise). On the real types
// Paddle's CPU kernel takes (float, double, int32, int64) Out is a copy of X; on complex64 /
// complex128 the imaginary parts change sign. Its grad is conj of dOut, as Paddle's (conj again):
// with z@GRAD = dL/dx + i dL/dy, conj's X@GRAD is conj(Out@GRAD).
#include <algorithm>
#include <complex>

#include "common.h"

namespace ops_math {
namespace {

template <typename T>
void ConjKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  if (x.numel() == 0) return;
  const T* xd = x.data<T>();
  if constexpr (kIsComplex<T>)
    std::transform(xd, xd + x.numel(), o, [](const T& z) { return std::conj(z); });
  else
    std::copy(xd, xd + x.numel(), o);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("conj")
        .Comment("Out = the complex conjugate of X (paddle.conj): X itself on the "
                 "real types.")
        .Input("X", "the input (float, double, int32, int64, complex64 or complex128)")
        .Output("Out", "X's dims and data type")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        .Grad([](tide::GradMaker& g) {
          g.NewOp("conj").Input("X", g.OutputGrad("Out")).Output("Out", g.InputGrad("X"));
        }));
TIDE_REGISTER_KERNEL("conj", "cpu", ConjKernel, OPS_MATH_NUMERIC_TYPES, OPS_MATH_COMPLEX_TYPES);
