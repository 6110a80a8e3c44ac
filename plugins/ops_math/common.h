// common.h: helpers shared by ops_math kernels: Eigen views of inputs and outputs (evaluation,
// inline or on the CPU pool, is tide::EigenEval); the shape rules are the SDK's standard op
// semantics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <tide/eigen.hpp>
#include <tide/kernels/common.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/complex.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>

namespace ops_math {

using tide::Dims;
using tide::KernelContext;
using tide::kParallelThreshold;
using tide::Tensor;
// out = expr, on the CPU pool when large enough (tide::EigenEval).
using tide::EigenEval;
using tide::ops::Broadcast;
using tide::ops::DimsProduct;
using tide::ops::Flatten2D;
using tide::ops::GetBroadcast;

// Eigen views of inputs and outputs: the SDK's header-only kernels' (tide/kernels/common.hpp).
using tide::kernels::In;
using tide::kernels::Out;

// A grad op's shape inference: each <input>@GRAD the op outputs takes that input's dims and
// data type.
using tide::ops::GradsLikeInputs;
inline void GradsLikeXY(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X", "Y"}); }

// Out's dims for two inputs broadcast numpy-style (tide/ops/elementwise.hpp), an error naming
// both when they do not broadcast; with an unknown (-1) dim, the longer input's dims (the kernel
// checks them when it runs).
inline Dims NumpyOutDims(const char* op, const Dims& x, const Dims& y) {
  const auto known = [](const Dims& d) {
    return std::none_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
  };
  if (!known(x) || !known(y)) return x.size() >= y.size() ? x : y;
  return tide::ops::GetNumpyBroadcast(op, x, y).out;
}

// The random ops' shared pieces (fill_ops.cc): Out's dims from ShapeTensor, ShapeTensorList or
// `shape` (Fluid's precedence) at compile time and at run time; the schema of those inputs with
// `seed` and `dtype` (default `dtype`); and the generator of an op's `seed` attribute (0: a fresh
// seed each run, else the same numbers each run).
void ShapeInputsInferShape(tide::InferShapeContext& ctx);
Dims ShapeInputsDims(const KernelContext& ctx);
tide::OpSchema RandomSchema(const char* type, const char* comment, TideDataType dtype = TIDE_FP32);
std::mt19937_64 RandomEngine(const KernelContext& ctx);

// Kernels for float and double.
#define OPS_MATH_FLOAT_TYPES float, double
// Kernels for float, double and the integer types where the op makes sense.
#define OPS_MATH_NUMERIC_TYPES float, double, int32_t, int64_t
// complex64 and complex128 (tide/ops/complex.hpp), for the ops whose arithmetic is numpy's on
// complex numbers too (never those that compare values: max, min, relu, sort). Their grad kernels
// follow Paddle's and PyTorch's convention: z@GRAD holds dL/dx + i dL/dy for z = x + iy and a real
// loss L, so a holomorphic Out = f(X) gives X@GRAD = Out@GRAD * conj(f'(X)).
#define OPS_MATH_COMPLEX_TYPES std::complex<float>, std::complex<double>
using tide::ops::kIsComplex;
using tide::ops::RealType;

// conj(v) for a complex T, v itself for a real one: a grad kernel multiplies Out@GRAD by the
// conjugate of each partial derivative (the real rule unchanged).
template <typename T>
T ConjIfComplex(const T& v) {
  if constexpr (kIsComplex<T>)
    return std::conj(v);
  else
    return v;
}

// The n values at v conjugated into scratch memory freed when the kernel returns (a complex
// matrix product's gradient multiplies by the other operand's conjugate); a real v itself.
template <typename T>
const T* ConjugatedIfComplex(const KernelContext& ctx, const T* v, int64_t n) {
  if constexpr (kIsComplex<T>) {
    if (n == 0) return v;
    T* c = ctx.TempBuffer<T>(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) c[i] = std::conj(v[i]);
    return c;
  } else {
    return v;
  }
}

}  // namespace ops_math
