// sim_bf16_kernels.cc: the sim device's float32 <-> bfloat16 casts (the cast op and the data
// transform's casts). With its one bfloat16 op, mul (and mul_grad, in sim_mlp_kernels.cc), tests
// show that mixed precision asks the run's place and puts only what the place computes in
// bfloat16 there (tests/python/test_amp_bf16.py).
#include <tide/low_precision.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

#include "sim_kernels.h"

namespace {

using tide::bfloat16;
using tide::KernelContext;
using tide::Tensor;

template <typename From, typename To>
void CastOn(const Tensor& in, Tensor& out, TideDeviceContext* dc) {
  const From* a = in.data<From>();
  To* o = out.mutable_data<To>(in.place());
  const int64_t n = in.numel();
  const void* s = tide::Host().DeviceContext_Extension(dc, "tide.sim.stream");
  TIDE_CHECK(s != nullptr, "sim cast: no sim context");
  const_cast<SimStream*>(static_cast<const SimStream*>(s))->Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<To>(static_cast<float>(a[i]));
  });
}

// The cast op between float32 and bfloat16 (T: X's type); other pairs are the CPU's.
template <typename T>
void CastOp(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  const auto to = static_cast<TideDataType>(ctx.Attr<int32_t>("out_dtype"));
  const bool up = std::is_same<T, bfloat16>::value && to == TIDE_FP32;
  if (!up && !(std::is_same<T, float>::value && to == TIDE_BF16))  // declined: the CPU's runs it
    TIDE_THROW(TIDE_UNIMPLEMENTED, "sim cast: only float32 <-> bfloat16, not ",
               tide::DataTypeName(x.dtype()), " -> ", tide::DataTypeName(to));
  out.Resize(x.dims());
  if (up)
    CastOn<bfloat16, float>(x, out, ctx.device_context());
  else
    CastOn<float, bfloat16>(x, out, ctx.device_context());
}

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.DataTypeCast("sim", TIDE_FP32, TIDE_BF16, &CastOn<float, bfloat16>);
  r.DataTypeCast("sim", TIDE_BF16, TIDE_FP32, &CastOn<bfloat16, float>);
});
TIDE_REGISTER_KERNEL("cast", "sim", CastOp, float, bfloat16);
