// bessel_polygamma_ops.cc: Paddle's element-wise special functions with their grads: the modified
// Bessel functions i0, i1 and their exponentially scaled i0e = e^-|x| i0, i1e = e^-|x| i1
// (Cephes' expansions, bessel_zeta_math.h), and polygamma (attribute n: digamma for n = 0, else
// (-1)^(n + 1) n! zeta(n + 1, x)). Paddle's slot names: x -> out. Each value is computed in double.
#include <string>

#include "bessel_zeta_math.h"
#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
namespace sp = special;

// A function of x (n: polygamma's order, unused by the others) and its derivative.
using Fn = double (*)(double x, int n);

double I0(double x, int) { return sp::I0(x); }
double I0e(double x, int) { return sp::I0e(x); }
double I1(double x, int) { return sp::I1(x); }
double I1e(double x, int) { return sp::I1e(x); }
double Polygamma(double x, int n) { return sp::Polygamma(n, x); }

double Sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
// d/dx of each, as Paddle's grads: i0' = i1; i0e' = i1e - sign(x) i0e; i1' = i0 - i1 / x and
// i1e' = i0e - i1e (sign(x) + 1 / x), both 1/2 at x = 0 (|x| <= epsilon).
double I0Grad(double x, int) { return sp::I1(x); }
double I0eGrad(double x, int) { return sp::I1e(x) - Sign(x) * sp::I0e(x); }
double I1Grad(double x, int) {
  if (std::abs(x) <= std::numeric_limits<double>::epsilon()) return 0.5;
  return sp::I0(x) - sp::I1(x) / x;
}
double I1eGrad(double x, int) {
  if (std::abs(x) <= std::numeric_limits<double>::epsilon()) return 0.5;
  return sp::I0e(x) - sp::I1e(x) * (Sign(x) + 1.0 / x);
}
double PolygammaGrad(double x, int n) { return sp::Polygamma(n + 1, x); }

int OrderOf(KernelContext& ctx) { return ctx.HasAttr("n") ? ctx.Attr<int32_t>("n") : 0; }

template <typename T, Fn F>
void ForwardKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const int n = OrderOf(ctx);
  const T* a = x.data<T>();
  T* o = ctx.Output("out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, m = x.numel(); i < m; ++i) o[i] = static_cast<T>(F(double(a[i]), n));
}

template <typename T, Fn D>
void GradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const std::string gout = GradVarName("out"), gx = GradVarName("x");
  const T* g = ctx.Input(gout.c_str()).data<T>();
  const int n = OrderOf(ctx);
  const T* a = x.data<T>();
  T* dx = ctx.Output(gx.c_str()).mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, m = x.numel(); i < m; ++i)
    dx[i] = static_cast<T>(D(double(a[i]), n) * double(g[i]));
}

void CheckOrder(const TideAttrValue& v) {
  TIDE_CHECK(v.i >= 0, "attribute 'n' of polygamma must be a non-negative integer, got ", v.i);
}

// The op x -> out; polygamma adds its order n.
tide::OpSchema ForwardSchema(const char* op, const char* comment, bool with_order) {
  const std::string grad = std::string(op) + "_grad";
  tide::OpSchema s(op);
  s.Comment(comment)
      .Input("x", "the input")
      .Output("out", "x's dims")
      .InferShape(tide::SameShapeAsInput("x", "out"))
      .Grad([grad](tide::GradMaker& g) {
        g.NewOp(grad)
            .Input("x", g.Input("x"))
            .Input(GradVarName("out"), g.OutputGrad("out"))
            .Output(GradVarName("x"), g.InputGrad("x"))
            .CopyAttrs();
      });
  if (with_order)
    s.RequiredAttr("n", TIDE_ATTR_INT, "the order of the derivative of digamma (>= 0)")
        .Check(CheckOrder);
  return s;
}

// Its grad: x, out@GRAD -> x@GRAD.
tide::OpSchema GradSchema(const char* op, bool with_order) {
  tide::OpSchema s(std::string(op) + "_grad");
  s.Input("x")
      .Input(GradVarName("out"))
      .Output(GradVarName("x"))
      .InferShape(tide::SameShapeAsInput("x", GradVarName("x")));
  if (with_order) s.RequiredAttr("n", TIDE_ATTR_INT);
  return s;
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

// Each op's schemas and float / double kernels (F: the function, D: its derivative).
#define OPS_MATH_SPECIAL_OP(op, Name, F, D, with_order, comment)                 \
  namespace ops_math {                                                           \
  template <typename T>                                                          \
  void Name##Kernel(KernelContext& ctx) {                                        \
    ForwardKernel<T, F>(ctx);                                                    \
  }                                                                              \
  template <typename T>                                                          \
  void Name##GradKernel(KernelContext& ctx) {                                    \
    GradKernel<T, D>(ctx);                                                       \
  }                                                                              \
  }                                                                              \
  TIDE_REGISTER_OP(ForwardSchema(op, comment, with_order));                      \
  TIDE_REGISTER_OP(GradSchema(op, with_order));                                  \
  TIDE_REGISTER_KERNEL(op, "cpu", ops_math::Name##Kernel, OPS_MATH_FLOAT_TYPES); \
  TIDE_REGISTER_KERNEL(op "_grad", "cpu", ops_math::Name##GradKernel, OPS_MATH_FLOAT_TYPES)

OPS_MATH_SPECIAL_OP("i0", I0, I0, I0Grad, false,
                    "out = I0(x), the modified Bessel function of order 0.");
OPS_MATH_SPECIAL_OP("i0e", I0e, I0e, I0eGrad, false, "out = e^-|x| I0(x).");
OPS_MATH_SPECIAL_OP("i1", I1, I1, I1Grad, false,
                    "out = I1(x), the modified Bessel function of order 1.");
OPS_MATH_SPECIAL_OP("i1e", I1e, I1e, I1eGrad, false, "out = e^-|x| I1(x).");
OPS_MATH_SPECIAL_OP("polygamma", Polygamma, Polygamma, PolygammaGrad, true,
                    "out = the n-th derivative of digamma at x (digamma for n = 0).");
