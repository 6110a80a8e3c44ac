// cast_op.cc: cast (Out = X converted to out_dtype); its grad casts back. A float cast to an
// integer type is defined for every value (C++ leaves NaN and out-of-range values undefined):
// it truncates toward zero, saturates at the type's limits (+-inf included), and NaN becomes 0.
// float16 and bfloat16 (tide/low_precision.hpp) convert through float: to them rounding to
// nearest even (float64 rounds to float first), from them exactly; one of them to an integer
// follows the float rule. A cast to the type X already has copies the bits. A real X to complex64 /
// complex128 gives imaginary parts 0; a complex X to a real type keeps the real part (then the
// rules above), to bool whether the number is not 0, as Paddle's.
#include <complex>
#include <cstring>
#include <tide/low_precision.hpp>
#include <tide/ops/cast.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <type_traits>

#include "bf16_convert.h"
#include "common.h"

namespace ops_math {
namespace {

template <typename T>
constexpr bool kLowPrecision =
    std::is_same_v<T, tide::float16> || std::is_same_v<T, tide::bfloat16>;

// A float to an integer type: tide/ops/cast.hpp's rule, as on every device; a float16 or
// bfloat16 is widened to float first.
template <typename From, typename To>
struct Saturating {
  To operator()(From v) const {
    if constexpr (kLowPrecision<From>)
      return tide::ops::SaturatingCast<To>(static_cast<float>(v));
    else
      return tide::ops::SaturatingCast<To>(v);
  }
};

template <typename From, typename To>
constexpr bool kSaturates = tide::ops::NeedsSaturatingCast<From, To>::value ||
                            (kLowPrecision<From> && std::is_integral_v<To> &&
                             !std::is_same_v<To, bool>);

// One 2-byte float to the other, or a 2-byte float to/from bool or an integer, goes through
// float: Eigen converts between them only that way.
template <typename From, typename To>
struct ThroughFloat {
  To operator()(From v) const {
    if constexpr (std::is_same_v<To, bool>)
      return static_cast<float>(v) != 0.0f;
    else
      return To(static_cast<float>(v));
  }
};

// float <-> bfloat16 (AMP's casts) over the CPU pool, in vectorized chunks (bf16_convert.h).
// tide::bfloat16 is Eigen's: one uint16_t of bits.
template <typename From, typename To, typename Convert>
void ConvertChunks(const KernelContext& ctx, const From* x, To* y, int64_t n, Convert convert) {
  ParallelFor(ctx, n, 1, [&](int64_t b, int64_t e) { convert(x + b, y + b, e - b); });
}

// A real value by the rules above.
template <typename From, typename To>
struct RealConvert {
  To operator()(From v) const {
    if constexpr (kSaturates<From, To>)
      return Saturating<From, To>()(v);
    else if constexpr (kLowPrecision<From> || kLowPrecision<To>)
      return ThroughFloat<From, To>()(v);
    else
      return static_cast<To>(v);
  }
};

// From or To complex: a real value as the complex number (v, 0), through float for the 2-byte
// floats; a complex one's real part by RealConvert, or to bool whether the number is not 0.
template <typename From, typename To>
struct ComplexCast {
  To operator()(From v) const {
    if constexpr (kIsComplex<From> && kIsComplex<To>) {
      return To(v);
    } else if constexpr (kIsComplex<To>) {
      using R = RealType<To>;
      if constexpr (kLowPrecision<From>)
        return To(static_cast<R>(static_cast<float>(v)), R(0));
      else
        return To(static_cast<R>(v), R(0));
    } else if constexpr (std::is_same_v<To, bool>) {
      return v != From(0);
    } else {
      return RealConvert<RealType<From>, To>()(v.real());
    }
  }
};

template <typename From, typename To>
void CastTo(const KernelContext& ctx, const Tensor& x, Tensor& out) {
  out.Resize(x.dims());
  static_assert(sizeof(tide::bfloat16) == sizeof(uint16_t));
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, tide::bfloat16>) {
    ConvertChunks(ctx, x.data<float>(), reinterpret_cast<uint16_t*>(Out<To>(out, ctx).data()),
                  x.numel(), FloatToBfloat16);
  } else if constexpr (std::is_same_v<From, tide::bfloat16> && std::is_same_v<To, float>) {
    ConvertChunks(ctx, reinterpret_cast<const uint16_t*>(x.data<From>()), Out<To>(out, ctx).data(),
                  x.numel(), Bfloat16ToFloat);
  } else if constexpr (std::is_same_v<From, To>) {  // bits, not values: a NaN's payload stays
    std::memcpy(Out<To>(out, ctx).data(), x.data<From>(), sizeof(To) * x.numel());
  } else if constexpr (kIsComplex<From> || kIsComplex<To>) {
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).unaryExpr(ComplexCast<From, To>()));
  } else if constexpr (kSaturates<From, To>) {
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).unaryExpr(Saturating<From, To>()));
  } else if constexpr (kLowPrecision<From> || kLowPrecision<To>) {
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).unaryExpr(ThroughFloat<From, To>()));
  } else {
    EigenEval(ctx, Out<To>(out, ctx), In<From>(x).template cast<To>());
  }
}

template <typename T>
void CastKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  auto to = tide::ops::DataTypeAttr(ctx, "out_dtype");
  switch (to) {
    case TIDE_FP32:
      CastTo<T, float>(ctx, x, out);
      break;
    case TIDE_FP64:
      CastTo<T, double>(ctx, x, out);
      break;
    case TIDE_FP16:
      CastTo<T, tide::float16>(ctx, x, out);
      break;
    case TIDE_BF16:
      CastTo<T, tide::bfloat16>(ctx, x, out);
      break;
    case TIDE_INT8:
      CastTo<T, int8_t>(ctx, x, out);
      break;
    case TIDE_INT16:
      CastTo<T, int16_t>(ctx, x, out);
      break;
    case TIDE_INT32:
      CastTo<T, int32_t>(ctx, x, out);
      break;
    case TIDE_INT64:
      CastTo<T, int64_t>(ctx, x, out);
      break;
    case TIDE_BOOL:
      CastTo<T, bool>(ctx, x, out);
      break;
    case TIDE_UINT8:
      CastTo<T, uint8_t>(ctx, x, out);
      break;
    case TIDE_COMPLEX64:
      CastTo<T, std::complex<float>>(ctx, x, out);
      break;
    case TIDE_COMPLEX128:
      CastTo<T, std::complex<double>>(ctx, x, out);
      break;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'cast': no CPU cast from ", tide::DataTypeName(x.dtype()),
                 " to ", tide::DataTypeName(to));
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("cast")
        .Comment("Out = X converted to out_dtype; float to integer truncates, saturates at the "
                 "limits and maps NaN to 0.")
        .Input("X", "input")
        .Output("Out", "X's values as out_dtype")
        .Attr("in_dtype", int32_t(TIDE_FP32), "X's element type (TideDataType)")
        .Attr("out_dtype", int32_t(TIDE_FP32), "Out's element type (TideDataType)")
        .InferShape([](tide::InferShapeContext& c) {
          c.SetOutputDims("Out", c.InputDims("X"));
          c.SetOutputDataType("Out", tide::ops::DataTypeAttr(c, "out_dtype"));
          c.ShareLoD("X", "Out");
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("cast")
              .Input("X", g.OutputGrad("Out"))
              .Output("Out", g.InputGrad("X"))
              .Attr("in_dtype", g.Attr<int32_t>("out_dtype"))
              .Attr("out_dtype", g.Attr<int32_t>("in_dtype"));
        }));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("cast", "cpu", CastKernel, float, double, int32_t, int64_t, bool, uint8_t,
                     int8_t, int16_t, tide::float16, tide::bfloat16, OPS_MATH_COMPLEX_TYPES);
