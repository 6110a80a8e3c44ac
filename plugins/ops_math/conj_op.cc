// conj_op.cc: Paddle's conj (paddle.conj: the complex conjugate, element-wise). Tide holds no
// complex data type (a complex tensor is refused where it is read or fed), so on the real types
// Paddle's CPU kernel takes (float, double, int32, int64) Out is a copy of X; its grad is conj
// of dOut, as Paddle's (conj again).
#include <algorithm>

#include "common.h"

namespace ops_math {
namespace {

template <typename T>
void ConjKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(x.data<T>(), x.data<T>() + x.numel(), o);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("conj")
        .Comment("Out = the complex conjugate of X (paddle.conj): X itself on the "
                 "real types Tide holds.")
        .Input("X", "the input (float, double, int32 or int64)")
        .Output("Out", "X's dims and data type")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        .Grad([](tide::GradMaker& g) {
          g.NewOp("conj").Input("X", g.OutputGrad("Out")).Output("Out", g.InputGrad("X"));
        }));
TIDE_REGISTER_KERNEL("conj", "cpu", ConjKernel, OPS_MATH_NUMERIC_TYPES);
