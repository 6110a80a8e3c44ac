// activation_ops.cc: Fluid's activations, table-driven: the functors (name, formula, attributes
// with Fluid's defaults, Out = f(X) and dX = df(dOut)) are the SDK's tide/ops/activation.hpp,
// shared with the CUDA plugin; one helper here registers the op, its grad op and float/double
// CPU kernels for each (the forward one the SDK's header-only tide/kernels/activation.hpp; gelu's
// float32 ones are act_simd.cc's vectorized loops instead). A grad reads X or Out, as the
// activation's Fluid grad op does (kDep), so other devices' grad kernels see the same inputs.
// Also scale (a linear op with its own grad rule; its CPU kernel is tide/kernels/scale.hpp).
// silu, mish and erf (Paddle 2.x) are this pack's own functors, paddle_activations.h, and Paddle
// 2.x's math ops (log1p ... digamma) paddle_math_activations.h, with CPU kernels only. The math
// ones' complex64 / complex128 kernels (sin ... sigmoid, pow) are complex_math_kernels.cc's, abs
// and exp's complex_ops.cc's.
#include <cmath>
#include <limits>
#include <tide/kernels/activation.hpp>
#include <tide/kernels/scale.hpp>
#include <tide/ops/activation.hpp>
#include <tide/ops/scale.hpp>
#include <type_traits>

#include "act_simd.h"
#include "bf16_convert.h"
#include "common.h"
#include "paddle_activations.h"
#include "paddle_math_activations.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::ActGradFrom;
using tide::ops::GeluAct;
using tide::ops::MakeActivation;

template <typename T, typename F>
void ActGradKernel(KernelContext& ctx) {
  const F f = MakeActivation<F>(ctx);
  Tensor from = ctx.Input(ActGradFrom<F>());
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), from.dims());
  const T* __restrict__ v = from.data<T>();
  const T* __restrict__ g = dout.data<T>();
  T* __restrict__ dx =
      ctx.Output(GradVarName("X").c_str()).mutable_data<T>(from.dims(), ctx.place());
  tide::ParallelFor(ctx, from.numel(), 8, [f, v, g, dx](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = f.template Bwd<T>(v[i], g[i]);
  });
}

// float32 gelu and gelu_grad: act_simd.cc's vectorized loops (the SDK's GeluAct, scalar erf / exp
// / tanh per element, stays the float64 kernel and a compiled model's). Work per element, for
// ParallelFor: ~0.5 ns, a few times a plain elementwise op's.
constexpr int64_t kGeluCost = 4;

void GeluFloatKernel(KernelContext& ctx) {
  const bool approximate = ctx.Attr<bool>(GeluAct::kBoolAttr);
  Tensor x = ctx.Input("X");
  const float* xd = x.data<float>();
  float* od = ctx.Output("Out").mutable_data<float>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), kGeluCost, [=](int64_t b, int64_t e) {
    (approximate ? GeluTanh : GeluErf)(xd + b, od + b, e - b);
  });
}

void GeluGradFloatKernel(KernelContext& ctx) {
  const bool approximate = ctx.Attr<bool>(GeluAct::kBoolAttr);
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const float* xd = x.data<float>();
  const float* g = dout.data<float>();
  float* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<float>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), kGeluCost, [=](int64_t b, int64_t e) {
    (approximate ? GeluTanhGrad : GeluErfGrad)(xd + b, g + b, dx + b, e - b);
  });
}

template <typename F>
tide::OpSchema WithAttrs(tide::OpSchema s) {
  // Paddle 2.x programs carry its oneDNN precision hint on activations (it never changes them).
  s.Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
  if constexpr (std::is_same_v<F, GeluAct>) {
    return s.Attr(GeluAct::kBoolAttr, false, "use the tanh approximation");
  } else {
    if constexpr (std::is_same_v<F, tide::ops::PowAct>)
      s.Input("FactorTensor", "the exponent as a one-element float tensor (optional; over factor)")
          .AsDispensable();
    for (int i = 0; i < F::kNumAttrs; ++i)
      s.Attr(F::kAttrs[i].name, F::kAttrs[i].default_value, F::kAttrs[i].comment);
    return s;
  }
}

// abs of a complex X is its modulus, of X's real type (Paddle's RealAndImagInferMeta; its
// complex kernel is in complex_ops.cc, its grad's in complex_grad_kernels.cc).
void AbsShape(tide::InferShapeContext& c) {
  tide::SameShapeAsInput("X", "Out")(c);
  c.SetOutputDataType("Out", tide::ops::RealTypeOf(c.InputDataType("X")));
}

// The op, its grad op (reading X or Out, and Out@GRAD), and float/double CPU kernels (gelu's
// float ones its own, above).
template <typename F>
void RegisterActivation(tide::Registrar& r) {
  const std::string formula = F::kFormula;
  const std::string type = F::kName;
  const char* from = ActGradFrom<F>();
  tide::InferShapeFn shape = tide::SameShapeAsInput("X", "Out");
  if constexpr (std::is_same_v<F, tide::ops::AbsAct>) shape = AbsShape;
  r.Op(WithAttrs<F>(tide::OpSchema(type)
                        .Comment("Out = " + formula + ", elementwise.")
                        .Input("X", "input")
                        .Output("Out", "same dims as X")
                        .InferShape(shape)
                        .InPlace("X", "Out")
                        .Grad([type, from](tide::GradMaker& g) {
                          auto op = g.NewOp(type + "_grad");
                          if (std::string(from) == "X")
                            op.Input("X", g.Input("X"));
                          else
                            op.Input("Out", g.Output("Out"));
                          if (!g.Input("FactorTensor").empty())  // pow's, when given
                            op.Input("FactorTensor", g.Input("FactorTensor"));
                          op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                              .Output(GradVarName("X"), g.InputGrad("X"))
                              .CopyAttrs();
                        })));
  r.Op(WithAttrs<F>(tide::OpSchema(type + "_grad")
                        .Input(from)
                        .Input(GradVarName("Out"))
                        .Output(GradVarName("X"))
                        .InferShape(tide::SameShapeAsInput(from, GradVarName("X")))));
  if constexpr (std::is_same_v<F, GeluAct>) {
    r.Kernel(type, "cpu", TIDE_FP32, &GeluFloatKernel);
    r.Kernel(type + "_grad", "cpu", TIDE_FP32, &GeluGradFloatKernel);
  } else {
    r.Kernel(type, "cpu", TIDE_FP32, &tide::kernels::Activation<float, F>);
    r.Kernel(type + "_grad", "cpu", TIDE_FP32, &ActGradKernel<float, F>);
  }
  r.Kernel(type, "cpu", TIDE_FP64, &tide::kernels::Activation<double, F>);
  r.Kernel(type + "_grad", "cpu", TIDE_FP64, &ActGradKernel<double, F>);
}

// abs and square of an integer X (the SDK's functors are for floats).
struct IntAbs {
  template <typename T>
  T operator()(T x) const {
    return x < 0 ? static_cast<T>(-x) : x;
  }
};
struct IntSquare {
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(x * x);
  }
};

template <typename T, typename F>
void IntActKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T* v = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = F()(v[i]);
}

// bfloat16 X (bfloat16 inference between bfloat16 ops: attention's 1 / sqrt(d)): the float32
// kernel's arithmetic on X widened, each value rounded to bfloat16 once, as a float32 scale
// between two casts; range by range, so Out may be X.
void ScaleBfloat16Values(KernelContext& ctx, const Tensor& x, Tensor& out) {
  const auto scale = static_cast<float>(tide::ops::ScaleFactor(ctx));
  const float bias = ctx.Attr<float>("bias");
  const bool after = ctx.Attr<bool>("bias_after_scale");
  const auto* xd = reinterpret_cast<const uint16_t*>(x.raw_data());
  out.ResizeLike(x);
  auto* o = reinterpret_cast<uint16_t*>(out.mutable_data(TIDE_BF16, ctx.place()));
  ParallelFor(ctx, x.numel(), 1, [&](int64_t b, int64_t e) {
    ScaleBfloat16(xd + b, o + b, e - b, scale, bias, after);
  });
}

void ScaleBfloat16Kernel(KernelContext& ctx) {
  tide::kernels::ScaleDenseOrRows(ctx, ScaleBfloat16Values);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_ON_REGISTER([](tide::Registrar& r) {
  tide::ops::ForEachActivation(
      [&](auto tag) { RegisterActivation<typename decltype(tag)::type>(r); });
  // Paddle 2.x's, CPU only (paddle_activations.h).
  RegisterActivation<SiluAct>(r);
  RegisterActivation<MishAct>(r);
  RegisterActivation<ErfAct>(r);
  // Paddle 2.x's math ops, CPU only (paddle_math_activations.h).
  RegisterActivation<Log1pAct>(r);
  RegisterActivation<Expm1Act>(r);
  RegisterActivation<SinhAct>(r);
  RegisterActivation<CoshAct>(r);
  RegisterActivation<AsinhAct>(r);
  RegisterActivation<AcoshAct>(r);
  RegisterActivation<AtanhAct>(r);
  RegisterActivation<TruncAct>(r);
  RegisterActivation<ErfinvAct>(r);
  RegisterActivation<LgammaAct>(r);
  RegisterActivation<DigammaAct>(r);
  RegisterActivation<SeluAct>(r);
  RegisterActivation<CeluAct>(r);
  RegisterActivation<LogitAct>(r);
  RegisterActivation<TanAct>(r);
  RegisterActivation<Log2Act>(r);
  RegisterActivation<Log10Act>(r);
  RegisterActivation<FracAct>(r);
  // Paddle's abs and square also take int32 / int64 (forward only: paddle.gcd / lcm's abs,
  // paddle.square of ints).
  r.Kernel("abs", "cpu", TIDE_INT32, &IntActKernel<int32_t, IntAbs>);
  r.Kernel("abs", "cpu", TIDE_INT64, &IntActKernel<int64_t, IntAbs>);
  r.Kernel("square", "cpu", TIDE_INT32, &IntActKernel<int32_t, IntSquare>);
  r.Kernel("square", "cpu", TIDE_INT64, &IntActKernel<int64_t, IntSquare>);
});

TIDE_REGISTER_OP(
    tide::OpSchema("scale")
        .Comment("Out = scale * X + bias (bias_after_scale), else scale * (X + bias). A "
                 "SelectedRows X gives a SelectedRows Out with X's rows.")
        .Input("X", "input")
        .Input("ScaleTensor",
               "Paddle: the factor as a one-element tensor "
               "(optional; overrides `scale`)")
        .AsDispensable()
        .Output("Out", "same dims as X")
        .Attr("scale", 1.0f, "the factor")
        .Attr("mkldnn_data_type", std::string("float32"),
              "oneDNN precision hint "
              "(ignored)")
        .Attr("bias", 0.0f, "the offset")
        .Attr("bias_after_scale", true, "add bias after scaling")
        .InPlace("X", "Out")
        .InferShape([](tide::InferShapeContext& c) {
          // A SelectedRows X (a sparse gradient) gives a SelectedRows Out.
          if (c.InputVarType("X") == TIDE_VAR_SELECTED_ROWS)
            c.SetOutputVarType("Out", TIDE_VAR_SELECTED_ROWS);
          tide::SameShapeAsInput("X", "Out")(c);
        })
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("scale");
          op.Input("X", g.OutputGrad("Out"));
          if (!g.Input("ScaleTensor").empty()) op.Input("ScaleTensor", g.Input("ScaleTensor"));
          op.Output("Out", g.InputGrad("X"))
              .Attr("scale", g.Attr<float>("scale"))
              .Attr("bias", 0.0f);
        }));
// A complex X takes a real scale and bias (Paddle's complex * 2, complex + 1).
TIDE_REGISTER_KERNEL("scale", "cpu", tide::kernels::Scale, OPS_MATH_NUMERIC_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.Kernel("scale", "cpu", TIDE_BF16, &ScaleBfloat16Kernel);
});
