// tril_triu_op.cu: tril_triu (+grad) on the GPU, by tide/ops/tril_triu.hpp's rule: one thread per
// element, kept or 0.
#include <tide/ops/tril_triu.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void MaskTriangleKernel(const T* in, tide::ops::TrilTriuShape s, T* out, int64_t n) {
  TIDE_CUDA_LOOP(e, n) { out[e] = s.Keeps(e) ? in[e] : T(0); }
}

template <typename T>
void MaskTriangle(KernelContext& ctx, const char* in_param, const char* out_param) {
  Gpu g(ctx);
  Tensor in = ctx.Input(in_param);
  const auto s = tide::ops::GetTrilTriuShape(ctx, in.dims());
  T* o = ctx.Output(out_param).mutable_data<T>(in.dims(), g.place());
  Launch(g, "MaskTriangleKernel", in.numel(), MaskTriangleKernel<T>, in.data<T>(), s, o,
         in.numel());
}

template <typename T>
void TrilTriu(KernelContext& ctx) {
  MaskTriangle<T>(ctx, "X", "Out");
}

template <typename T>
void TrilTriuGrad(KernelContext& ctx) {
  MaskTriangle<T>(ctx, GradVarName("Out").c_str(), GradVarName("X").c_str());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("tril_triu", "gpu", TrilTriu, float, double, int32_t, int64_t, bool);
TIDE_REGISTER_KERNEL("tril_triu_grad", "gpu", TrilTriuGrad, TIDE_CUDA_FLOAT_TYPES);
