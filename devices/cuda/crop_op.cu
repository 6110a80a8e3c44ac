// crop_op.cu: ops_nn's crop on the GPU: Out = the box of X at offsets (tide/ops/crop.hpp; an
// Offsets tensor is read back to the host), a walk over the box (box.cuh); the grad puts Out@GRAD
// back into zeros.
#include <tide/ops/crop.hpp>

#include "box.cuh"
#include "host_ints.h"

namespace tide_cuda {
namespace {

tide::ops::CropGeom CropOf(const KernelContext& ctx, const Gpu& g, const Dims& x) {
  return tide::ops::GetCropGeom(ctx, x,
                                [&](const Tensor&) { return HostIntValues(ctx, g, "Offsets"); });
}

template <typename T>
void Crop(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const tide::ops::CropGeom c = CropOf(ctx, g, x.dims());
  const BoxView v = MakeBox(g, c.shape, x.dims(), c.offsets, {});
  const int64_t n = DimsProduct(c.shape);
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(c.shape, g.place());
  Launch(g, "BoxGatherKernel", n, BoxGatherKernel<T>, xd, v, o, n);
}

template <typename T>
void CropGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const tide::ops::CropGeom c = CropOf(ctx, g, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), c.shape);
  const BoxView v = MakeBox(g, c.shape, x.dims(), c.offsets, {});
  const int64_t n = DimsProduct(c.shape);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  Launch(g, "BoxScatterKernel", n, BoxScatterKernel<T>, gd, v, dx, n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("crop", "gpu", TIDE_HOST_INPUTS("Offsets"), Crop,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("crop_grad", "gpu", TIDE_HOST_INPUTS("Offsets"), CropGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
