// activation_ops.cu: every activation of ops_math's table (tide/ops/activation.hpp: relu,
// sigmoid, tanh, gelu, elu, swish, ...) and its grad on the GPU: one forward and one grad kernel
// over the shared functor, so the formulas are the CPU's own. float and double, and __half and
// __nv_bfloat16 computed in float.
#include <string>
#include <tide/ops/activation.hpp>
#include <type_traits>

#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

using tide::ops::ActGradFrom;
using tide::ops::MakeActivation;

template <typename T, typename F>
__global__ void ActForwardKernel(const T* x, T* out, int64_t n, F f) {
  TIDE_CUDA_LOOP(i, n) { out[i] = static_cast<T>(f.template Fwd<Acc<T>>(Load(x, i))); }
}

// dX = f.Bwd(from, dOut), `from` being X or Out as the functor's kDep says.
template <typename T, typename F>
__global__ void ActGradKernel(const T* from, const T* dout, T* dx, int64_t n, F f) {
  TIDE_CUDA_LOOP(i, n) {
    dx[i] = static_cast<T>(f.template Bwd<Acc<T>>(Load(from, i), Load(dout, i)));
  }
}

template <typename T, typename F>
void ActForward(KernelContext& ctx) {
  Gpu g(ctx);
  const F f = MakeActivation<F>(ctx, ReadBack{g});  // pow's FactorTensor, a host input
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>(x.dims(), g.place());
  Launch(g, "ActForwardKernel", x.numel(), ActForwardKernel<T, F>, xd, od, x.numel(), f);
}

template <typename T, typename F>
void ActGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const F f = MakeActivation<F>(ctx, ReadBack{g});  // pow's FactorTensor, a host input
  Tensor from = ctx.Input(ActGradFrom<F>()), dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), from.dims());
  const T* fd = from.data<T>();
  const T* gd = dout.data<T>();
  T* dd = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(from.dims(), g.place());
  Launch(g, "ActGradKernel", from.numel(), ActGradKernel<T, F>, fd, gd, dd, from.numel(), f);
}

template <typename F, typename T>
void RegisterFor(tide::Registrar& r, TideDataType dtype) {
  const std::string type = F::kName;
  const tide::HostInputs host =  // pow's FactorTensor, read by MakeActivation
      std::is_same_v<F, tide::ops::PowAct> ? tide::HostInputs{"FactorTensor"} : tide::HostInputs{};
  r.Kernel(type, "gpu", dtype, &ActForward<T, F>, TIDE_LAYOUT_ANY, "plain", 0, host);
  r.Kernel(type + "_grad", "gpu", dtype, &ActGrad<T, F>, TIDE_LAYOUT_ANY, "plain", 0, host);
}

}  // namespace
}  // namespace tide_cuda

TIDE_ON_REGISTER([](tide::Registrar& r) {
  using namespace tide_cuda;  // NOLINT
  tide::ops::ForEachActivation([&](auto tag) {
    using F = typename decltype(tag)::type;
    RegisterFor<F, float>(r, TIDE_FP32);
    RegisterFor<F, double>(r, TIDE_FP64);
    RegisterFor<F, __half>(r, TIDE_FP16);
    RegisterFor<F, __nv_bfloat16>(r, TIDE_BF16);
  });
});
