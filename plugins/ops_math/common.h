// common.h: helpers shared by ops_math kernels: Eigen views of inputs and outputs (evaluation,
// inline or on the CPU pool, is tide::EigenEval); the shape rules are the SDK's standard op
// semantics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/dims.hpp>
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

template <typename T>
tide::ConstEigenVector<T> In(const Tensor& t) {
  return tide::Flat<T>(t);
}
template <typename T>
tide::EigenVector<T> Out(Tensor& t, const KernelContext& ctx) {
  return tide::FlatMutable<T>(t, ctx.place());
}
// The same over n elements that tide/ops' readers give as pointers.
template <typename T>
tide::ConstEigenVector<T> In(const T* p, int64_t n) {
  return tide::ConstEigenVector<T>(p, n);
}
template <typename T>
tide::EigenVector<T> Out(T* p, int64_t n) {
  return tide::EigenVector<T>(p, n);
}

// Kernels for float and double.
#define OPS_MATH_FLOAT_TYPES float, double
// Kernels for float, double and the integer types where the op makes sense.
#define OPS_MATH_NUMERIC_TYPES float, double, int32_t, int64_t

}  // namespace ops_math
