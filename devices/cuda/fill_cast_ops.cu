// fill_cast_ops.cu: ops_math's fill_constant, fill_zeros_like, fill_any_like, assign and cast on
// the GPU, and the data-type casts the core's data transform uses on "gpu" places (float <->
// double <-> half and bfloat16, int32/int64 <-> float).
#include <tide/ops/cast.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/ops/fill_value.hpp>
#include <tide/ops/selected_rows.hpp>
#include <tide/ops/shape_inputs.hpp>
#include <type_traits>

#include "convert.h"
#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

// ---------------------------------------------------------------------------------------------
// Conversions, through float for __half and __nv_bfloat16 (round to nearest even; bfloat16 from
// a double rounds to float first, as on the CPU); a float to an integer type saturates and maps
// NaN to 0 (tide/ops/cast.hpp); to the same type, the bits.
template <typename To, typename From>
__host__ __device__ __forceinline__ To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half>) {
    return Convert<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return Convert<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    if constexpr (std::is_same_v<From, double>)
      return __double2half(v);
    else
      return __float2half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v));
  } else if constexpr (tide::ops::NeedsSaturatingCast<From, To>::value) {
    return tide::ops::SaturatingCast<To>(v);  // the CPU's rule: saturate, NaN -> 0
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
__global__ void ConvertKernel(const From* in, To* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { out[i] = Convert<To>(in[i]); }
}

template <typename From, typename To>
void ConvertTensor(const Gpu& g, const Tensor& in, Tensor& out) {
  const From* src = static_cast<const From*>(in.raw_data());
  To* dst = static_cast<To*>(out.mutable_data(tide::DataTypeOf<To>(), g.place()));
  Launch(g, "ConvertKernel", in.numel(), ConvertKernel<From, To>, src, dst, in.numel());
}

// ---------------------------------------------------------------------------------------------
// fill_constant, fill_zeros_like
template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value) {
  TIDE_CUDA_LOOP(i, n) { out[i] = value; }
}

// Out's dims: ShapeTensor over ShapeTensorList over shape (tide/ops/shape_inputs.hpp); the value:
// ValueTensor over str_value over value, refused where T cannot hold it
// (tide/ops/fill_value.hpp); the tensors read back to the host. __half and __nv_bfloat16 take the
// float value.
template <typename T>
void FillConstant(KernelContext& ctx) {
  Gpu g(ctx);
  const Dims shape = tide::ops::ShapeFromInputs(
      ctx, [&](const char* p) { return HostIntValues(ctx, g, p); },
      [&](const char* p) { return HostIntScalars(ctx, g, p); });
  Tensor out = tide::ops::OutputValue(ctx, "Out");  // a SelectedRows' value, rows kept
  T* od = out.mutable_data<T>(shape, g.place());
  using V = std::conditional_t<kLowFloat<T>, float, T>;
  const T value = Convert<T>(
      tide::ops::FillValue<V>(ctx, [&](const char* p) { return HostNumber(ctx, g, p); }));
  Launch(g, "FillKernel", out.numel(), FillKernel<T>, od, out.numel(), value);
}

template <typename T>
void FillZerosLike(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor out = ctx.Output("Out");
  T* od = out.mutable_data<T>(ctx.Input("X").dims(), g.place());
  g.Zero(od, sizeof(T) * size_t(out.numel()));  // all-zero bits are 0 in every type here
}

// fill_any_like: X's dims, `value` where Out's type holds it (tide/ops/fill_value.hpp).
template <typename T>
void FillAnyLike(KernelContext& ctx) {
  Gpu g(ctx);
  using V = std::conditional_t<kLowFloat<T>, float, T>;
  const T value =
      Convert<T>(tide::ops::FitValue<V>(ctx.op_type(), ctx.Attr<float>("value"), "value"));
  Tensor out = ctx.Output("Out");
  T* od = out.mutable_data<T>(ctx.Input("X").dims(), g.place());
  Launch(g, "FillKernel", out.numel(), FillKernel<T>, od, out.numel(), value);
}

// ---------------------------------------------------------------------------------------------
// assign: a copy on the stream (the core's CopyTo would synchronise), with X's LoD.
template <typename T>
void Assign(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.place() == g.place(), "op 'assign': X ('", ctx.InputName("X"), "') is on ",
             x.place().ToString(), ", the kernel runs on ", g.place().ToString());
  const T* src = x.data<T>();
  T* dst = out.mutable_data<T>(x.dims(), g.place());
  g.CopyD2D(dst, src, sizeof(T) * size_t(x.numel()));
  out.set_lod(x.lod());
}

// ---------------------------------------------------------------------------------------------
// cast
template <typename From>
void CastKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  auto to = tide::ops::DataTypeAttr(ctx, "out_dtype");
  out.Resize(x.dims());
  switch (to) {
    case TIDE_FP32:
      ConvertTensor<From, float>(g, x, out);
      break;
    case TIDE_FP64:
      ConvertTensor<From, double>(g, x, out);
      break;
    case TIDE_FP16:
      ConvertTensor<From, __half>(g, x, out);
      break;
    case TIDE_BF16:
      ConvertTensor<From, __nv_bfloat16>(g, x, out);
      break;
    case TIDE_INT32:
      ConvertTensor<From, int32_t>(g, x, out);
      break;
    case TIDE_INT64:
      ConvertTensor<From, int64_t>(g, x, out);
      break;
    case TIDE_BOOL:
      ConvertTensor<From, bool>(g, x, out);
      break;
    case TIDE_UINT8:
      ConvertTensor<From, uint8_t>(g, x, out);
      break;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'cast': no GPU cast from ", tide::DataTypeName(x.dtype()),
                 " to ", tide::DataTypeName(to));
  }
}

// The core's data transform: `out` has in's dims; allocate and convert on ctx's stream.
template <typename From, typename To>
void CastTransform(const Tensor& in, Tensor& out, TideDeviceContext* ctx) {
  Gpu g(ctx, "data-type cast");
  ConvertTensor<From, To>(g, in, out);
}

template <typename A, typename B>
void RegisterCastPair(tide::Registrar& r) {
  r.DataTypeCast("gpu", tide::DataTypeOf<A>(), tide::DataTypeOf<B>(), &CastTransform<A, B>);
  r.DataTypeCast("gpu", tide::DataTypeOf<B>(), tide::DataTypeOf<A>(), &CastTransform<B, A>);
}

}  // namespace

template <typename T>
void FloatToLow(const Gpu& g, const float* in, T* out, int64_t n) {
  Launch(g, "ConvertKernel", n, ConvertKernel<float, T>, in, out, n);
}
template void FloatToLow<__half>(const Gpu&, const float*, __half*, int64_t);
template void FloatToLow<__nv_bfloat16>(const Gpu&, const float*, __nv_bfloat16*, int64_t);

}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("fill_constant", "gpu",
                                 TIDE_HOST_INPUTS("ValueTensor", "ShapeTensor", "ShapeTensorList"),
                                 FillConstant, float, double, int32_t, int64_t, bool, __half,
                                 __nv_bfloat16);
TIDE_REGISTER_KERNEL("fill_zeros_like", "gpu", FillZerosLike, float, double, int32_t, int64_t,
                     __half, __nv_bfloat16);
TIDE_REGISTER_KERNEL("fill_any_like", "gpu", FillAnyLike, float, double, int32_t, int64_t, bool,
                     __half, __nv_bfloat16);
TIDE_REGISTER_KERNEL("assign", "gpu", Assign, float, double, int32_t, int64_t, bool, uint8_t,
                     __half, __nv_bfloat16);
TIDE_REGISTER_KERNEL("cast", "gpu", CastKernel, float, double, int32_t, int64_t, bool, uint8_t,
                     __half, __nv_bfloat16);
TIDE_ON_REGISTER([](tide::Registrar& r) {
  RegisterCastPair<float, double>(r);
  RegisterCastPair<float, __half>(r);
  RegisterCastPair<double, __half>(r);
  RegisterCastPair<float, __nv_bfloat16>(r);
  RegisterCastPair<double, __nv_bfloat16>(r);
  RegisterCastPair<int32_t, float>(r);
  RegisterCastPair<int64_t, float>(r);
});
