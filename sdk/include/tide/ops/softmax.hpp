// tide/ops/softmax.hpp: softmax along an axis and its grad as every kernel reads their inputs: X
// (or Out) as [pre, n, post] around the axis, Out@GRAD checked against Out, outputs allocated on
// the kernel's place.
#ifndef TIDE_OPS_SOFTMAX_HPP_
#define TIDE_OPS_SOFTMAX_HPP_

#include <cstdint>
#include <tide/ops/axis.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// softmax: X around the axis; Out allocated with X's dims.
template <typename T>
struct SoftmaxArgs {
  AxisSplit s;
  const T* x;
  T* out;
};

template <typename T>
SoftmaxArgs<T> GetSoftmaxArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  SoftmaxArgs<T> a;
  a.s = SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  return a;
}

// softmax_grad: Out around the axis, Out@GRAD (Out's values); X@GRAD allocated with Out's dims.
template <typename T>
struct SoftmaxGradArgs {
  AxisSplit s;
  const T* out;
  const T* dout;
  T* dx;
};

template <typename T>
SoftmaxGradArgs<T> GetSoftmaxGradArgs(const KernelContext& ctx) {
  Tensor out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  SoftmaxGradArgs<T> a;
  a.s = SplitAt(ctx.op_type(), out.dims(), ctx.Attr<int32_t>("axis"));
  TIDE_CHECK(dout.numel() == out.numel(), "op '", ctx.op_type(), "': Out@GRAD ",
             ToString(dout.dims()), " does not match Out ", ToString(out.dims()));
  a.out = out.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(out.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SOFTMAX_HPP_
