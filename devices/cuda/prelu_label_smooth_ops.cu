// prelu_label_smooth_ops.cu: prelu (+ grad; Alpha's rule is tide/ops/prelu.hpp's, the Alpha grad
// a ReduceMid over what shares each alpha) and label_smooth (its grad is a scale op) on the GPU,
// with the CPU kernels' checks and messages.
#include <string>
#include <tide/ops/label_smooth.hpp>
#include <tide/ops/prelu.hpp>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::PreluAlphaIndex;

template <typename T>
__global__ void PreluKernel(const T* x, const T* alpha, PreluAlphaIndex ai, T* out, int64_t n) {
  TIDE_CUDA_LOOP(e, n) { out[e] = x[e] > T(0) ? x[e] : alpha[ai(e)] * x[e]; }
}

template <typename T>
__global__ void PreluGradXKernel(const T* x, const T* alpha, const T* dout, PreluAlphaIndex ai,
                                 T* dx, int64_t n) {
  TIDE_CUDA_LOOP(e, n) { dx[e] = x[e] > T(0) ? dout[e] : alpha[ai(e)] * dout[e]; }
}

// dAlpha[j] = sum of dOut * X over the elements of alpha j where X <= 0.
template <typename T>
struct AlphaGradTerm {
  const T *x, *dout;
  __device__ T operator()(int64_t e, int64_t) const { return x[e] <= T(0) ? dout[e] * x[e] : T(0); }
};
template <typename T>
struct StoreSum {
  T* out;
  __device__ void operator()(int64_t j, T s) const { out[j] = s; }
};

template <typename T>
void Prelu(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetPreluArgs<T>(ctx);
  Launch(g, "PreluKernel", a.n, PreluKernel<T>, a.x, a.alpha, a.ai, a.out, a.n);
}

template <typename T>
void PreluGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetPreluGradArgs<T>(ctx);
  const int64_t n = a.n;
  if (a.dx)
    Launch(g, "PreluGradXKernel", n, PreluGradXKernel<T>, a.x, a.alpha, a.dout, a.ai, a.dx, n);
  if (a.dalpha) {
    // X as [pre, alphas, post] around the alpha index.
    const PreluAlphaIndex& ai = a.ai;
    const int64_t count = ai.count();
    const int64_t post = ai.mode == PreluAlphaIndex::kChannel ? ai.inner
                         : ai.mode == PreluAlphaIndex::kAll   ? n
                                                              : 1;
    const int64_t pre = count * post > 0 ? n / (count * post) : 0;
    ReduceMid<T>(g, "prelu_grad (Alpha)", pre, count, post, AlphaGradTerm<T>{a.x, a.dout},
                 StoreSum<T>{a.dalpha});
  }
}

// ---------------------------------------------------------------------------------------------
// label_smooth: Out = (1 - epsilon) X + epsilon * PriorDist (or epsilon / K, K = X's last dim).
template <typename T>
__global__ void LabelSmoothKernel(const T* x, const T* prior, T eps, int64_t k, T* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    out[i] = (T(1) - eps) * x[i] + eps * (prior ? prior[i % k] : T(1) / static_cast<T>(k));
  }
}

template <typename T>
void LabelSmooth(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetLabelSmoothArgs<T>(ctx);
  Launch(g, "LabelSmoothKernel", a.n, LabelSmoothKernel<T>, a.x, a.prior, a.eps, a.k, a.out, a.n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("prelu", "gpu", Prelu, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("prelu_grad", "gpu", PreluGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("label_smooth", "gpu", LabelSmooth, TIDE_CUDA_FLOAT_TYPES);
