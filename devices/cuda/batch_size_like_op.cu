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
  const auto a = tide::ops::GetBatchSizeLikeArgs<T>(ctx);
  Launch(g, "FillValueKernel", a.n, FillValueKernel<T>, a.out, a.n,
         static_cast<T>(ctx.Attr<float>("value")));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("fill_constant_batch_size_like", "gpu", FillConstantBatchSizeLike, float,
                     double, int32_t, int64_t, bool);
