// slice_ops.cu: ops_nn's box-moving ops on the GPU: slice and strided_slice (bounds from tensors
// too; the grad scatters back into zeros), pad (constant pad_value; the grad slices), expand /
// expand_as / expand_v2 (repeats; the grad sums them in the CPU kernel's order), with ops_nn's
// shape rules (tide/ops/tensor_shape.hpp, slice_inputs.hpp, expand.hpp).
// Every one is a walk over a box of a larger tensor (box.cuh).
#include <tide/ops/expand.hpp>
#include <tide/ops/slice_inputs.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <vector>

#include "box.cuh"
#include "host_ints.h"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value) {
  TIDE_CUDA_LOOP(i, n) { out[i] = value; }
}

// ---------------------------------------------------------------------------------------------
// slice / strided_slice: the bounds' tensors (tide/ops/slice_inputs.hpp) read back to the host.
tide::ops::SliceGeom SliceOf(const KernelContext& ctx, const Gpu& g, const Dims& x) {
  return tide::ops::SliceGeomFromInputs(
      ctx, x, [&](const char* p) { return HostIntValues(ctx, g, p); },
      [&](const char* p) { return HostIntScalars(ctx, g, p); });
}

template <typename T>
void Slice(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("Input");
  const auto geom = SliceOf(ctx, g, x.dims());
  const BoxView v = MakeBox(g, geom.count, x.dims(), geom.start, geom.step);
  const int64_t n = DimsProduct(geom.count);
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(geom.out, g.place());
  Launch(g, "BoxGatherKernel", n, BoxGatherKernel<T>, xd, v, o, n);
}

template <typename T>
void SliceGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("Input"), dout = ctx.Input(GradVarName("Out").c_str());
  const auto geom = SliceOf(ctx, g, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), geom.out);
  const BoxView v = MakeBox(g, geom.count, x.dims(), geom.start, geom.step);
  const int64_t n = DimsProduct(geom.count);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(x.dims(), g.place());
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  Launch(g, "BoxScatterKernel", n, BoxScatterKernel<T>, gd, v, dx, n);
}

// ---------------------------------------------------------------------------------------------
// pad: X is the box of Out at paddings[2i] (the before-values).
Dims PadsBefore(const std::vector<int32_t>& pads, size_t rank) {
  Dims before(rank);
  for (size_t d = 0; d < rank; ++d) before[d] = pads[2 * d];
  return before;
}

template <typename T>
void Pad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  const Dims od = tide::ops::PadDims(ctx.op_type(), x.dims(), pads);
  const BoxView v = MakeBox(g, x.dims(), od, PadsBefore(pads, x.dims().size()), {});
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, g.place());
  const int64_t on = DimsProduct(od);
  Launch(g, "FillKernel", on, FillKernel<T>, o, on, static_cast<T>(ctx.Attr<float>("pad_value")));
  Launch(g, "BoxScatterKernel", x.numel(), BoxScatterKernel<T>, xd, v, o, x.numel());
}

template <typename T>
void PadGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  const Dims od = tide::ops::PadDims(ctx.op_type(), x.dims(), pads);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const BoxView v = MakeBox(g, x.dims(), od, PadsBefore(pads, x.dims().size()), {});
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  Launch(g, "BoxGatherKernel", x.numel(), BoxGatherKernel<T>, gd, v, dx, x.numel());
}

// ---------------------------------------------------------------------------------------------
// expand / expand_as / expand_v2: Out[i] = X[i mod X's dims]; X@GRAD[j] = the sum of Out@GRAD over
// j's repeats, in row-major order of the repeat (the CPU kernel's order).
template <typename T>
__global__ void ExpandGradKernel(const T* dout, BoxView x, BoxView reps, int64_t nreps, T* dx,
                                 int64_t n) {
  TIDE_CUDA_LOOP(j, n) {
    const int64_t base = BoxOffset(x, j);  // j's element in Out's first repeat
    T acc = T(0);
    for (int64_t r = 0; r < nreps; ++r) acc += dout[base + BoxOffset(reps, r)];
    dx[j] = acc;
  }
}

// The repeats: expand_as's from target_tensor; expand's from ExpandTimes / expand_times_tensor
// (read back to the host) or the attribute (tide/ops/expand.hpp).
std::vector<int32_t> ExpandTimes(const KernelContext& ctx, const Gpu& g, const Dims& x) {
  if (ctx.HasInput("target_tensor"))
    return tide::ops::ExpandAsTimes(ctx.op_type(), x, ctx.Input("target_tensor").dims());
  return tide::ops::ExpandTimesFromInputs(
      ctx, [&](const char* p) { return HostIntValues(ctx, g, p); },
      [&](const char* p) { return HostIntScalars(ctx, g, p); });
}

// Out (od) = X, seen with dims xd (X's, or with 1s in front), repeated.
template <typename T>
void ExpandTo(KernelContext& ctx, const Gpu& g, const Tensor& x, const Dims& xd, const Dims& od) {
  BoxView v = MakeBox(g, od, xd, {}, {});
  for (int d = 0; d < v.rank; ++d) v.wrap[d] = xd[d];
  const int64_t n = DimsProduct(od);
  const T* xp = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, g.place());
  if (x.numel() > 0) Launch(g, "BoxGatherKernel", n, BoxGatherKernel<T>, xp, v, o, n);
}

// X@GRAD: Out@GRAD summed over the repeats of X (seen with dims xd) in Out (od).
template <typename T>
void ExpandGradTo(KernelContext& ctx, const Gpu& g, const Tensor& x, const Dims& xd,
                  const Dims& od) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  Dims rd(od.size());
  for (size_t d = 0; d < od.size(); ++d) rd[d] = xd[d] ? od[d] / xd[d] : 0;
  const BoxView xv = MakeBox(g, xd, od, {}, {});  // X's element in Out's first repeat
  const BoxView rv = MakeBox(g, rd, od, {}, xd);  // repeat r starts at r * X's dims
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  Launch(g, "ExpandGradKernel", x.numel(), ExpandGradKernel<T>, gd, xv, rv, DimsProduct(rd), dx,
         x.numel());
}

template <typename T>
void Expand(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const Dims od = tide::ops::ExpandDims(ctx.op_type(), x.dims(), ExpandTimes(ctx, g, x.dims()));
  ExpandTo<T>(ctx, g, x, x.dims(), od);
}

template <typename T>
void ExpandGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const Dims od = tide::ops::ExpandDims(ctx.op_type(), x.dims(), ExpandTimes(ctx, g, x.dims()));
  ExpandGradTo<T>(ctx, g, x, x.dims(), od);
}

// expand_v2: the target shape from Shape / expand_shapes_tensor (read back to the host) or the
// attribute; X with 1s in front repeats as expand's (tide/ops/expand.hpp).
Dims ExpandV2Out(const KernelContext& ctx, const Gpu& g, const Dims& x) {
  return tide::ops::ExpandV2Dims(ctx.op_type(), x,
                                 tide::ops::ExpandV2ShapeFromInputs(
                                     ctx, [&](const char* p) { return HostIntValues(ctx, g, p); },
                                     [&](const char* p) { return HostIntScalars(ctx, g, p); }));
}

template <typename T>
void ExpandV2(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const Dims od = ExpandV2Out(ctx, g, x.dims());
  ExpandTo<T>(ctx, g, x, tide::ops::ExpandV2XDims(x.dims(), od.size()), od);
}

template <typename T>
void ExpandV2Grad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const Dims od = ExpandV2Out(ctx, g, x.dims());
  ExpandGradTo<T>(ctx, g, x, tide::ops::ExpandV2XDims(x.dims(), od.size()), od);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

// The inputs the kernels read on the host (tide/ops/slice_inputs.hpp, tide/ops/expand.hpp).
const tide::HostInputs kSliceBounds{"StartsTensor", "EndsTensor", "StartsTensorList",
                                    "EndsTensorList"};
const tide::HostInputs kStridedSliceBounds{"StartsTensor",   "EndsTensor",    "StartsTensorList",
                                           "EndsTensorList", "StridesTensor", "StridesTensorList"};
const tide::HostInputs kExpandTimes{"ExpandTimes", "expand_times_tensor"};
const tide::HostInputs kExpandV2Shape{"Shape", "expand_shapes_tensor"};

#define TIDE_CUDA_MOVE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL_HOST_INPUTS("slice", "gpu", kSliceBounds, Slice, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("slice_grad", "gpu", kSliceBounds, SliceGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("strided_slice", "gpu", kStridedSliceBounds, Slice,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("strided_slice_grad", "gpu", kStridedSliceBounds, SliceGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pad", "gpu", Pad, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("pad_grad", "gpu", PadGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("expand", "gpu", kExpandTimes, Expand, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("expand_grad", "gpu", kExpandTimes, ExpandGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("expand_as", "gpu", Expand, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("expand_as_grad", "gpu", ExpandGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("expand_v2", "gpu", kExpandV2Shape, ExpandV2,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("expand_v2_grad", "gpu", kExpandV2Shape, ExpandV2Grad,
                                 TIDE_CUDA_FLOAT_TYPES);
