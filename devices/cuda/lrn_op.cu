// lrn_op.cu: local response normalisation across channels (Fluid 1.x; X in NCHW or NHWC) and its
// grad on the GPU, one thread per element running tide/ops/lrn.hpp's per-element rules, so the
// window's channels are summed in the CPU kernel's order.
#include <tide/ops/lrn.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::GetLrnParams;
using tide::ops::LrnParams;

// MidOut = k + alpha * sum of X^2 over the window, Out = X * MidOut^-beta.
template <typename T>
__global__ void LrnKernel(const T* x, T* out, T* mid, int64_t total, LrnParams p) {
  TIDE_CUDA_LOOP(e, total) { tide::ops::LrnAt(p, x, e, out, mid); }
}

template <typename T>
__global__ void LrnGradKernel(const T* x, const T* out, const T* mid, const T* dout, T* dx,
                              int64_t total, LrnParams p) {
  TIDE_CUDA_LOOP(e, total) { dx[e] = tide::ops::LrnGradAt(p, x, out, mid, dout, e); }
}

template <typename T>
void Lrn(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const LrnParams p = GetLrnParams(ctx, x.dims());
  const T* xd = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), g.place());
  Tensor mid_t = ctx.OptionalOutput("MidOut");
  T* mid = mid_t ? mid_t.mutable_data<T>(x.dims(), g.place()) : g.Temp<T>(x.numel());
  Launch(g, "LrnKernel", x.numel(), LrnKernel<T>, xd, out, mid, x.numel(), p);
}

template <typename T>
void LrnGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Input("Out"), mid = ctx.Input("MidOut");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const LrnParams p = GetLrnParams(ctx, x.dims());
  tide::ops::CheckLrnGradDims(op, x.dims(), out.dims(), mid.dims(), dout.dims());
  const T* xd = x.data<T>();
  const T* od = out.data<T>();
  const T* md = mid.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  Launch(g, "LrnGradKernel", x.numel(), LrnGradKernel<T>, xd, od, md, gd, dx, x.numel(), p);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("lrn", "gpu", Lrn, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lrn_grad", "gpu", LrnGrad, TIDE_CUDA_FLOAT_TYPES);
