// complex_math_kernels.cc: complex64 / complex128 kernels of the elementwise math ops (the
// activation table's sin ... sigmoid and pow, paddle_math_activations.h's tan ... expm1, and
// clip_ops.cc's sqrt) and of their grad ops, which Paddle 3.x also runs on complex tensors.
// Out is numpy's value: std::'s functions of std::complex (the C library's, with C99 Annex G's
// branch cuts, as numpy's), complex_math.h's where numpy's differ from them. The grads follow
// common.h's convention: Out = f(X) is holomorphic, so X@GRAD = Out@GRAD * conj(f'(X)), f'(X)
// computed from X or from Out, whichever the op's grad op reads. At a singular point (log at 0,
// rsqrt at 0, atanh at +-1, ...) X@GRAD is infinite or NaN, as numpy's formula and PyTorch give.
// exp and abs have their kernels in complex_ops.cc and complex_grad_kernels.cc.
#include <complex>
#include <string>
#include <tide/ops/activation.hpp>

#include "common.h"
#include "complex_math.h"
#include "element_map.h"
#include "paddle_math_activations.h"

namespace ops_math {
namespace {

using tide::ops::ActDep;
using tide::ops::ActGradFrom;

// sqrt is clip_ops.cc's op, not the table's; its grad op reads Out.
struct SqrtOp {
  static constexpr const char* kName = "sqrt";
  static constexpr ActDep kDep = tide::ops::kDepOut;
};

// A complex function: Op names the op and says which input its grad op reads (Op::kDep, the real
// functor's); Fwd(x) is Out, Deriv(v) is f'(X) from v, X or Out as Op::kDep says.
#define OPS_MATH_COMPLEX_FN(Cls, OpT, fwd, deriv) \
  struct Cls {                                    \
    using Op = OpT;                               \
    template <typename T>                         \
    static T Fwd(const T& x) {                    \
      return fwd;                                 \
    }                                             \
    template <typename T>                         \
    static T Deriv(const T& v) {                  \
      return deriv;                               \
    }                                             \
  };

namespace ops = tide::ops;
// From X: the trigonometric and hyperbolic functions and their inverses. Each inverse's
// derivative is 1 / (the derivative of the function at Out) written in X with principal square
// roots: sqrt(1 - z^2) is cos(asin z) and sin(acos z), sqrt(1 + z^2) is cosh(asinh z) (their real
// parts >= 0 on the principal branches), but sinh(acosh z) is sqrt(z - 1) sqrt(z + 1), which is
// -sqrt(z^2 - 1) where Re(z) < 0.
OPS_MATH_COMPLEX_FN(SinC, ops::SinAct, std::sin(x), std::cos(v))
OPS_MATH_COMPLEX_FN(CosC, ops::CosAct, std::cos(x), -std::sin(v))
OPS_MATH_COMPLEX_FN(TanC, TanAct, std::tan(x), T(1) / (std::cos(v) * std::cos(v)))
OPS_MATH_COMPLEX_FN(SinhC, SinhAct, std::sinh(x), std::cosh(v))
OPS_MATH_COMPLEX_FN(CoshC, CoshAct, std::cosh(x), std::sinh(v))
OPS_MATH_COMPLEX_FN(AsinC, ops::AsinAct, std::asin(x), T(1) / std::sqrt(T(1) - v * v))
OPS_MATH_COMPLEX_FN(AcosC, ops::AcosAct, std::acos(x), T(-1) / std::sqrt(T(1) - v * v))
OPS_MATH_COMPLEX_FN(AtanC, ops::AtanAct, std::atan(x), T(1) / (T(1) + v * v))
OPS_MATH_COMPLEX_FN(AsinhC, AsinhAct, std::asinh(x), T(1) / std::sqrt(T(1) + v * v))
OPS_MATH_COMPLEX_FN(AcoshC, AcoshAct, std::acosh(x),
                    T(1) / (std::sqrt(v - T(1)) * std::sqrt(v + T(1))))
OPS_MATH_COMPLEX_FN(AtanhC, AtanhAct, std::atanh(x), T(1) / (T(1) - v * v))
// From X: logarithms (principal: the cut along the negative real axis, below -1 for log1p;
// numpy's log2 / log10 are log times log2(e) / log10(e)), square.
OPS_MATH_COMPLEX_FN(LogC, ops::LogAct, std::log(x), T(1) / v)
OPS_MATH_COMPLEX_FN(Log2C, Log2Act, std::log(x) * RealType<T>(1.4426950408889634),
                    T(1) / (v * RealType<T>(0.69314718055994531)))
OPS_MATH_COMPLEX_FN(Log10C, Log10Act, std::log(x) * RealType<T>(0.43429448190325183),
                    T(1) / (v * RealType<T>(2.3025850929940457)))
OPS_MATH_COMPLEX_FN(Log1pC, Log1pAct, Log1p(x), T(1) / (T(1) + v))
OPS_MATH_COMPLEX_FN(SquareC, ops::SquareAct, TextbookMul(x, x), T(2) * v)
// From Out: tanh' = 1 - Out^2, sigmoid' = Out (1 - Out), expm1' = Out + 1, sqrt' = 1 / (2 Out),
// rsqrt' = -Out^3 / 2, reciprocal' = -Out^2.
OPS_MATH_COMPLEX_FN(TanhC, ops::TanhAct, std::tanh(x), T(1) - v * v)
OPS_MATH_COMPLEX_FN(SigmoidC, ops::SigmoidAct, T(1) / (T(1) + std::exp(-x)), v*(T(1) - v))
OPS_MATH_COMPLEX_FN(Expm1C, Expm1Act, Expm1(x), v + T(1))
OPS_MATH_COMPLEX_FN(SqrtC, SqrtOp, std::sqrt(x), T(0.5) / v)
OPS_MATH_COMPLEX_FN(RsqrtC, ops::RsqrtAct, T(1) / std::sqrt(x), T(-0.5) * v * v * v)
OPS_MATH_COMPLEX_FN(ReciprocalC, ops::ReciprocalAct, T(1) / x, -(v* v))
#undef OPS_MATH_COMPLEX_FN

template <typename T, typename F>
void ComplexFnKernel(KernelContext& ctx) {
  MapX<T, T>(ctx, [](const T& x) { return F::template Fwd<T>(x); });
}

template <typename T, typename F>
void ComplexFnGradKernel(KernelContext& ctx) {
  GradMap<T, T>(ctx, ActGradFrom<typename F::Op>(),
                [](const T& v, const T& g) { return g * std::conj(F::template Deriv<T>(v)); });
}

// pow: Out = X ^ factor (FactorTensor or `factor`, a real exponent), numpy's z ** factor.
template <typename T>
void PowKernel(KernelContext& ctx) {
  const T w(tide::ops::PowFactor(ctx));
  MapX<T, T>(ctx, [w](const T& x) { return NumpyPow(x, w); });
}

template <typename T>
void PowGradKernel(KernelContext& ctx) {
  const T w(tide::ops::PowFactor(ctx));
  GradMap<T, T>(ctx, "X",
                [w](const T& x, const T& g) { return g * std::conj(PowDerivBase(x, w)); });
}

template <typename F>
void RegisterComplexFn(tide::Registrar& r) {
  const std::string type = F::Op::kName;
  r.Kernel(type, "cpu", TIDE_COMPLEX64, &ComplexFnKernel<std::complex<float>, F>);
  r.Kernel(type, "cpu", TIDE_COMPLEX128, &ComplexFnKernel<std::complex<double>, F>);
  r.Kernel(type + "_grad", "cpu", TIDE_COMPLEX64, &ComplexFnGradKernel<std::complex<float>, F>);
  r.Kernel(type + "_grad", "cpu", TIDE_COMPLEX128, &ComplexFnGradKernel<std::complex<double>, F>);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_ON_REGISTER([](tide::Registrar& r) {
  RegisterComplexFn<SinC>(r);
  RegisterComplexFn<CosC>(r);
  RegisterComplexFn<TanC>(r);
  RegisterComplexFn<SinhC>(r);
  RegisterComplexFn<CoshC>(r);
  RegisterComplexFn<TanhC>(r);
  RegisterComplexFn<AsinC>(r);
  RegisterComplexFn<AcosC>(r);
  RegisterComplexFn<AtanC>(r);
  RegisterComplexFn<AsinhC>(r);
  RegisterComplexFn<AcoshC>(r);
  RegisterComplexFn<AtanhC>(r);
  RegisterComplexFn<LogC>(r);
  RegisterComplexFn<Log2C>(r);
  RegisterComplexFn<Log10C>(r);
  RegisterComplexFn<Log1pC>(r);
  RegisterComplexFn<Expm1C>(r);
  RegisterComplexFn<SqrtC>(r);
  RegisterComplexFn<RsqrtC>(r);
  RegisterComplexFn<SquareC>(r);
  RegisterComplexFn<ReciprocalC>(r);
  RegisterComplexFn<SigmoidC>(r);
});
// pow_grad reads X (its first input, which picks the kernel), FactorTensor and Out@GRAD.
TIDE_REGISTER_KERNEL("pow", "cpu", PowKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("pow_grad", "cpu", PowGradKernel, OPS_MATH_COMPLEX_TYPES);
