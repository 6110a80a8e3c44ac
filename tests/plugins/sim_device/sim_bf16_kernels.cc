// sim_bf16_kernels.cc: the sim device's bfloat16: a kernel for ONE op, mul (and mul_grad), and
// the float32 <-> bfloat16 casts (the cast op and the data transform's casts), so tests can show
// that mixed precision asks the run's place and puts only what the place computes in bfloat16
// there (tests/python/test_amp_bf16.py). Products accumulate in float32, one rounding per output.
#include <tide/low_precision.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

#include "sim_kernels.h"

namespace {

using tide::bfloat16;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;

// c[i, j] = sum_p a(i, p) b(p, j), a and b read through strides (a transposed operand is the
// same bytes with swapped strides).
struct Strided {
  const bfloat16* d;
  int64_t row, col;
  float at(int64_t i, int64_t j) const { return static_cast<float>(d[i * row + j * col]); }
};
void Product(Strided a, Strided b, int64_t m, int64_t k, int64_t n, bfloat16* c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a.at(i, p) * b.at(p, j);
      c[i * n + j] = static_cast<bfloat16>(acc);
    }
}

template <typename T>
void MulBf16(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  CheckOnSim(ctx, y, "Y");
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const auto [k2, n] = tide::ops::Flatten2D(y.dims(), yc);
  TIDE_CHECK(k == k2, "sim mul (bfloat16): X's ", k, " columns do not match Y's ", k2, " rows");
  const tide::Dims xd = x.dims(), yd = y.dims();
  tide::Dims od(xd.begin(), xd.begin() + xc);
  od.insert(od.end(), yd.begin() + yc, yd.end());
  const bfloat16* a = x.data<bfloat16>();
  const bfloat16* b = y.data<bfloat16>();
  bfloat16* o = out.mutable_data<bfloat16>(od, ctx.place());
  StreamOf(ctx).Enqueue([=] { Product({a, k, 1}, {b, n, 1}, m, k, n, o); });
}

// dX = dOut Y^T, dY = X^T dOut.
template <typename T>
void MulGradBf16(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  CheckOnSim(ctx, dout, "Out@GRAD");
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const int64_t n = tide::ops::Flatten2D(y.dims(), yc).second;
  const bfloat16* a = x.data<bfloat16>();
  const bfloat16* b = y.data<bfloat16>();
  const bfloat16* g = dout.data<bfloat16>();
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str());
  bfloat16* dxd = dx ? dx.mutable_data<bfloat16>(x.dims(), ctx.place()) : nullptr;
  bfloat16* dyd = dy ? dy.mutable_data<bfloat16>(y.dims(), ctx.place()) : nullptr;
  StreamOf(ctx).Enqueue([=] {
    if (dxd) Product({g, n, 1}, {b, 1, n}, m, n, k, dxd);
    if (dyd) Product({a, 1, k}, {g, n, 1}, k, m, n, dyd);
  });
}

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
TIDE_REGISTER_KERNEL("mul", "sim", MulBf16, bfloat16);
TIDE_REGISTER_KERNEL("mul_grad", "sim", MulGradBf16, bfloat16);
TIDE_REGISTER_KERNEL("cast", "sim", CastOp, float, bfloat16);
