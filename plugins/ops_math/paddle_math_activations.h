// paddle_math_activations.h: Paddle 2.x's elementwise math ops (log1p ... digamma) in the functor
// form of tide/ops/activation.hpp, registered by activation_ops.cc with CPU kernels only, as
// paddle_activations.h's. Each grad reads X or Out as Paddle's grad op does (kDep); trunc's
// gradient is 0. The special functions compute in double (special_math.h).
#pragma once

#include <cmath>
#include <limits>
#include <tide/ops/activation.hpp>

#include "special_math.h"

namespace ops_math {

// An attribute-less functor: its formulas in one line (x: X; v: X or Out per dep; g: Out@GRAD).
#define OPS_MATH_ACT(Cls, name, formula, dep, fwd, bwd)                \
  struct Cls {                                                         \
    static constexpr const char* kName = name;                         \
    static constexpr const char* kFormula = formula;                   \
    static constexpr tide::ops::ActDep kDep = tide::ops::dep;          \
    static constexpr int kNumAttrs = 0;                                \
    static constexpr tide::ops::ActAttrSpec kAttrs[1] = {{"", 0, ""}}; \
    explicit Cls(const float*) {}                                      \
    template <typename T>                                              \
    T Fwd(T x) const {                                                 \
      return fwd;                                                      \
    }                                                                  \
    template <typename T>                                              \
    T Bwd(T v, T g) const {                                            \
      (void)v;                                                         \
      return bwd;                                                      \
    }                                                                  \
  };

OPS_MATH_ACT(Log1pAct, "log1p", "ln(1 + X)", kDepX, std::log1p(x), g / (T(1) + v))
OPS_MATH_ACT(Expm1Act, "expm1", "exp(X) - 1", kDepOut, std::expm1(x), g* v + g)
OPS_MATH_ACT(SinhAct, "sinh", "sinh(X)", kDepX, std::sinh(x), g* std::cosh(v))
OPS_MATH_ACT(CoshAct, "cosh", "cosh(X)", kDepX, std::cosh(x), g* std::sinh(v))
OPS_MATH_ACT(AsinhAct, "asinh", "asinh(X)", kDepX, std::asinh(x), g / std::sqrt(v * v + T(1)))
OPS_MATH_ACT(AcoshAct, "acosh", "acosh(X)", kDepX, std::acosh(x), g / std::sqrt(v * v - T(1)))
OPS_MATH_ACT(AtanhAct, "atanh", "atanh(X)", kDepX, std::atanh(x), g / (T(1) - v * v))
OPS_MATH_ACT(TruncAct, "trunc", "X rounded towards 0", kDepX, std::trunc(x), T(0))
OPS_MATH_ACT(ErfinvAct, "erfinv", "erf^-1(X)", kDepOut, T(special::Erfinv(double(x))),
             g* T(0.88622692545275801) * std::exp(v * v))  // sqrt(pi) / 2
OPS_MATH_ACT(LgammaAct, "lgamma", "ln|gamma(X)|", kDepX, T(special::Lgamma(double(x))),
             g* T(special::Digamma(double(v))))
OPS_MATH_ACT(DigammaAct, "digamma", "d/dX ln gamma(X)", kDepX, T(special::Digamma(double(x))),
             g* T(special::Trigamma(double(v))))
// tan, log2, log10 (Paddle's pd_op.tan / log2 / log10) and frac (paddle.frac, which Paddle
// itself builds from trunc and subtract; gradient 1, as X - trunc(X)'s).
OPS_MATH_ACT(TanAct, "tan", "tan(X)", kDepX, std::tan(x), g / (std::cos(v) * std::cos(v)))
OPS_MATH_ACT(Log2Act, "log2", "log2(X)", kDepX, std::log2(x), g / (v * T(0.69314718055994531)))
OPS_MATH_ACT(Log10Act, "log10", "log10(X)", kDepX, std::log10(x), g / (v * T(2.3025850929940457)))
OPS_MATH_ACT(FracAct, "frac", "X - trunc(X)", kDepX, x - std::trunc(x), g)
#undef OPS_MATH_ACT

// selu (F.selu, nn.SELU): scale * (X > 0 ? X : alpha * (exp(X) - 1)); its grad reads Out.
struct SeluAct {
  static constexpr const char* kName = "selu";
  static constexpr const char* kFormula = "scale * (X > 0 ? X : alpha * (exp(X) - 1))";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepOut;
  static constexpr int kNumAttrs = 2;
  static constexpr tide::ops::ActAttrSpec kAttrs[2] = {
      {"scale", 1.0507009873554804934193349852946f, "the factor of both parts"},
      {"alpha", 1.6732632423543772848170429916717f, "the scale of the negative part"}};
  float scale, alpha;
  explicit SeluAct(const float* a) : scale(a[0]), alpha(a[1]) {}
  template <typename T>
  T Fwd(T x) const {
    return T(scale) * (x > T(0) ? x : T(alpha) * std::exp(x) - T(alpha));
  }
  template <typename T>
  T Bwd(T out, T g) const {  // Paddle's: from Out, scale * alpha * exp(X) = Out + scale * alpha
    return out > T(0) ? g * T(scale) : g * (out + T(scale) * T(alpha));
  }
};

// celu (F.celu, nn.CELU): X < 0 ? alpha * (exp(X / alpha) - 1) : X.
struct CeluAct {
  static constexpr const char* kName = "celu";
  static constexpr const char* kFormula = "X < 0 ? alpha * (exp(X / alpha) - 1) : X";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepX;
  static constexpr int kNumAttrs = 1;
  static constexpr tide::ops::ActAttrSpec kAttrs[1] = {
      {"alpha", 1.0f, "the scale of the negative part (not 0)"}};
  float alpha;
  explicit CeluAct(const float* a) : alpha(a[0]) {}
  template <typename T>
  T Fwd(T x) const {
    return x < T(0) ? T(alpha) * (std::exp(x / T(alpha)) - T(1)) : x;
  }
  template <typename T>
  T Bwd(T x, T g) const {
    return x > T(0) ? g : g * std::exp(x / T(alpha));
  }
};

// logit (paddle.logit): ln(p / (1 - p)), p = X clipped to [eps, 1 - eps] (Paddle's rule); with
// eps 0, NaN outside [0, 1]. The gradient is 0 outside [eps, 1 - eps].
struct LogitAct {
  static constexpr const char* kName = "logit";
  static constexpr const char* kFormula = "ln(p / (1 - p)), p = X clipped to [eps, 1 - eps]";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepX;
  static constexpr int kNumAttrs = 1;
  static constexpr tide::ops::ActAttrSpec kAttrs[1] = {
      {"eps", 1e-6f, "X is clipped to [eps, 1 - eps]; 0: not clipped"}};
  float eps;
  explicit LogitAct(const float* a) : eps(a[0]) {}
  template <typename T>
  T Fwd(T x) const {
    if (eps == 0.0f && (x < T(0) || x > T(1))) return std::numeric_limits<T>::quiet_NaN();
    const T lo = T(eps), hi = T(1.0 - eps);
    const T p = x < lo ? lo : (x > hi ? hi : x);
    return std::log(p / (T(1) - p));
  }
  template <typename T>
  T Bwd(T x, T g) const {
    return (x < T(eps) || x > T(1.0 - eps)) ? T(0) : g / ((T(1) - x) * x);
  }
};

}  // namespace ops_math
