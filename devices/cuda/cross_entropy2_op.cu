// cross_entropy2_op.cu: ops_nn's cross_entropy2 on the GPU: Y = -log(X[Label]) per row with
// Fluid's log(0) guard, MatchX = X[Label] (1 for ignore_index) for the grad, which reads MatchX and
// XShape instead of X (tide/ops/cross_entropy.hpp). A label out of range is a device error naming
// the op; its row's Y and MatchX are NaN, its X@GRAD row 0.
#include <tide/ops/cross_entropy.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void Xe2Kernel(const T* x, const int64_t* label, int64_t ignore, T* y, T* match,
                          int64_t n, int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = label[i];
    if (cls == ignore) {
      match[i] = T(1);
      y[i] = T(0);
    } else if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kCrossEntropy2LabelOutOfRange);
      match[i] = y[i] = T(NAN);
    } else {
      match[i] = x[i * d + cls];
      y[i] = -tide::ops::TolerableLog(match[i]);
    }
  }
}

template <typename T>
void Xe2(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetXe2Args<T>(ctx);
  Launch(g, "Xe2Kernel", a.n, Xe2Kernel<T>, a.x, a.label, a.ignore, a.y, a.match, a.n, a.d,
         g.error_word());
}

// X@GRAD[i, Label[i]] = -Y@GRAD[i] / max(MatchX[i], 1e-20), 0 elsewhere and for ignore_index.
template <typename T>
__global__ void Xe2GradKernel(const int64_t* label, int64_t ignore, const T* match, const T* dy,
                              T* dx, int64_t n, int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = label[i];
    if (cls == ignore) continue;
    if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kCrossEntropy2LabelOutOfRange);
      continue;
    }
    dx[i * d + cls] = -dy[i] / tide::ops::SafeDenominator(match[i]);
  }
}

template <typename T>
void Xe2Grad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetXe2GradArgs<T>(ctx);
  g.Zero(a.dx, sizeof(T) * size_t(a.n * a.d));
  Launch(g, "Xe2GradKernel", a.n, Xe2GradKernel<T>, a.label, a.ignore, a.match, a.dy, a.dx, a.n,
         a.d, g.error_word());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("cross_entropy2", "gpu", Xe2, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy2_grad", "gpu", Xe2Grad, TIDE_CUDA_FLOAT_TYPES);
