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
  const auto a = tide::ops::GetLrnArgs<T>(ctx);
  Launch(g, "LrnKernel", a.n, LrnKernel<T>, a.x, a.out, a.mid, a.n, a.p);
}

template <typename T>
void LrnGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetLrnGradArgs<T>(ctx);
  Launch(g, "LrnGradKernel", a.n, LrnGradKernel<T>, a.x, a.out, a.mid, a.dout, a.dx, a.n, a.p);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("lrn", "gpu", Lrn, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lrn_grad", "gpu", LrnGrad, TIDE_CUDA_FLOAT_TYPES);
