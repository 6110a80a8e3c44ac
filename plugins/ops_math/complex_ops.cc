// complex_ops.cc: Paddle's ops that build and take apart complex tensors: complex (X + iY, numpy
// broadcasting), real, imag, as_complex ([..., 2] -> [...]) and as_real (the reverse), and the
// complex kernels of the activation table's abs (|z|, real) and exp. complex64 / complex128 are
// std::complex<float> / <double>, stored as (real, imaginary) pairs, numpy's and Paddle's layout.
// Their gradients: complex_grad (the real and imaginary parts of Out@GRAD back to X and Y),
// real_grad / imag_grad (Out@GRAD into the real or imaginary parts), and as_complex and as_real
// are each other's.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tide/ops/elementwise.hpp>
#include <tide/ops/grad_outputs.hpp>

#include "common.h"
#include "element_map.h"

namespace ops_math {
namespace {

using tide::ops::ComplexTypeOf;
using tide::ops::IsComplexType;
using tide::ops::RealTypeOf;

// X's type must be complex (real, imag, as_real: Paddle registers them for complex types only).
void CheckComplexX(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(t == TIDE_UNDEFINED || IsComplexType(t), "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') must be complex64 or complex128, got ", tide::DataTypeName(t));
}

// A real input the op makes complex values of: float32 or float64.
void CheckRealInput(tide::InferShapeContext& ctx, const char* param) {
  const TideDataType t = ctx.InputDataType(param);
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_FP32 || t == TIDE_FP64, "op '", ctx.op_type(),
             "': ", param, " ('", ctx.InputName(param), "') must be float32 or float64, got ",
             tide::DataTypeName(t));
}

// complex: Out = X + iY, X and Y of one real type, broadcast numpy-style.
void ComplexShape(tide::InferShapeContext& ctx) {
  CheckRealInput(ctx, "X");
  CheckRealInput(ctx, "Y");
  const TideDataType x = ctx.InputDataType("X"), y = ctx.InputDataType("Y");
  TIDE_CHECK(x == TIDE_UNDEFINED || y == TIDE_UNDEFINED || x == y, "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') is ", tide::DataTypeName(x), " but Y ('", ctx.InputName("Y"),
             "') is ", tide::DataTypeName(y), "; they must have one data type");
  ctx.SetOutputDims("Out", NumpyOutDims(ctx.op_type(), ctx.InputDims("X"), ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", x == TIDE_UNDEFINED ? x : ComplexTypeOf(x));
}

template <typename R>
void ComplexKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(y.dtype() == x.dtype(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"), "') is ",
             tide::DataTypeName(x.dtype()), " but Y ('", ctx.InputName("Y"), "') is ",
             tide::DataTypeName(y.dtype()), "; they must have one data type");
  const auto nb = tide::ops::GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  auto* o = ctx.Output("Out").mutable_data<std::complex<R>>(nb.out, ctx.place());
  if (nb.numel == 0) return;
  const R* xd = x.data<R>();
  const R* yd = y.data<R>();
  if (x.dims() == y.dims()) {
    for (int64_t e = 0; e < nb.numel; ++e) o[e] = {xd[e], yd[e]};
    return;
  }
  for (int64_t e = 0, xi, yi; e < nb.numel; ++e) {
    nb.Index(e, &xi, &yi);
    o[e] = {xd[xi], yd[yi]};
  }
}

// real, imag, abs: a complex X to its real type, X's dims.
void ComplexToRealShape(tide::InferShapeContext& ctx) {
  CheckComplexX(ctx);
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", RealTypeOf(ctx.InputDataType("X")));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void RealKernel(KernelContext& ctx) {
  MapX<T, RealType<T>>(ctx, [](const T& z) { return z.real(); });
}
template <typename T>
void ImagKernel(KernelContext& ctx) {
  MapX<T, RealType<T>>(ctx, [](const T& z) { return z.imag(); });
}
// |z| without overflow or underflow on the way (std::abs is hypot).
template <typename T>
void AbsKernel(KernelContext& ctx) {
  MapX<T, RealType<T>>(ctx, [](const T& z) { return std::abs(z); });
}
template <typename T>
void ExpKernel(KernelContext& ctx) {
  MapX<T, T>(ctx, [](const T& z) { return std::exp(z); });
}

// as_complex: X [..., 2] real -> Out [...] complex, each last-dim pair (real, imaginary).
void AsComplexShape(tide::InferShapeContext& ctx) {
  CheckRealInput(ctx, "X");
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') is 0-D; it needs a last dim of 2 (real, imaginary)");
  TIDE_CHECK(x.back() == 2 || x.back() < 0, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') ", tide::ToString(x), " must have a last dim of 2 (real, imaginary), got ",
             x.back());
  ctx.SetOutputDims("Out", Dims(x.begin(), x.end() - 1));
  const TideDataType t = ctx.InputDataType("X");
  ctx.SetOutputDataType("Out", t == TIDE_UNDEFINED ? t : ComplexTypeOf(t));
}

// as_real: X [...] complex -> Out [..., 2] real.
void AsRealShape(tide::InferShapeContext& ctx) {
  CheckComplexX(ctx);
  Dims out = ctx.InputDims("X");
  out.push_back(2);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", RealTypeOf(ctx.InputDataType("X")));
}

// --- gradients (Out@GRAD of a complex Out holds dL/d(real) + i dL/d(imag)) ---------------

// complex_grad: X@GRAD = real(Out@GRAD), Y@GRAD = imag(Out@GRAD), each summed over the dims
// its input was broadcast along.
template <typename R>
void ComplexGradKernel(KernelContext& ctx) {
  using C = std::complex<R>;
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
  const auto nb = tide::ops::GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  const C* g = nb.numel ? dout.data<C>() : nullptr;
  R* dx = tide::ops::OptionalGrad<R>(ctx, "X", x.dims());
  R* dy = tide::ops::OptionalGrad<R>(ctx, "Y", y.dims());
  if (dx) std::fill(dx, dx + x.numel(), R(0));
  if (dy) std::fill(dy, dy + y.numel(), R(0));
  for (int64_t e = 0, xi, yi; e < nb.numel; ++e) {
    nb.Index(e, &xi, &yi);
    if (dx) dx[xi] += g[e].real();
    if (dy) dy[yi] += g[e].imag();
  }
}

// real_grad / imag_grad: X@GRAD = Out@GRAD as the real or the imaginary parts, the others 0.
template <typename R, bool kImag>
void RealPartGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
  auto* dx = ctx.Output(tide::GradVarName("X").c_str())
                 .mutable_data<std::complex<R>>(dout.dims(), ctx.place());
  const R* g = dout.numel() ? dout.data<R>() : nullptr;
  tide::ParallelFor(ctx, dout.numel(), 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = kImag ? std::complex<R>(0, g[i]) : g[i];
  });
}
template <typename R>
void RealGradKernel(KernelContext& ctx) {
  RealPartGradKernel<R, false>(ctx);
}
template <typename R>
void ImagGradKernel(KernelContext& ctx) {
  RealPartGradKernel<R, true>(ctx);
}

// real_grad / imag_grad: X@GRAD is Out@GRAD's dims in its complex type.
void RealPartGradShape(tide::InferShapeContext& ctx) {
  const std::string dout = tide::GradVarName("Out"), dx = tide::GradVarName("X");
  ctx.SetOutputDims(dx.c_str(), ctx.InputDims(dout.c_str()));
  const TideDataType t = ctx.InputDataType(dout.c_str());
  ctx.SetOutputDataType(dx.c_str(), t == TIDE_UNDEFINED ? t : ComplexTypeOf(t));
}

// std::complex<R> is laid out as R[2] (the C++ standard says so): both ops copy the bytes.
template <typename R>
void AsComplexKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  TIDE_CHECK(!d.empty() && d.back() == 2, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') ", tide::ToString(d), " must have a last dim of 2 (real, imaginary)");
  auto* o =
      ctx.Output("Out").mutable_data<std::complex<R>>(Dims(d.begin(), d.end() - 1), ctx.place());
  if (x.numel()) std::memcpy(o, x.data<R>(), sizeof(R) * static_cast<size_t>(x.numel()));
}

template <typename T>
void AsRealKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  Dims d = x.dims();
  d.push_back(2);
  auto* o = ctx.Output("Out").mutable_data<RealType<T>>(d, ctx.place());
  if (x.numel()) std::memcpy(o, x.data<T>(), sizeof(T) * static_cast<size_t>(x.numel()));
}

// One op's gradient as another's forward op: as_complex's is as_real and the other way round.
tide::GradMakerFn GradAs(const char* grad_type) {
  return [grad_type](tide::GradMaker& g) {
    g.NewOp(grad_type).Input("X", g.OutputGrad("Out")).Output("Out", g.InputGrad("X"));
  };
}

// real / imag: real_grad / imag_grad of Out@GRAD.
tide::GradMakerFn RealPartGrad(const std::string& type) {
  return [type](tide::GradMaker& g) {
    g.NewOp(type + "_grad")
        .Input(tide::GradVarName("Out"), g.OutputGrad("Out"))
        .Output(tide::GradVarName("X"), g.InputGrad("X"));
  };
}

tide::OpSchema RealPartGradSchema(const char* type, const char* part) {
  return tide::OpSchema(type)
      .Comment(std::string("X@GRAD = Out@GRAD as the ") + part + " parts of a complex tensor.")
      .Input(tide::GradVarName("Out"), "float32 or float64")
      .Output(tide::GradVarName("X"), "complex64 or complex128, Out@GRAD's dims")
      .InferShape(RealPartGradShape);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("complex")
                     .Comment("Out = X + iY (paddle.complex), X and Y broadcast numpy-style.")
                     .Input("X", "the real parts: float32 or float64")
                     .Input("Y", "the imaginary parts: X's type")
                     .Output("Out", "complex64 for float32, complex128 for float64")
                     .InferShape(ComplexShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("complex_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input(tide::GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(tide::GradVarName("X"), g.InputGrad("X"))
                           .Output(tide::GradVarName("Y"), g.InputGrad("Y"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("complex_grad")
                     .Comment("X@GRAD = real(Out@GRAD), Y@GRAD = imag(Out@GRAD), summed over "
                              "the dims each was broadcast along.")
                     .Input("X")
                     .Input("Y")
                     .Input(tide::GradVarName("Out"))
                     .Output(tide::GradVarName("X"))
                     .AsDispensable()
                     .Output(tide::GradVarName("Y"))
                     .AsDispensable()
                     .InferShape([](tide::InferShapeContext& ctx) {
                       tide::ops::GradsLikeInputs(ctx, {"X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("real")
                     .Comment("Out = the real parts of a complex X (paddle.real).")
                     .Input("X", "complex64 or complex128")
                     .Output("Out", "X's dims; float32 for complex64, float64 for complex128")
                     .InferShape(ComplexToRealShape)
                     .Grad(RealPartGrad("real")));
TIDE_REGISTER_OP(tide::OpSchema("imag")
                     .Comment("Out = the imaginary parts of a complex X (paddle.imag).")
                     .Input("X", "complex64 or complex128")
                     .Output("Out", "X's dims; float32 for complex64, float64 for complex128")
                     .InferShape(ComplexToRealShape)
                     .Grad(RealPartGrad("imag")));
TIDE_REGISTER_OP(RealPartGradSchema("real_grad", "real"));
TIDE_REGISTER_OP(RealPartGradSchema("imag_grad", "imaginary"));
TIDE_REGISTER_OP(tide::OpSchema("as_complex")
                     .Comment("Out = X's last-dim pairs (real, imaginary) as complex numbers "
                              "(paddle.as_complex).")
                     .Input("X", "float32 or float64, last dim 2")
                     .Output("Out", "X's dims without the last; complex64 or complex128")
                     .InferShape(AsComplexShape)
                     .Grad(GradAs("as_real")));
TIDE_REGISTER_OP(tide::OpSchema("as_real")
                     .Comment("Out = X's complex numbers as (real, imaginary) pairs along a new "
                              "last dim (paddle.as_real).")
                     .Input("X", "complex64 or complex128")
                     .Output("Out", "X's dims and 2; float32 or float64")
                     .InferShape(AsRealShape)
                     .Grad(GradAs("as_complex")));
TIDE_REGISTER_KERNEL("complex", "cpu", ComplexKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("complex_grad", "cpu", ComplexGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("real", "cpu", RealKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("imag", "cpu", ImagKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("real_grad", "cpu", RealGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("imag_grad", "cpu", ImagGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("as_complex", "cpu", AsComplexKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("as_real", "cpu", AsRealKernel, OPS_MATH_COMPLEX_TYPES);
// The activation table's abs (whose shape inference gives a complex X's real type) and exp.
TIDE_REGISTER_KERNEL("abs", "cpu", AbsKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("exp", "cpu", ExpKernel, OPS_MATH_COMPLEX_TYPES);
