// batch_size_like_op.cu: fill_constant_batch_size_like on the GPU (ops_control's op; the rule is
// tide/ops/batch_size_like.hpp's: a LoD Input's batch is its number of sequences). Same types as
// the CPU kernel, bool included.
#include <tide/ops/batch_size_like.hpp>

#include <vector>

#include "gpu.h"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void FillValueKernel(T* out, int64_t n, T value) {
  TIDE_CUDA_LOOP(i, n) { out[i] = value; }
}

template <typename T>
void FillConstantBatchSizeLike(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor in = ctx.Input("Input"), out = ctx.Output("Out");
  const Dims dims = tide::ops::BatchSizeLikeRunDims(
      ctx.op_type(), ctx.InputName("Input"), in.dims(), in.lod(),
      ctx.Attr<std::vector<int64_t>>("shape"), ctx.Attr<int32_t>("input_dim_idx"),
      ctx.Attr<int32_t>("output_dim_idx"));
  T* o = out.mutable_data<T>(dims, g.place());
  const int64_t n = DimsProduct(dims);
  Launch(g, "FillValueKernel", n, FillValueKernel<T>, o, n,
         static_cast<T>(ctx.Attr<float>("value")));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("fill_constant_batch_size_like", "gpu", FillConstantBatchSizeLike, float,
                     double, int32_t, int64_t, bool);
