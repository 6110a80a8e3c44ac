// elementwise_extra_ops.cc: Paddle's element-wise copysign (paddle.copysign: |x| with y's sign;
// grad dx = dout * copysign(x, y) / x, 0 where x is 0, and no gradient to y, as Paddle),
// nextafter (paddle.nextafter: the next representable value after x towards y),
// bitwise_left_shift / bitwise_right_shift (paddle.bitwise_*_shift: is_arithmetic; a shift
// count below 0 or of at least the type's bits gives 0, or, shifting right arithmetically a
// negative x, -1, as Paddle's kernels) and angle (paddle.angle: of a real X pi where X < 0, else
// 0, NaN kept, grad 0; of a complex X atan2(imag, real), real, with grad i / conj(X), 0 at 0).
// x and y broadcast numpy-style.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tide/ops/elementwise.hpp>
#include <type_traits>

#include "common.h"
#include "element_map.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

// x and y: one dtype, out their numpy broadcast.
void BroadcastShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(ctx.InputDataType("x") == ctx.InputDataType("y"), "op '", ctx.op_type(), "': x ('",
             ctx.InputName("x"), "') is ", tide::DataTypeName(ctx.InputDataType("x")), " but y ('",
             ctx.InputName("y"), "') is ", tide::DataTypeName(ctx.InputDataType("y")));
  ctx.SetOutputDims("out", NumpyOutDims(ctx.op_type(), ctx.InputDims("x"), ctx.InputDims("y")));
  ctx.SetOutputDataType("out", ctx.InputDataType("x"));
}

// out[e] = fn(x[i], y[j]) over the broadcast.
template <typename T, typename Fn>
void BroadcastKernel(KernelContext& ctx, Fn fn) {
  Tensor x = ctx.Input("x"), y = ctx.Input("y");
  const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  const T *a = x.data<T>(), *b = y.data<T>();
  T* o = ctx.Output("out").mutable_data<T>(nb.out, ctx.place());
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    o[e] = fn(a[i], b[j]);
  }
}

template <typename T>
void CopysignKernel(KernelContext& ctx) {
  BroadcastKernel<T>(ctx, [](T a, T b) {
    return static_cast<T>(std::copysign(static_cast<double>(a), static_cast<double>(b)));
  });
}

// x@GRAD = out@GRAD * copysign(x, y) / x (0 where x is 0), summed over x's broadcast dims;
// y@GRAD = 0.
template <typename T>
void CopysignGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x"), y = ctx.Input("y");
  const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  Tensor dout = ctx.Input(GradVarName("out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "out@GRAD", dout.dims(), nb.out);
  const std::string dxn = GradVarName("x"), dyn = GradVarName("y");
  if (ctx.HasOutput(dyn.c_str())) {
    T* dy = ctx.Output(dyn.c_str()).mutable_data<T>(y.dims(), ctx.place());
    std::fill(dy, dy + y.numel(), T(0));
  }
  if (!ctx.HasOutput(dxn.c_str())) return;
  T* dx = ctx.Output(dxn.c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  const T *a = x.data<T>(), *b = y.data<T>(), *g = dout.data<T>();
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    if (a[i] != T(0)) dx[i] += g[e] * (std::copysign(a[i], b[j]) / a[i]);
  }
}

template <typename T>
void NextafterKernel(KernelContext& ctx) {
  BroadcastKernel<T>(ctx, [](T a, T b) { return std::nextafter(a, b); });
}

// Paddle's shifts (funcs/bitwise_functors.h): the bits move in the unsigned type, so a left
// shift wraps and a logical right shift of a negative x fills with zeros.
template <typename T>
T ShiftLeft(T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr T bits = static_cast<T>(sizeof(T) * 8);
  if (b < T(0) || b >= bits) return T(0);
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << b));
}

template <typename T>
T ShiftRight(T a, T b, bool arithmetic) {
  using U = std::make_unsigned_t<T>;
  constexpr T bits = static_cast<T>(sizeof(T) * 8);
  if (b < T(0) || b >= bits) return arithmetic && a < T(0) ? T(-1) : T(0);
  if (arithmetic) return static_cast<T>(a >> b);
  return static_cast<T>(static_cast<U>(a) >> b);
}

template <typename T>
void LeftShiftKernel(KernelContext& ctx) {
  BroadcastKernel<T>(ctx, [](T a, T b) { return ShiftLeft(a, b); });
}

template <typename T>
void RightShiftKernel(KernelContext& ctx) {
  const bool arithmetic = ctx.Attr<bool>("is_arithmetic");
  BroadcastKernel<T>(ctx, [arithmetic](T a, T b) { return ShiftRight(a, b, arithmetic); });
}

void ShiftShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("x");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_UINT8 || t == TIDE_INT8 || t == TIDE_INT16 ||
                 t == TIDE_INT32 || t == TIDE_INT64,
             "op '", ctx.op_type(), "': x ('", ctx.InputName("x"),
             "') must be uint8, int8, int16, int32 or int64, got ", tide::DataTypeName(t));
  BroadcastShape(ctx);
}

void FloatBroadcastShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("x");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_FP32 || t == TIDE_FP64, "op '", ctx.op_type(),
             "': x ('", ctx.InputName("x"), "') must be float32 or float64, got ",
             tide::DataTypeName(t));
  BroadcastShape(ctx);
}

// A real X's angle: pi where X < 0, else 0; NaN stays NaN. A complex X's: atan2(imag, real)
// (std::arg), of X's real type.
template <typename T>
void AngleKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  using R = RealType<T>;
  R* o = ctx.Output("Out").mutable_data<R>(x.dims(), ctx.place());
  if (x.numel() == 0) return;
  const T* a = x.data<T>();
  const R pi = static_cast<R>(M_PI);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if constexpr (kIsComplex<T>)
      o[i] = std::arg(a[i]);
    else
      o[i] = std::isnan(a[i]) ? a[i] : (a[i] < 0 ? pi : T(0));
  }
}

// A real X's angle is piecewise constant: X@GRAD = 0. A complex X = x + iy's (Out real):
// d atan2(y, x) is (-y dx + x dy) / |X|^2, so X@GRAD = Out@GRAD * (-y + ix) / |X|^2, which is
// Out@GRAD * i / conj(X) (std::complex's division keeps a large or tiny X finite); 0 at X = 0.
template <typename T>
void AngleGradKernel(KernelContext& ctx) {
  if constexpr (kIsComplex<T>) {
    GradMap<T, RealType<T>>(ctx, "X", [](const T& x, RealType<T> g) {
      return x == T(0) ? T(0) : g * (T(0, 1) / std::conj(x));
    });
  } else {
    Tensor x = ctx.Input("X");
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD",
                             ctx.Input(GradVarName("Out").c_str()).dims(), x.dims());
    T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
}

void AngleShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_FP32 || t == TIDE_FP64 || tide::ops::IsComplexType(t),
             "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') must be float32, float64, complex64 or complex128, got ", tide::DataTypeName(t));
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", tide::ops::RealTypeOf(t));
}

tide::OpSchema BinarySchema(const char* name, const char* what, const char* types) {
  return tide::OpSchema(name)
      .Comment(what)
      .Input("x", types)
      .Input("y", "x's type; broadcast with x numpy-style")
      .Output("out", "x's type, the broadcast dims");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(BinarySchema("copysign", "out = |x| with y's sign (paddle.copysign).",
                              "float32, float64 or an integer type")
                     .InferShape(BroadcastShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("copysign_grad")
                           .Input("x", g.Input("x"))
                           .Input("y", g.Input("y"))
                           .Input(GradVarName("out"), g.OutputGrad("out"))
                           .Output(GradVarName("x"), g.InputGrad("x"))
                           .Output(GradVarName("y"), g.InputGrad("y"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("copysign_grad")
                     .Input("x")
                     .Input("y")
                     .Input(GradVarName("out"))
                     .Output(GradVarName("x"))
                     .AsDispensable()
                     .Output(GradVarName("y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("x")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"x", "y"});
                     }));
TIDE_REGISTER_OP(BinarySchema("nextafter",
                              "out = the next representable value after x towards y "
                              "(paddle.nextafter).",
                              "float32 or float64")
                     .NoGradient()
                     .InferShape(FloatBroadcastShape));
TIDE_REGISTER_OP(BinarySchema("bitwise_left_shift",
                              "out = x << y (paddle.bitwise_left_shift); 0 where y < 0 or y >= "
                              "the type's bits.",
                              "uint8, int8, int16, int32 or int64")
                     .NoGradient()
                     .Attr("is_arithmetic", true, "arithmetic or logical (the same for <<)")
                     .InferShape(ShiftShape));
TIDE_REGISTER_OP(BinarySchema("bitwise_right_shift",
                              "out = x >> y (paddle.bitwise_right_shift): arithmetic (the sign "
                              "repeated) or logical (zeros in); y < 0 or y >= the type's bits "
                              "gives 0, or -1 for a negative x shifted arithmetically.",
                              "uint8, int8, int16, int32 or int64")
                     .NoGradient()
                     .Attr("is_arithmetic", true, "arithmetic (true) or logical shift")
                     .InferShape(ShiftShape));
TIDE_REGISTER_OP(tide::OpSchema("angle")
                     .Comment("Out = the angle of X (paddle.angle): of a real X pi where X < 0, "
                              "else 0, NaN staying NaN; of a complex X atan2(imag, real).")
                     .Input("X", "float32, float64, complex64 or complex128")
                     .Output("Out", "X's dims; X's type, or a complex X's real type")
                     .InferShape(AngleShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("angle_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("angle_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) { GradsLikeInputs(c, {"X"}); }));
#define OPS_MATH_SHIFT_TYPES uint8_t, int8_t, int16_t, int32_t, int64_t
TIDE_REGISTER_KERNEL("copysign", "cpu", CopysignKernel, OPS_MATH_FLOAT_TYPES, OPS_MATH_SHIFT_TYPES);
TIDE_REGISTER_KERNEL("copysign_grad", "cpu", CopysignGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nextafter", "cpu", NextafterKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bitwise_left_shift", "cpu", LeftShiftKernel, OPS_MATH_SHIFT_TYPES);
TIDE_REGISTER_KERNEL("bitwise_right_shift", "cpu", RightShiftKernel, OPS_MATH_SHIFT_TYPES);
TIDE_REGISTER_KERNEL("angle", "cpu", AngleKernel, OPS_MATH_FLOAT_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("angle_grad", "cpu", AngleGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
