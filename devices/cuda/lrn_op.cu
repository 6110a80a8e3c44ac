// lrn_op.cu: local response normalisation across channels (Fluid 1.x) and its grad on the GPU,
// one thread per element, summing the window's channels in the CPU kernel's order.
#include <tide/ops/lrn.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::GetLrnParams;
using tide::ops::LrnParams;

__device__ __forceinline__ float Pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double Pow(double a, double b) { return pow(a, b); }

// MidOut = k + alpha * sum of X^2 over the window, Out = X * MidOut^-beta.
template <typename T>
__global__ void LrnKernel(const T* x, T* out, T* mid, int64_t total, int64_t c, int64_t hw,
                          int start, int size, T k, T alpha, T beta) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e % hw, nc = e / hw, ch = nc % c, img = nc / c;
    T m = k;
    const int64_t lo = max(ch + start, int64_t(0)), hi = min(ch + start + size, c);
    for (int64_t cc = lo; cc < hi; ++cc) {
      const T v = x[(img * c + cc) * hw + i];
      m += alpha * v * v;
    }
    mid[e] = m;
    out[e] = x[e] * Pow(m, -beta);
  }
}

// dX[c] = dOut[c] * Mid[c]^-beta - 2 alpha beta X[c] * sum over the channels c' whose window
// holds c of dOut[c'] * Out[c'] / Mid[c'].
template <typename T>
__global__ void LrnGradKernel(const T* x, const T* out, const T* mid, const T* dout, T* dx,
                              int64_t total, int64_t c, int64_t hw, int64_t lo, int64_t hi, T beta,
                              T ratio) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e % hw, nc = e / hw, ch = nc % c, img = nc / c;
    T d = dout[e] * Pow(mid[e], -beta);
    for (int64_t cc = max(ch + lo, int64_t(0)); cc <= min(ch + hi, c - 1); ++cc) {
      const int64_t cb = (img * c + cc) * hw + i;
      d -= ratio * x[e] * dout[cb] * out[cb] / mid[cb];
    }
    dx[e] = d;
  }
}

template <typename T>
void Lrn(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  LrnParams p = GetLrnParams(ctx, x.dims());
  const T* xd = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), g.place());
  Tensor mid_t = ctx.OptionalOutput("MidOut");
  T* mid = mid_t ? mid_t.mutable_data<T>(x.dims(), g.place()) : g.Temp<T>(x.numel());
  Launch(g, "LrnKernel", x.numel(), LrnKernel<T>, xd, out, mid, x.numel(), p.c, p.hw, p.start,
         p.size, static_cast<T>(p.k), static_cast<T>(p.alpha), static_cast<T>(p.beta));
}

template <typename T>
void LrnGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Input("Out"), mid = ctx.Input("MidOut");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  LrnParams p = GetLrnParams(ctx, x.dims());
  tide::ops::CheckLrnGradDims(op, x.dims(), out.dims(), mid.dims(), dout.dims());
  const T* xd = x.data<T>();
  const T* od = out.data<T>();
  const T* md = mid.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  // c is in the window of c' when c' + start <= c < c' + start + size: c' - c in [lo, hi].
  const int64_t lo = -(p.start + p.size - 1), hi = -p.start;
  Launch(g, "LrnGradKernel", x.numel(), LrnGradKernel<T>, xd, od, md, gd, dx, x.numel(), p.c,
         p.hw, lo, hi, static_cast<T>(p.beta), static_cast<T>(2 * p.alpha * p.beta));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("lrn", "gpu", Lrn, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lrn_grad", "gpu", LrnGrad, TIDE_CUDA_FLOAT_TYPES);
