// maxout_op.cu: Fluid's maxout (+grad) on the GPU, X in NCHW (axis 1) or NHWC (axis 3 / -1),
// with tide/ops/maxout.hpp's rules: one thread per output element; the grad sends each output's
// gradient to the first channel of its group holding the max (Fluid's rule, as on the CPU).
#include <tide/ops/maxout.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::MaxoutGeom;

// (image, output channel, pixel) of Out's element e.
__device__ __forceinline__ void OutCoords(const MaxoutGeom& g, int64_t e, int64_t* b, int64_t* oc,
                                          int64_t* p) {
  const int64_t ocs = g.c / g.groups;
  if (g.channels_last) {
    *oc = e % ocs;
    *p = e / ocs % g.hw;
    *b = e / ocs / g.hw;
  } else {
    *p = e % g.hw;
    *oc = e / g.hw % ocs;
    *b = e / g.hw / ocs;
  }
}

template <typename T>
__global__ void MaxoutKernel(const T* x, MaxoutGeom g, T* out, int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    int64_t b, oc, p;
    OutCoords(g, e, &b, &oc, &p);
    T m = x[g.XAt(b, oc, 0, p)];
    for (int64_t k = 1; k < g.groups; ++k) {
      const T v = x[g.XAt(b, oc, k, p)];
      m = m < v ? v : m;  // std::max's choice
    }
    out[g.OutAt(b, oc, p)] = m;
  }
}

// Each output element writes its own group's X@GRAD: no two threads share an element.
template <typename T>
__global__ void MaxoutGradKernel(const T* x, const T* out, const T* dout, MaxoutGeom g, T* dx,
                                 int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    int64_t b, oc, p;
    OutCoords(g, e, &b, &oc, &p);
    const int64_t o = g.OutAt(b, oc, p);
    bool sent = false;
    for (int64_t k = 0; k < g.groups; ++k) {
      const int64_t i = g.XAt(b, oc, k, p);
      const bool first_max = !sent && x[i] == out[o];
      dx[i] = first_max ? dout[o] : T(0);
      sent = sent || first_max;
    }
  }
}

template <typename T>
void Maxout(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMaxoutArgs<T>(ctx);
  Launch(g, "MaxoutKernel", a.out_numel, MaxoutKernel<T>, a.x, a.g, a.out, a.out_numel);
}

template <typename T>
void MaxoutGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMaxoutGradArgs<T>(ctx);
  Launch(g, "MaxoutGradKernel", a.out_numel, MaxoutGradKernel<T>, a.x, a.out, a.dout, a.g, a.dx,
         a.out_numel);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("maxout", "gpu", Maxout, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("maxout_grad", "gpu", MaxoutGrad, TIDE_CUDA_FLOAT_TYPES);
