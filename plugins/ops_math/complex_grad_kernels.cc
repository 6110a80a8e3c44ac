// complex_grad_kernels.cc: the complex64 / complex128 kernels of the activation table's abs_grad
// and exp_grad (their forward complex kernels are complex_ops.cc's), by common.h's convention
// (z@GRAD = dL/dx + i dL/dy): abs (a real Out) gives X@GRAD = Out@GRAD * X / |X|, 0 where X is 0
// (PyTorch's and Paddle's choice at the kink); exp gives X@GRAD = Out@GRAD * conj(Out).
#include <complex>

#include "common.h"
#include "element_map.h"

namespace ops_math {
namespace {

// X / |X| is the unit vector along X, the direction in which |X| grows; |X| by hypot, so a large
// or tiny X neither overflows nor underflows on the way.
template <typename T>
void AbsGradKernel(KernelContext& ctx) {
  GradMap<T, RealType<T>>(ctx, "X", [](const T& x, RealType<T> g) {
    const RealType<T> r = std::abs(x);
    return r == 0 ? T(0) : x / r * g;
  });
}

template <typename T>
void ExpGradKernel(KernelContext& ctx) {
  GradMap<T, T>(ctx, "Out", [](const T& out, const T& g) { return g * std::conj(out); });
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

// abs_grad reads X (complex) and a real Out@GRAD: its kernel goes by X's type, the first input.
TIDE_REGISTER_KERNEL("abs_grad", "cpu", AbsGradKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("exp_grad", "cpu", ExpGradKernel, OPS_MATH_COMPLEX_TYPES);
