// tide/kernels/reshape.hpp: the plain CPU kernels of the view-like ops, X's data with other dims
// (tide/ops/reshape.hpp, index_shape.hpp and tensor_shape.hpp give the dims): reshape / reshape2
// (the shape attribute, or the Shape / ShapeTensor inputs read at run time), flatten / flatten2
// (2-D at `axis`), Paddle 2.x's flatten_contiguous_range, squeeze2 / unsqueeze2. The *2 ops'
// XShape holds no data and is not written. Header-only: ops_nn registers them, and a compiled
// model (tide.aot.compile) calls them directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_RESHAPE_HPP_
#define TIDE_KERNELS_RESHAPE_HPP_

#include <cstdint>
#include <cstring>
#include <tide/ops/index_shape.hpp>
#include <tide/ops/reshape.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// dst = src's data with new dims: a copy, unless dst is src's own tensor (then only resized) or
// dst's memory is src's (the executor moved a dying src's memory into dst: TideOpDef.views).
template <typename T>
void CopyWithDims(KernelContext& ctx, Tensor src, Tensor dst, const Dims& dims) {
  if (dst.c() == src.c()) {
    dst.Resize(dims);
    return;
  }
  T* d = dst.mutable_data<T>(dims, ctx.place());
  const T* s = src.data<T>();
  if (d != s) std::memcpy(d, s, sizeof(T) * src.numel());
}

// dst = src's data with new dims (a copy, unless dst's memory is src's, as above).
template <typename T>
void CopyAs(KernelContext& ctx, const Tensor& src, Tensor dst, const Dims& dims) {
  T* d = dst.mutable_data<T>(dims, ctx.place());
  if (d != src.data<T>()) std::memcpy(d, src.data<T>(), sizeof(T) * src.numel());
}

// reshape and reshape2.
template <typename T>
void Reshape(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  Dims od = ops::ReshapeDims(ctx.op_type(), ops::ReshapeTarget(ctx), x.dims());
  CopyWithDims<T>(ctx, x, ctx.Output("Out"), od);
}

// flatten and flatten2.
template <typename T>
void Flatten(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(ctx, x, ctx.Output("Out"),
                  ops::FlattenDims(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis")));
}

template <typename T>
void FlattenContiguousRange(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(ctx, x, ctx.Output("Out"),
                  ops::FlattenRangeDims(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("start_axis"),
                                        ctx.Attr<int32_t>("stop_axis")));
}

// squeeze2 and unsqueeze2 (the axes attribute, or the axes tensors read at run time).
template <typename T>
void Squeeze(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  CopyAs<T>(ctx, x, ctx.Output("Out"), ops::SqueezeOutDims(ctx, x.dims()));
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_RESHAPE_HPP_
