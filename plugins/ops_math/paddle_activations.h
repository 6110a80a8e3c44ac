// paddle_activations.h: Paddle 2.x activations in the functor form of tide/ops/activation.hpp,
// registered by activation_ops.cc with CPU kernels only (they are not in the SDK's table, which
// every device's plugin registers kernels from).
#pragma once

#include <tide/ops/activation.hpp>

namespace ops_math {

// silu (F.silu, nn.SiLU): X * sigmoid(X).
struct SiluAct {
  static constexpr const char* kName = "silu";
  static constexpr const char* kFormula = "X * sigmoid(X)";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepX;
  static constexpr int kNumAttrs = 0;
  static constexpr tide::ops::ActAttrSpec kAttrs[1] = {{"", 0, ""}};
  explicit SiluAct(const float*) {}
  template <typename T>
  T Fwd(T x) const {
    return x * tide::ops::act_math::Sigm(x);
  }
  template <typename T>
  T Bwd(T x, T g) const {
    const T s = tide::ops::act_math::Sigm(x);
    return g * s * (T(1) + x * (T(1) - s));
  }
};

// mish (F.mish, nn.Mish): X * tanh(softplus(X)), softplus(X) taken as X above `threshold`
// (Paddle's rule, and its gradient's).
struct MishAct {
  static constexpr const char* kName = "mish";
  static constexpr const char* kFormula = "X * tanh(sp), sp = X > threshold ? X : log(1 + exp(X))";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepX;
  static constexpr int kNumAttrs = 1;
  static constexpr tide::ops::ActAttrSpec kAttrs[1] = {
      {"threshold", 20.0f, "above it softplus(X) is taken as X"}};
  float t;
  explicit MishAct(const float* a) : t(a[0]) {}
  template <typename T>
  T Sp(T x) const {
    return x > T(t) ? x : tide::ops::act_math::Softplus(x);
  }
  template <typename T>
  T Fwd(T x) const {
    return x * tide::ops::act_math::Tanh(Sp(x));
  }
  template <typename T>
  T Bwd(T x, T g) const {
    using namespace tide::ops::act_math;
    const T sp = Sp(x);
    const T tsp = Tanh(sp);
    const T gsp = T(1) - Exp(-sp);  // d softplus / dX = sigmoid(X) = 1 - exp(-softplus(X))
    return g * (tsp + x * (T(1) - tsp * tsp) * gsp);
  }
};

// erf (paddle.erf): the error function; dX = 2 / sqrt(pi) exp(-X^2) dOut.
struct ErfAct {
  static constexpr const char* kName = "erf";
  static constexpr const char* kFormula = "erf(X)";
  static constexpr tide::ops::ActDep kDep = tide::ops::kDepX;
  static constexpr int kNumAttrs = 0;
  static constexpr tide::ops::ActAttrSpec kAttrs[1] = {{"", 0, ""}};
  explicit ErfAct(const float*) {}
  template <typename T>
  T Fwd(T x) const {
    return tide::ops::act_math::Erf(x);
  }
  template <typename T>
  T Bwd(T x, T g) const {
    return g * T(1.1283791670955126) * tide::ops::act_math::Exp(-x * x);  // 2 / sqrt(pi)
  }
};

}  // namespace ops_math
