// element_map.h: kernels that compute each element of one output from the same element of one
// input, split over the CPU pool: Out[i] = f(X[i]) (complex_ops.cc, complex_math_kernels.cc) and
// X@GRAD[i] = f(from[i], Out@GRAD[i]) (the complex grads: complex_grad_kernels.cc,
// complex_math_kernels.cc, angle's).
#pragma once

#include <string>

#include "common.h"

namespace ops_math {

// Out = f(X) element by element, Out of type O and X's dims (X and Out may share a variable).
template <typename T, typename O, typename F>
void MapX(KernelContext& ctx, F f) {
  Tensor x = ctx.Input("X");
  const T* xd = x.numel() ? x.data<T>() : nullptr;
  O* o = ctx.Output("Out").mutable_data<O>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = f(xd[i]);
  });
}

// X@GRAD[i] = f(from[i], Out@GRAD[i]): `from` the input the grad op reads (X or Out) of type T,
// whose dims X@GRAD takes; Out@GRAD of type D and the same dims.
template <typename T, typename D, typename F>
void GradMap(KernelContext& ctx, const char* from_param, F f) {
  Tensor from = ctx.Input(from_param), dout = ctx.Input(tide::GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), from.dims());
  T* dx = ctx.Output(tide::GradVarName("X").c_str()).mutable_data<T>(from.dims(), ctx.place());
  if (from.numel() == 0) return;
  const T* v = from.data<T>();
  const D* g = dout.data<D>();
  tide::ParallelFor(ctx, from.numel(), 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = f(v[i], g[i]);
  });
}

}  // namespace ops_math
