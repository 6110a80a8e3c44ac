// prelu_label_smooth_ops.cu: prelu (+ grad; Alpha's rule is tide/ops/prelu.hpp's, the Alpha grad
// a ReduceMid over what shares each alpha) and label_smooth (its grad is a scale op) on the GPU,
// with the CPU kernels' checks and messages.
#include <tide/ops/prelu.hpp>

#include <string>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::PreluAlphaIndex;

PreluAlphaIndex AlphaIndexOf(const KernelContext& ctx, const Dims& x, int64_t alpha_numel) {
  return tide::ops::GetPreluAlphaIndex(ctx.op_type(), ctx.Attr<std::string>("mode"), x,
                                       alpha_numel, ctx.InputName("Alpha"));
}

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
  __device__ T operator()(int64_t e, int64_t) const {
    return x[e] <= T(0) ? dout[e] * x[e] : T(0);
  }
};
template <typename T>
struct StoreSum {
  T* out;
  __device__ void operator()(int64_t j, T s) const { out[j] = s; }
};

template <typename T>
void Prelu(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  const PreluAlphaIndex ai = AlphaIndexOf(ctx, x.dims(), alpha.numel());
  const T* xd = x.data<T>();
  const T* ad = alpha.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), g.place());
  Launch(g, "PreluKernel", x.numel(), PreluKernel<T>, xd, ad, ai, o, x.numel());
}

template <typename T>
void PreluGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const PreluAlphaIndex ai = AlphaIndexOf(ctx, x.dims(), alpha.numel());
  const T* xd = x.data<T>();
  const T* ad = alpha.data<T>();
  const T* gd = dout.data<T>();
  const int64_t n = x.numel();
  if (Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str()))
    Launch(g, "PreluGradXKernel", n, PreluGradXKernel<T>, xd, ad, gd, ai,
           dx.mutable_data<T>(x.dims(), g.place()), n);
  if (Tensor da = ctx.OptionalOutput(GradVarName("Alpha").c_str())) {
    T* d = da.mutable_data<T>(alpha.dims(), g.place());
    // X as [pre, alphas, post] around the alpha index.
    const int64_t count = ai.count();
    const int64_t post = ai.mode == PreluAlphaIndex::kChannel ? ai.inner
                         : ai.mode == PreluAlphaIndex::kAll   ? n
                                                              : 1;
    const int64_t pre = count * post > 0 ? n / (count * post) : 0;
    ReduceMid<T>(g, "prelu_grad (Alpha)", pre, count, post, AlphaGradTerm<T>{xd, gd},
                 StoreSum<T>{d});
  }
}

// ---------------------------------------------------------------------------------------------
// label_smooth: Out = (1 - epsilon) X + epsilon * PriorDist (or epsilon / K, K = X's last dim).
template <typename T>
__global__ void LabelSmoothKernel(const T* x, const T* prior, T eps, int64_t k, T* out,
                                  int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    out[i] = (T(1) - eps) * x[i] + eps * (prior ? prior[i % k] : T(1) / static_cast<T>(k));
  }
}

template <typename T>
void LabelSmooth(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  TIDE_CHECK(!x.dims().empty(), "op 'label_smooth': X must have rank >= 1");
  const int64_t k = x.dims().back();
  const T* prior = nullptr;
  if (ctx.HasInput("PriorDist")) {
    Tensor p = ctx.Input("PriorDist");
    TIDE_CHECK(p.numel() == k, "op 'label_smooth': PriorDist ('", ctx.InputName("PriorDist"),
               "') has ", p.numel(), " elements, X's last dim is ", k);
    prior = p.data<T>();
  }
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), g.place());
  Launch(g, "LabelSmoothKernel", x.numel(), LabelSmoothKernel<T>, xd, prior, eps, k, o,
         x.numel());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("prelu", "gpu", Prelu, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("prelu_grad", "gpu", PreluGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("label_smooth", "gpu", LabelSmooth, TIDE_CUDA_FLOAT_TYPES);
