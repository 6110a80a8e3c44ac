// tide/kernels/activation.hpp: the plain CPU kernel of Fluid's activations (Out = f(X)
// elementwise, f one of tide/ops/activation.hpp's functors: relu, sigmoid, tanh, ...),
// header-only: ops_math registers it for each activation, and a compiled model (tide.aot.compile)
// calls it directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_ACTIVATION_HPP_
#define TIDE_KERNELS_ACTIVATION_HPP_

#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/activation.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

template <typename T, typename F>
void Activation(KernelContext& ctx) {
  using ops::MakeActivation;
  const F f = MakeActivation<F>(ctx);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T* __restrict__ xd = x.data<T>();
  T* __restrict__ od = out.mutable_data<T>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), 8, [f, xd, od](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) od[i] = f.template Fwd<T>(xd[i]);
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_ACTIVATION_HPP_
