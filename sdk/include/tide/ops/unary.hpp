// tide/ops/unary.hpp: an elementwise op of one input and its grad as every kernel reads them: X
// and Out (X's dims); the grad's input (X or Out, as the op's formula needs), Out@GRAD holding as
// many values, and X@GRAD (that input's dims), outputs allocated on the kernel's place.
#ifndef TIDE_OPS_UNARY_HPP_
#define TIDE_OPS_UNARY_HPP_

#include <cstdint>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

template <typename T>
struct UnaryArgs {
  int64_t n;
  const T* x;
  T* out;
};

template <typename T>
UnaryArgs<T> GetUnaryArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  UnaryArgs<T> a;
  a.n = x.numel();
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  return a;
}

// `from`: the input the grad's formula reads (X or Out).
template <typename T>
struct UnaryGradArgs {
  int64_t n;
  const T* from;
  const T* dout;
  T* dx;
};

template <typename T>
UnaryGradArgs<T> GetUnaryGradArgs(const KernelContext& ctx, const char* from_param) {
  Tensor from = ctx.Input(from_param), dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(dout.numel() == from.numel(), "op '", ctx.op_type(), "': Out@GRAD ",
             ToString(dout.dims()), " does not match ", from_param, " ", ToString(from.dims()));
  UnaryGradArgs<T> a;
  a.n = from.numel();
  a.from = from.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(from.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_UNARY_HPP_
