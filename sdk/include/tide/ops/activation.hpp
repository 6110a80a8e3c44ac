// tide/ops/activation.hpp: Fluid's activations as a table of functors, for every implementation
// of them (the CPU op pack registers the ops and CPU kernels from it, the CUDA plugin its
// kernels). Each functor has its op name, its formula (the op's comment), kDep (whether the grad
// op reads X or Out, as Fluid's grad op does), its float attributes with Fluid's defaults, and
// Fwd(x) / Bwd(v, dout) (v = X or Out per kDep), callable on the host and in CUDA device code.
#ifndef TIDE_OPS_ACTIVATION_HPP_
#define TIDE_OPS_ACTIVATION_HPP_

#include <math.h>

#include <tide/ops/host_device.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

enum ActDep { kDepX, kDepOut };

// A functor's attribute: read from a kernel's context; declared on its schema.
struct ActAttrSpec {
  const char* name;
  float default_value;
  const char* comment;
};

// The math the functors use, for float and double, on the host and on a CUDA device: the C
// library's functions, which nvcc's device code has too (std:: ones are host-only there).
namespace act_math {
#define TIDE_ACT_MATH(Name, fn)                                          \
  TIDE_OPS_HOST_DEVICE inline float Name(float x) { return ::fn##f(x); } \
  TIDE_OPS_HOST_DEVICE inline double Name(double x) { return ::fn(x); }
TIDE_ACT_MATH(Abs, fabs)
TIDE_ACT_MATH(Acos, acos)
TIDE_ACT_MATH(Asin, asin)
TIDE_ACT_MATH(Atan, atan)
TIDE_ACT_MATH(Ceil, ceil)
TIDE_ACT_MATH(Cos, cos)
TIDE_ACT_MATH(Erf, erf)
TIDE_ACT_MATH(Exp, exp)
TIDE_ACT_MATH(Expm1, expm1)
TIDE_ACT_MATH(Floor, floor)
TIDE_ACT_MATH(Log, log)
TIDE_ACT_MATH(Log1p, log1p)
TIDE_ACT_MATH(Round, round)
TIDE_ACT_MATH(Sin, sin)
TIDE_ACT_MATH(Sqrt, sqrt)
TIDE_ACT_MATH(Tanh, tanh)
#undef TIDE_ACT_MATH
TIDE_OPS_HOST_DEVICE inline float Pow(float x, float y) { return ::powf(x, y); }
TIDE_OPS_HOST_DEVICE inline double Pow(double x, double y) { return ::pow(x, y); }
// std::max / std::min's exact choices (NaN handling included), without their host-only code.
template <typename T>
TIDE_OPS_HOST_DEVICE T Max(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
TIDE_OPS_HOST_DEVICE T Min(T a, T b) {
  return b < a ? b : a;
}

template <typename T>
TIDE_OPS_HOST_DEVICE T Sigm(T x) {
  return T(1) / (T(1) + Exp(-x));
}
// log(1 + exp(x)) without overflow.
template <typename T>
TIDE_OPS_HOST_DEVICE T Softplus(T x) {
  return Max(x, T(0)) + Log1p(Exp(-Abs(x)));
}
}  // namespace act_math

// Each functor: kName, kFormula, kDep, kAttrs (up to 3), a constructor from the attribute values
// (as float, in kAttrs order), Fwd(x) and Bwd(v, dout) with v = X or Out per kDep.
// The attribute-less functors differ only in their formulas: a macro keeps each one line long.
#define TIDE_SIMPLE_ACT(Cls, name, formula, dep, fwd, bwd)  \
  struct Cls {                                              \
    static constexpr const char* kName = name;              \
    static constexpr const char* kFormula = formula;        \
    static constexpr ActDep kDep = dep;                     \
    static constexpr int kNumAttrs = 0;                     \
    static constexpr ActAttrSpec kAttrs[1] = {{"", 0, ""}}; \
    TIDE_OPS_HOST_DEVICE explicit Cls(const float*) {}      \
    template <typename T>                                   \
    TIDE_OPS_HOST_DEVICE T Fwd(T x) const {                 \
      using namespace act_math;                             \
      return fwd;                                           \
    }                                                       \
    template <typename T>                                   \
    TIDE_OPS_HOST_DEVICE T Bwd(T v, T g) const {            \
      using namespace act_math;                             \
      (void)v;                                              \
      return bwd;                                           \
    }                                                       \
  };

TIDE_SIMPLE_ACT(ReluAct, "relu", "max(X, 0)", kDepOut, x > T(0) ? x : T(0), v > T(0) ? g : T(0))
TIDE_SIMPLE_ACT(SigmoidAct, "sigmoid", "1 / (1 + exp(-X))", kDepOut, Sigm(x), g* v*(T(1) - v))
TIDE_SIMPLE_ACT(TanhAct, "tanh", "tanh(X)", kDepOut, Tanh(x), g*(T(1) - v * v))
TIDE_SIMPLE_ACT(SquareAct, "square", "X^2", kDepX, x* x, g* T(2) * v)
TIDE_SIMPLE_ACT(AbsAct, "abs", "|X|", kDepX, Abs(x), v > T(0) ? g : (v < T(0) ? -g : T(0)))
TIDE_SIMPLE_ACT(AcosAct, "acos", "acos(X)", kDepX, Acos(x), -g / Sqrt(T(1) - v * v))
TIDE_SIMPLE_ACT(AsinAct, "asin", "asin(X)", kDepX, Asin(x), g / Sqrt(T(1) - v * v))
TIDE_SIMPLE_ACT(AtanAct, "atan", "atan(X)", kDepX, Atan(x), g / (T(1) + v * v))
TIDE_SIMPLE_ACT(CosAct, "cos", "cos(X)", kDepX, Cos(x), -g* Sin(v))
TIDE_SIMPLE_ACT(SinAct, "sin", "sin(X)", kDepX, Sin(x), g* Cos(v))
TIDE_SIMPLE_ACT(ExpAct, "exp", "exp(X)", kDepOut, Exp(x), g* v)
TIDE_SIMPLE_ACT(LogAct, "log", "ln(X)", kDepX, Log(x), g / v)
TIDE_SIMPLE_ACT(ReciprocalAct, "reciprocal", "1 / X", kDepOut, T(1) / x, -g* v* v)
TIDE_SIMPLE_ACT(RsqrtAct, "rsqrt", "1 / sqrt(X)", kDepOut, T(1) / Sqrt(x), T(-0.5) * g * v * v * v)
// Piecewise constant: the gradient is 0 (Fluid's ZeroGradFunctor). round: half away from zero.
TIDE_SIMPLE_ACT(CeilAct, "ceil", "ceil(X)", kDepX, Ceil(x), T(0))
TIDE_SIMPLE_ACT(FloorAct, "floor", "floor(X)", kDepX, Floor(x), T(0))
TIDE_SIMPLE_ACT(LogSigmoidAct, "logsigmoid", "log(1 / (1 + exp(-X)))", kDepX, -Softplus(-x),
                g* Sigm(-v))
TIDE_SIMPLE_ACT(SoftsignAct, "softsign", "X / (1 + |X|)", kDepX, x / (T(1) + Abs(x)),
                g / ((T(1) + Abs(v)) * (T(1) + Abs(v))))
TIDE_SIMPLE_ACT(TanhShrinkAct, "tanh_shrink", "X - tanh(X)", kDepX, x - Tanh(x),
                g* Tanh(v) * Tanh(v))
#undef TIDE_SIMPLE_ACT

// Functors with attributes: the constructor takes their values in kAttrs order.
#define TIDE_ACT_HEAD(name, formula, dep, n)       \
  static constexpr const char* kName = name;       \
  static constexpr const char* kFormula = formula; \
  static constexpr ActDep kDep = dep;              \
  static constexpr int kNumAttrs = n;

// round (Paddle 3.x's decimals: an int in Paddle, a whole float here): half away from 0, as
// Paddle's; decimals < 0 rounds to tens, hundreds, ...
struct RoundAct {
  TIDE_ACT_HEAD("round", "round(X * 10^decimals) / 10^decimals, halves away from 0", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"decimals", 0.0f, "the decimal places kept"}};
  int decimals;
  TIDE_OPS_HOST_DEVICE explicit RoundAct(const float* a) : decimals(int(a[0])) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    if (decimals == 0) return act_math::Round(x);
    T p = T(1);  // Paddle's: multiply by 10^d for d > 0, divide by 10^-d for d < 0
    for (int i = 0; i < (decimals > 0 ? decimals : -decimals); ++i) p *= T(10);
    return decimals > 0 ? act_math::Round(x * p) / p : act_math::Round(x / p) * p;
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T, T) const {
    return T(0);
  }
};
// softplus with Paddle's beta and threshold: X where beta * X > threshold, else
// log(1 + exp(beta * X)) / beta.
struct SoftplusAct {
  TIDE_ACT_HEAD("softplus", "beta * X > threshold ? X : log(1 + exp(beta * X)) / beta", kDepX, 2)
  static constexpr ActAttrSpec kAttrs[2] = {{"beta", 1.0f, "the sharpness"},
                                            {"threshold", 20.0f, "beta * X above it: X itself"}};
  float beta, threshold;
  TIDE_OPS_HOST_DEVICE explicit SoftplusAct(const float* a) : beta(a[0]), threshold(a[1]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    const T bx = T(beta) * x;
    return bx > T(threshold) ? x : act_math::Softplus(bx) / T(beta);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    const T bx = T(beta) * x;
    return bx > T(threshold) ? g : g * act_math::Sigm(bx);
  }
};
struct BReluAct {
  TIDE_ACT_HEAD("brelu", "min(max(X, t_min), t_max)", kDepX, 2)
  static constexpr ActAttrSpec kAttrs[2] = {{"t_min", 0.0f, "lower bound"},
                                            {"t_max", 24.0f, "upper bound"}};
  float lo, hi;
  TIDE_OPS_HOST_DEVICE explicit BReluAct(const float* a) : lo(a[0]), hi(a[1]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return act_math::Min(act_math::Max(x, T(lo)), T(hi));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return (x > T(lo) && x < T(hi)) ? g : T(0);
  }
};
struct EluAct {
  TIDE_ACT_HEAD("elu", "X > 0 ? X : alpha * (exp(X) - 1)", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"alpha", 1.0f, "the scale of the negative part"}};
  float alpha;
  TIDE_OPS_HOST_DEVICE explicit EluAct(const float* a) : alpha(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x > T(0) ? x : T(alpha) * act_math::Expm1(x);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return x > T(0) ? g : g * T(alpha) * act_math::Exp(x);
  }
};
struct HardShrinkAct {
  TIDE_ACT_HEAD("hard_shrink", "|X| > threshold ? X : 0", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"threshold", 0.5f, "values within it become 0"}};
  float t;
  TIDE_OPS_HOST_DEVICE explicit HardShrinkAct(const float* a) : t(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return (x < T(-t) || x > T(t)) ? x : T(0);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return (x < T(-t) || x > T(t)) ? g : T(0);
  }
};
struct HardSigmoidAct {
  TIDE_ACT_HEAD("hard_sigmoid", "clip(slope * X + offset, 0, 1)", kDepOut, 2)
  static constexpr ActAttrSpec kAttrs[2] = {{"slope", 0.2f, "the slope"},
                                            {"offset", 0.5f, "the offset"}};
  float slope, offset;
  TIDE_OPS_HOST_DEVICE explicit HardSigmoidAct(const float* a) : slope(a[0]), offset(a[1]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return act_math::Min(act_math::Max(T(slope) * x + T(offset), T(0)), T(1));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T out, T g) const {
    return (out > T(0) && out < T(1)) ? g * T(slope) : T(0);
  }
};
// Fluid's grad is 1 where X + offset >= threshold; the true derivative, used here, is
// threshold / scale (the same for the defaults).
struct HardSwishAct {
  TIDE_ACT_HEAD("hard_swish", "X * min(max(X + offset, 0), threshold) / scale", kDepX, 3)
  static constexpr ActAttrSpec kAttrs[3] = {{"threshold", 6.0f, "the cap of X + offset"},
                                            {"scale", 6.0f, "the divisor"},
                                            {"offset", 3.0f, "added to X"}};
  float t, s, o;
  TIDE_OPS_HOST_DEVICE explicit HardSwishAct(const float* a) : t(a[0]), s(a[1]), o(a[2]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x * act_math::Min(act_math::Max(x + T(o), T(0)), T(t)) / T(s);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    if (x + T(o) <= T(0)) return T(0);
    if (x + T(o) >= T(t)) return g * T(t) / T(s);
    return g * (T(2) * x + T(o)) / T(s);
  }
};
struct LeakyReluAct {
  TIDE_ACT_HEAD("leaky_relu", "X > 0 ? X : alpha * X", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"alpha", 0.02f, "the slope for X <= 0"}};
  float alpha;
  TIDE_OPS_HOST_DEVICE explicit LeakyReluAct(const float* a) : alpha(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x > T(0) ? x : T(alpha) * x;
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return x > T(0) ? g : T(alpha) * g;
  }
};
struct PowAct {
  TIDE_ACT_HEAD("pow", "X ^ factor", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"factor", 1.0f, "the exponent"}};
  float factor;
  TIDE_OPS_HOST_DEVICE explicit PowAct(const float* a) : factor(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    // x * x is pow's correctly rounded square, bit for bit, without a pow call per element
    // (RMSNorm's x^2: 5% of a LLaMA prefill on the plain kernels).
    return factor == 2.0f ? x * x : act_math::Pow(x, T(factor));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return g * T(factor) * act_math::Pow(x, T(factor) - T(1));
  }
};
struct Relu6Act {
  TIDE_ACT_HEAD("relu6", "min(max(X, 0), threshold)", kDepOut, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"threshold", 6.0f, "the cap"}};
  float t;
  TIDE_OPS_HOST_DEVICE explicit Relu6Act(const float* a) : t(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return act_math::Min(act_math::Max(x, T(0)), T(t));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T out, T g) const {
    return (out > T(0) && out < T(t)) ? g : T(0);
  }
};
struct SoftReluAct {
  TIDE_ACT_HEAD("soft_relu", "log(1 + exp(clip(X, -threshold, threshold)))", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"threshold", 40.0f, "X is clipped to +-threshold"}};
  float t;
  TIDE_OPS_HOST_DEVICE explicit SoftReluAct(const float* a) : t(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return act_math::Softplus(act_math::Min(act_math::Max(x, T(-t)), T(t)));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return (x > T(-t) && x < T(t)) ? g * act_math::Sigm(x) : T(0);
  }
};
struct SoftShrinkAct {
  TIDE_ACT_HEAD("softshrink", "X - lambda (X > lambda), X + lambda (X < -lambda), else 0", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"lambda", 0.5f, "the shrinkage"}};
  float l;
  TIDE_OPS_HOST_DEVICE explicit SoftShrinkAct(const float* a) : l(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x > T(l) ? x - T(l) : (x < T(-l) ? x + T(l) : T(0));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return (x > T(l) || x < T(-l)) ? g : T(0);
  }
};
struct STanhAct {
  TIDE_ACT_HEAD("stanh", "scale_b * tanh(scale_a * X)", kDepX, 2)
  static constexpr ActAttrSpec kAttrs[2] = {{"scale_a", 0.67f, "the input scale"},
                                            {"scale_b", 1.7159f, "the output scale"}};
  float a, b;
  TIDE_OPS_HOST_DEVICE explicit STanhAct(const float* v) : a(v[0]), b(v[1]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return T(b) * act_math::Tanh(T(a) * x);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    const T t = act_math::Tanh(T(a) * x);
    return g * T(a) * T(b) * (T(1) - t * t);
  }
};
struct SwishAct {
  TIDE_ACT_HEAD("swish", "X * sigmoid(beta * X)", kDepX, 1)
  static constexpr ActAttrSpec kAttrs[1] = {{"beta", 1.0f, "the sigmoid's scale"}};
  float beta;
  TIDE_OPS_HOST_DEVICE explicit SwishAct(const float* a) : beta(a[0]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x * act_math::Sigm(T(beta) * x);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    const T s = act_math::Sigm(T(beta) * x);
    return g * (s + T(beta) * x * s * (T(1) - s));
  }
};
// Paddle 3.x's thresholded_relu has `value` (what replaces X up to the threshold; 2.x: 0).
struct ThresholdedReluAct {
  TIDE_ACT_HEAD("thresholded_relu", "X > threshold ? X : value", kDepX, 2)
  static constexpr ActAttrSpec kAttrs[2] = {{"threshold", 1.0f, "values up to it become `value`"},
                                            {"value", 0.0f, "what replaces them"}};
  float t, value;
  TIDE_OPS_HOST_DEVICE explicit ThresholdedReluAct(const float* a) : t(a[0]), value(a[1]) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    return x > T(t) ? x : T(value);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    return x > T(t) ? g : T(0);
  }
};
#undef TIDE_ACT_HEAD

// gelu's `approximate` is a bool attribute, unlike the float ones above (kBoolAttr names it).
struct GeluAct {
  static constexpr const char* kName = "gelu";
  static constexpr const char* kFormula =
      "0.5 X (1 + erf(X / sqrt(2))), or with approximate 0.5 X (1 + tanh(sqrt(2 / pi) (X + "
      "0.044715 X^3)))";
  static constexpr ActDep kDep = kDepX;
  static constexpr const char* kBoolAttr = "approximate";
  bool approximate;
  TIDE_OPS_HOST_DEVICE explicit GeluAct(bool approx) : approximate(approx) {}
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Fwd(T x) const {
    using namespace act_math;
    if (approximate) return T(0.5) * x * (T(1) + Tanh(kC<T>() * (x + T(0.044715) * x * x * x)));
    return T(0.5) * x * (T(1) + Erf(x / Sqrt(T(2))));
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE T Bwd(T x, T g) const {
    using namespace act_math;
    if (approximate) {
      const T inner = kC<T>() * (x + T(0.044715) * x * x * x);
      const T t = Tanh(inner);
      const T dinner = kC<T>() * (T(1) + T(3 * 0.044715) * x * x);
      return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner);
    }
    const T cdf = T(0.5) * (T(1) + Erf(x / Sqrt(T(2))));
    const T pdf = Exp(T(-0.5) * x * x) / Sqrt(T(2) * kPi<T>());
    return g * (cdf + x * pdf);
  }
  // M_PI is POSIX's.
  template <typename T>
  TIDE_OPS_HOST_DEVICE static T kPi() {
    return T(3.14159265358979323846);
  }
  template <typename T>
  TIDE_OPS_HOST_DEVICE static T kC() {
    return act_math::Sqrt(T(2) / kPi<T>());
  }
};

// The name of the input a grad kernel reads: "X" or "Out".
template <typename F>
constexpr const char* ActGradFrom() {
  return F::kDep == kDepX ? "X" : "Out";
}

// pow's exponent: FactorTensor's one float32 / float64 value (Fluid 1.8's input, over the
// attribute) or `factor`. `read` copies the value from the input's place (int_inputs.hpp).
template <typename Read = ReadOnHost>
float PowFactor(const KernelContext& ctx, Read read = {}) {
  if (ctx.HasInput("FactorTensor"))
    return static_cast<float>(FloatScalar(ctx, "FactorTensor", read));
  return ctx.Attr<float>("factor");
}

// A functor made from a kernel's attributes (any implementation's kernel); `read` as PowFactor's.
template <typename F, typename Read = ReadOnHost>
F MakeActivation(const KernelContext& ctx, Read read = {}) {
  if constexpr (std::is_same_v<F, GeluAct>) {
    return GeluAct(ctx.Attr<bool>(GeluAct::kBoolAttr));
  } else if constexpr (std::is_same_v<F, PowAct>) {
    const float factor[1] = {PowFactor(ctx, read)};
    return PowAct(factor);
  } else {
    float a[F::kNumAttrs > 0 ? F::kNumAttrs : 1] = {};
    for (int i = 0; i < F::kNumAttrs; ++i) a[i] = ctx.Attr<float>(F::kAttrs[i].name);
    return F(a);
  }
}

// visit(ActTag<F>{}) for every functor F of the table: what an implementation registers its
// kernels with.
template <typename F>
struct ActTag {
  using type = F;
};
template <typename Visit>
void ForEachActivation(Visit&& visit) {
  [&](auto... tags) {
    (visit(tags), ...);
  }(ActTag<ReluAct>{}, ActTag<SigmoidAct>{}, ActTag<TanhAct>{}, ActTag<SquareAct>{},
    ActTag<AbsAct>{}, ActTag<AcosAct>{}, ActTag<AsinAct>{}, ActTag<AtanAct>{}, ActTag<CosAct>{},
    ActTag<SinAct>{}, ActTag<ExpAct>{}, ActTag<LogAct>{}, ActTag<ReciprocalAct>{},
    ActTag<RsqrtAct>{}, ActTag<CeilAct>{}, ActTag<FloorAct>{}, ActTag<RoundAct>{},
    ActTag<LogSigmoidAct>{}, ActTag<SoftplusAct>{}, ActTag<SoftsignAct>{}, ActTag<TanhShrinkAct>{},
    ActTag<BReluAct>{}, ActTag<EluAct>{}, ActTag<HardShrinkAct>{}, ActTag<HardSigmoidAct>{},
    ActTag<HardSwishAct>{}, ActTag<LeakyReluAct>{}, ActTag<PowAct>{}, ActTag<Relu6Act>{},
    ActTag<SoftReluAct>{}, ActTag<SoftShrinkAct>{}, ActTag<STanhAct>{}, ActTag<SwishAct>{},
    ActTag<ThresholdedReluAct>{}, ActTag<GeluAct>{});
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ACTIVATION_HPP_
