// elementwise_ops.cc: elementwise_add/sub/mul/div/max/min/pow/mod/floordiv with Fluid's
// broadcast rule (Y repeated over X at `axis`, tide/ops/broadcast.hpp), and the grads of the
// differentiable ones (dY summed over the dims Y is repeated over; add / sub / mul / div / pow's
// of complex values multiply Out@GRAD by the conjugate partials, common.h's convention). The
// forward CPU kernels are the SDK's header-only tide/kernels/elementwise.hpp (which a compiled
// model calls directly), complex pow's numpy's power (complex_math.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tide/kernels/elementwise.hpp>
#include <tide/ops/elementwise.hpp>
#include <type_traits>
#include <vector>

#include "common.h"
#include "complex_math.h"

namespace ops_math {
namespace {

// Paddle 2.x's numpy broadcast where Fluid's rule does not fit: tide/ops/elementwise.hpp.
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;
using tide::ops::NumpyPath;

// Per-element partial derivatives: dx = dout * DX(x, y, out), dy = dout * DY(x, y, out); of
// complex values, dout times their conjugates (DX and DY stay the holomorphic derivatives).
struct AddG {
  template <typename T>
  static T DX(T, T, T) {
    return T(1);
  }
  template <typename T>
  static T DY(T, T, T) {
    return T(1);
  }
};
struct SubG {
  template <typename T>
  static T DX(T, T, T) {
    return T(1);
  }
  template <typename T>
  static T DY(T, T, T) {
    return T(-1);
  }
};
struct MulG {
  template <typename T>
  static T DX(T, T y, T) {
    return y;
  }
  template <typename T>
  static T DY(T x, T, T) {
    return x;
  }
};
struct DivG {
  template <typename T>
  static T DX(T, T y, T) {
    return T(1) / y;
  }
  template <typename T>
  static T DY(T, T y, T out) {
    return -out / y;
  }
};
// The gradient goes to the larger (max) or smaller (min) operand; ties go to Y, as in Fluid.
struct MaxG {
  template <typename T>
  static T DX(T x, T y, T) {
    return x > y ? T(1) : T(0);
  }
  template <typename T>
  static T DY(T x, T y, T) {
    return x > y ? T(0) : T(1);
  }
};
struct MinG {
  template <typename T>
  static T DX(T x, T y, T) {
    return x < y ? T(1) : T(0);
  }
  template <typename T>
  static T DY(T x, T y, T) {
    return x < y ? T(0) : T(1);
  }
};
// d(x^y)/dx = y x^(y-1), d(x^y)/dy = x^y log(x) (Fluid's PowGradDX/DY); of complex values
// numpy's power, with complex_math.h's values at x = 0.
struct PowG {
  template <typename T>
  static T DX(T x, T y, T) {
    if constexpr (kIsComplex<T>)
      return PowDerivBase(x, y);
    else
      return y * std::pow(x, y - T(1));
  }
  template <typename T>
  static T DY(T x, T y, T) {
    if constexpr (kIsComplex<T>)
      return PowDerivExponent(x, y);
    else
      return std::pow(x, y) * std::log(x);
  }
};

// f(0) + ... + f(n - 1) in kLanes interleaved partial sums: one serial chain of float adds
// reassociated so that it vectorises (a conv bias's gradient sums oh * ow values per image).
template <typename F>
auto RunSum(int64_t n, F&& f) {
  using T = decltype(f(int64_t(0)));
  constexpr int64_t kLanes = 8;
  T part[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) part[l] += f(k + l);
  T acc = T(0);
  for (; k < n; ++k) acc += f(k);
  for (int64_t l = 0; l < kLanes; ++l) acc += part[l];
  return acc;
}

// dout times the conjugates of G's partials (for a real T, the partials themselves).
template <typename G>
struct Conjugated {
  template <typename T>
  static T DX(T x, T y, T o) {
    return ConjIfComplex(G::DX(x, y, o));
  }
  template <typename T>
  static T DY(T x, T y, T o) {
    return ConjIfComplex(G::DY(x, y, o));
  }
};

// The grads read their inputs through tide/ops/elementwise.hpp; dY is summed into (zeroed first),
// and dX too on the numpy path.
template <typename T, typename Partials>
void ElementwiseGradKernel(KernelContext& ctx) {
  using G = Conjugated<Partials>;
  const auto g = tide::ops::GetElementwiseGradArgs<T>(ctx);
  if (g.dy) std::fill(g.dy, g.dy + g.y_numel, T(0));
  if (g.numpy) {  // each input's gradient summed over its broadcast dims
    const NumpyBroadcast& nb = g.nb;
    if (g.dx) std::fill(g.dx, g.dx + g.x_numel, T(0));
    for (int64_t e = 0, xi, yi; e < nb.numel; ++e) {
      nb.Index(e, &xi, &yi);
      const T o = g.out ? g.out[e] : T(0);
      if (g.dx) g.dx[xi] += g.dout[e] * G::DX(g.x[xi], g.y[yi], o);
      if (g.dy) g.dy[yi] += g.dout[e] * G::DY(g.x[xi], g.y[yi], o);
    }
    return;
  }
  const Broadcast& b = g.b;
  if (b.general) {  // Y paired through the index; dY summed where Y is repeated
    const int64_t inner = b.index.InnerSize(), stride = b.index.InnerStride();
    for (int64_t row = 0, total = g.x_numel; row < total; row += inner) {
      const int64_t base = b.index(row);
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t e = row + k, j = base + k * stride;
        const T o = g.out ? g.out[e] : T(0);
        if (g.dx) g.dx[e] = g.dout[e] * G::DX(g.x[e], g.y[j], o);
        if (g.dy) g.dy[j] += g.dout[e] * G::DY(g.x[e], g.y[j], o);
      }
    }
    return;
  }
  if (!b.same && b.post == 1) {  // Y over X's trailing dims (a bias): row loops, vectorised
    for (int64_t i = 0; i < b.pre; ++i) {  // dY sums the rows in order, as the loop below does
      const int64_t row = i * b.n;
      const T* o = g.out ? g.out + row : nullptr;
      if (g.dx)
        for (int64_t j = 0; j < b.n; ++j)
          g.dx[row + j] = g.dout[row + j] * G::DX(g.x[row + j], g.y[j], o ? o[j] : T(0));
      if (g.dy)
        for (int64_t j = 0; j < b.n; ++j)
          g.dy[j] += g.dout[row + j] * G::DY(g.x[row + j], g.y[j], o ? o[j] : T(0));
    }
    return;
  }
  if (!b.same) {  // Y over X's middle dims (a conv's bias): dY sums each run of `post` elements
    // Threads take ranges of Y's elements, each summed in the serial order (same results)
    tide::ParallelFor(ctx, b.n, b.pre * b.post, [&](int64_t j0, int64_t j1) {
      for (int64_t i = 0; i < b.pre; ++i)
        for (int64_t j = j0; j < j1; ++j) {
          const T yv = g.y[j];
          const int64_t base = (i * b.n + j) * b.post;
          const T* o = g.out ? g.out + base : nullptr;
          if (g.dx)
            for (int64_t k = 0; k < b.post; ++k)
              g.dx[base + k] = g.dout[base + k] * G::DX(g.x[base + k], yv, o ? o[k] : T(0));
          if (g.dy)
            g.dy[j] += RunSum(b.post, [&](int64_t k) {
              return g.dout[base + k] * G::DY(g.x[base + k], yv, o ? o[k] : T(0));
            });
        }
    });
    return;
  }
  for (int64_t e = 0; e < g.x_numel; ++e) {  // same dims
    const T o = g.out ? g.out[e] : T(0);
    if (g.dx) g.dx[e] = g.dout[e] * G::DX(g.x[e], g.y[e], o);
    if (g.dy) g.dy[e] = g.dout[e] * G::DY(g.x[e], g.y[e], o);
  }
}

template <typename T>
void AddGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, AddG>(c);
}
template <typename T>
void SubGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, SubG>(c);
}
template <typename T>
void MulGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, MulG>(c);
}
template <typename T>
void DivGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, DivG>(c);
}
template <typename T>
void MaxGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, MaxG>(c);
}
template <typename T>
void MinGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, MinG>(c);
}
template <typename T>
void PowGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, PowG>(c);
}

// Paddle's multiply of bool tensors (RT-DETR's valid mask `(a > lo) * (a < hi)`): a logical
// and, broadcast as the other types.
struct AndF {
  static constexpr bool kExpr = false;
  static bool Fwd(bool x, bool y) { return x && y; }
};
template <typename T>
void BoolMulKernel(KernelContext& c) {
  tide::kernels::Elementwise<bool, AndF>(c);
}

// numpy's z ** w (complex_math.h), where std::pow differs: whole exponents by repeated products,
// 0 ** w.
struct ComplexPowF {
  static constexpr bool kExpr = false;
  template <typename T>
  static T Fwd(T x, T y) {
    return NumpyPow(x, y);
  }
};
template <typename T>
void ComplexPowKernel(KernelContext& c) {
  tide::kernels::Elementwise<T, ComplexPowF>(c);
}

// With unknown (-1) dims at compile time: Out's dims when the operands can only pair
// numpy-style (Y of higher rank, or a dim of 1 in X against a larger one in Y); a dim unknown
// on one side takes the other's when that is > 1.
std::optional<Dims> UnknownNumpyDims(const Dims& x, const Dims& y) {
  bool numpy = y.size() > x.size();
  const size_t r = std::max(x.size(), y.size());
  Dims out(r, 1);
  for (size_t i = r; i-- > 0;) {
    const int64_t a = i + x.size() >= r ? x[i + x.size() - r] : 1;
    const int64_t b = i + y.size() >= r ? y[i + y.size() - r] : 1;
    numpy = numpy || (a == 1 && b > 1);
    out[i] = (a > 1) ? a : (b > 1) ? b : (a < 0 || b < 0) ? -1 : 1;
  }
  if (!numpy) return std::nullopt;
  return out;
}

void ElementwiseShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  // Unknown (-1) dims are checked at run time.
  bool known = std::none_of(x.begin(), x.end(), [](int64_t d) { return d < 0; }) &&
               std::none_of(y.begin(), y.end(), [](int64_t d) { return d < 0; });
  const int axis = ctx.Attr<int32_t>("axis");
  if (known && NumpyPath(x, y, axis)) {  // Paddle 2.x's two-way broadcast
    ctx.SetOutputDims("Out", GetNumpyBroadcast(ctx.op_type(), x, y).out);
    ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
    return;
  }
  if (!known && axis == -1 && UnknownNumpyDims(x, y)) {  // checked when the kernel runs
    ctx.SetOutputDims("Out", UnknownNumpyDims(x, y).value());
    ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
    return;
  }
  if (known) GetBroadcast(ctx.op_type(), x, y, axis, true);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

void ElementwiseGradShape(tide::InferShapeContext& ctx) {
  for (const char* p : {"X", "Y"}) {
    std::string g = tide::GradVarName(p);
    if (ctx.HasOutput(g.c_str())) {
      ctx.SetOutputDims(g.c_str(), ctx.InputDims(p));
      ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(p));
    }
  }
}

// The backend hints Paddle 2.x programs carry on elementwise ops (its oneDNN kernel's int8
// scales, precision and layouts); none changes the result here.
tide::OpSchema PaddleHints(tide::OpSchema s) {
  return s.Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .Attr("Scale_x", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_y", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_out", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("x_data_format", std::string(""), "Paddle oneDNN layout hint (ignored)")
      .Attr("y_data_format", std::string(""), "Paddle oneDNN layout hint (ignored)");
}

tide::OpSchema ElementwiseBaseSchema(const std::string& type, const char* formula) {
  auto s =
      tide::OpSchema(type)
          .Comment(
              std::string("Out = ") + formula +
              ", Y broadcast over X: Y's dims match X's from `axis` (-1: the trailing dims), a "
              "Y dim of 1 being repeated.")
          .Input("X", "the first operand")
          .Input("Y", "the second operand, broadcast over X")
          .Output("Out", "same dims as X")
          .Attr("axis", int32_t(-1), "where Y's dims start in X's; -1 aligns the trailing dims")
          .InferShape(ElementwiseShape)
          .InPlace("X", "Out");
  return PaddleHints(s);
}

tide::OpSchema ElementwiseSchema(const std::string& type, const char* formula, bool grad_uses_out) {
  return ElementwiseBaseSchema(type, formula).Grad([type, grad_uses_out](tide::GradMaker& g) {
    auto op = g.NewOp(type + "_grad");
    op.Input("X", g.Input("X")).Input("Y", g.Input("Y"));
    if (grad_uses_out) op.Input("Out", g.Output("Out"));
    op.Input(tide::GradVarName("Out"), g.OutputGrad("Out"))
        .Output(tide::GradVarName("X"), g.InputGrad("X"))
        .Output(tide::GradVarName("Y"), g.InputGrad("Y"))
        .CopyAttrs();
  });
}

tide::OpSchema ElementwiseGradSchema(const std::string& type) {
  auto s = tide::OpSchema(type)
               .Input("X")
               .Input("Y")
               .Input("Out")
               .AsDispensable()
               .Input(tide::GradVarName("Out"))
               .Output(tide::GradVarName("X"))
               .AsDispensable()
               .Output(tide::GradVarName("Y"))
               .AsDispensable()
               .Attr("axis", int32_t(-1))
               .InferShape(ElementwiseGradShape);
  return PaddleHints(s);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ElementwiseSchema("elementwise_add", "X + Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_sub", "X - Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_mul", "X * Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_div", "X / Y", true));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_max", "max(X, Y)", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_min", "min(X, Y)", false));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_max_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_min_grad"));
TIDE_REGISTER_KERNEL("elementwise_max", "cpu", tide::kernels::ElementwiseMax,
                     OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min", "cpu", tide::kernels::ElementwiseMin,
                     OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_max_grad", "cpu", MaxGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min_grad", "cpu", MinGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_add_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_sub_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_mul_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_div_grad"));
// complex64 / complex128: numpy's complex arithmetic; the grads conjugate the partials.
TIDE_REGISTER_KERNEL("elementwise_add", "cpu", tide::kernels::ElementwiseAdd,
                     OPS_MATH_NUMERIC_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub", "cpu", tide::kernels::ElementwiseSub,
                     OPS_MATH_NUMERIC_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul", "cpu", tide::kernels::ElementwiseMul,
                     OPS_MATH_NUMERIC_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul", "cpu", BoolMulKernel, bool);
TIDE_REGISTER_KERNEL("elementwise_div", "cpu", tide::kernels::ElementwiseDiv,
                     OPS_MATH_NUMERIC_TYPES, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_add_grad", "cpu", AddGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub_grad", "cpu", SubGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul_grad", "cpu", MulGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_div_grad", "cpu", DivGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(ElementwiseSchema("elementwise_pow", "X ^ Y", false));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_pow_grad"));
TIDE_REGISTER_KERNEL("elementwise_pow", "cpu", tide::kernels::ElementwisePow,
                     OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_pow", "cpu", ComplexPowKernel, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("elementwise_pow_grad", "cpu", PowGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
// Piecewise constant in X and Y: no gradient, as in Fluid.
TIDE_REGISTER_OP(
    ElementwiseBaseSchema("elementwise_mod", "X mod Y (the sign of Y, Python's %)").NoGradient());
TIDE_REGISTER_OP(
    ElementwiseBaseSchema("elementwise_floordiv", "floor(X / Y) (Python's //)").NoGradient());
TIDE_REGISTER_KERNEL("elementwise_mod", "cpu", tide::kernels::ElementwiseMod,
                     OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_floordiv", "cpu", tide::kernels::ElementwiseFloorDiv,
                     OPS_MATH_NUMERIC_TYPES);

// Paddle's NaN-ignoring elementwise_fmax / elementwise_fmin (std::fmax / fmin: a NaN operand
// yields the other) and elementwise_heaviside (Y where X == 0, else the step of X).
namespace ops_math {
namespace {

struct FMaxF {
  static constexpr bool kExpr = false;
  template <typename T>
  static T Fwd(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return x > y ? x : y;
    else
      return std::fmax(x, y);
  }
};
struct FMinF {
  static constexpr bool kExpr = false;
  template <typename T>
  static T Fwd(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return x < y ? x : y;
    else
      return std::fmin(x, y);
  }
};
struct HeavisideF {
  static constexpr bool kExpr = false;
  template <typename T>
  static T Fwd(T x, T y) {
    return x == T(0) ? y : static_cast<T>(x > T(0));
  }
};
// Paddle's rule: X takes the gradient where x >= y (x <= y for fmin) or y is NaN, else Y.
struct FMaxG {
  template <typename T>
  static T DX(T x, T y, T) {
    return (x >= y || std::isnan(y)) ? T(1) : T(0);
  }
  template <typename T>
  static T DY(T x, T y, T o) {
    return T(1) - DX(x, y, o);
  }
};
struct FMinG {
  template <typename T>
  static T DX(T x, T y, T) {
    return (x <= y || std::isnan(y)) ? T(1) : T(0);
  }
  template <typename T>
  static T DY(T x, T y, T o) {
    return T(1) - DX(x, y, o);
  }
};
// Piecewise constant in X (Paddle's gradient is 0 there, the step's delta ignored); Out is Y
// where X == 0.
struct HeavisideG {
  template <typename T>
  static T DX(T, T, T) {
    return T(0);
  }
  template <typename T>
  static T DY(T x, T, T) {
    return x == T(0) ? T(1) : T(0);
  }
};

template <typename T>
void FMaxKernel(KernelContext& c) {
  tide::kernels::Elementwise<T, FMaxF>(c);
}
template <typename T>
void FMinKernel(KernelContext& c) {
  tide::kernels::Elementwise<T, FMinF>(c);
}
template <typename T>
void HeavisideKernel(KernelContext& c) {
  tide::kernels::Elementwise<T, HeavisideF>(c);
}
template <typename T>
void FMaxGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, FMaxG>(c);
}
template <typename T>
void FMinGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, FMinG>(c);
}
template <typename T>
void HeavisideGradKernel(KernelContext& c) {
  ElementwiseGradKernel<T, HeavisideG>(c);
}

}  // namespace
}  // namespace ops_math

TIDE_REGISTER_OP(ElementwiseSchema("elementwise_fmax", "fmax(X, Y) (a NaN operand: the other)",
                                   false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_fmin", "fmin(X, Y) (a NaN operand: the other)",
                                   false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_heaviside", "Y where X == 0, else (X > 0)", false));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_fmax_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_fmin_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_heaviside_grad"));
TIDE_REGISTER_KERNEL("elementwise_fmax", "cpu", FMaxKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_fmin", "cpu", FMinKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_heaviside", "cpu", HeavisideKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_fmax_grad", "cpu", FMaxGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_fmin_grad", "cpu", FMinGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_heaviside_grad", "cpu", HeavisideGradKernel,
                     OPS_MATH_FLOAT_TYPES);
