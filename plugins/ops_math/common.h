// common.h: helpers shared by ops_math kernels: Eigen evaluation (inline for small tensors,
// on the CPU pool for large ones); the shape rules are the SDK's standard op semantics.
#pragma once

#include <tide/eigen.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <algorithm>
#include <cstdint>

namespace ops_math {

using tide::Dims;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::Broadcast;
using tide::ops::DimsProduct;
using tide::ops::Flatten2D;
using tide::ops::GetBroadcast;

// Below this many elements, a thread hand-off costs more than the work.
constexpr int64_t kParallelThreshold = 1 << 15;

// out = expr, on the CPU pool when the tensor is large enough to benefit.
template <typename Out, typename Expr>
void Eval(const KernelContext& ctx, Out out, const Expr& expr) {
  if (out.size() >= kParallelThreshold)
    out.device(tide::EigenDevice(ctx)) = expr;
  else
    out = expr;
}

template <typename T>
tide::ConstEigenVector<T> In(const Tensor& t) {
  return tide::Flat<T>(t);
}
template <typename T>
tide::EigenVector<T> Out(Tensor& t, const KernelContext& ctx) {
  return tide::FlatMutable<T>(t, ctx.place());
}

// Kernels for float and double.
#define OPS_MATH_FLOAT_TYPES float, double
// Kernels for float, double and the integer types where the op makes sense.
#define OPS_MATH_NUMERIC_TYPES float, double, int32_t, int64_t

}  // namespace ops_math
