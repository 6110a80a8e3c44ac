// tide/kernels/fused_activation.hpp: the activation of Paddle's fusion ops (fc, fused_conv2d:
// fuse_activation, fuse_alpha, fuse_beta), computed by the standalone activation ops' functors
// (tide/ops/activation.hpp) so a fused activation gives the unfused op's values.
//
// alpha / beta mean what Paddle's oneDNN kernel makes of them (its eltwise post-op's alpha and
// beta; Paddle's conv_activation_mkldnn_fuse_pass writes them from the activation's attributes):
//   relu, leaky_relu     X > 0 ? X : alpha X            (relu: alpha = 0)
//   relu6, clip          min(max(X, alpha), beta)       (relu6: alpha = 0, beta = threshold)
//   swish                X sigmoid(alpha X)             (alpha = swish's beta)
//   hard_sigmoid         min(max(alpha X + beta, 0), 1) (slope, offset)
//   hard_swish           X min(max(alpha X + beta, 0), 1) (Fluid's defaults: 1/6, 1/2)
//   sigmoid, tanh, abs, sqrt, mish, gelu (= gelu_erf), gelu_tanh: no parameter.
// Paddle before its oneDNN 3 upgrade wrote relu6's threshold to alpha (beta 0) and left
// hard_swish's alpha = beta = 0 (oneDNN 2's fixed hardswish): those degenerate encodings read
// as the older ones.
#ifndef TIDE_KERNELS_FUSED_ACTIVATION_HPP_
#define TIDE_KERNELS_FUSED_ACTIVATION_HPP_

#include <string>
#include <tide/ops/activation.hpp>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace tide {
namespace kernels {

enum class FusedAct {
  kNone,
  kLeakyRelu,
  kClip,
  kSwish,
  kHardSigmoid,
  kHardSwish,
  kSigmoid,
  kTanh,
  kAbs,
  kSqrt,
  kMish,
  kGeluErf,
  kGeluTanh
};

// Paddle's fuse_activation names ("" and "identity": none).
inline const std::vector<std::pair<std::string, FusedAct>>& FusedActNames() {
  static const std::vector<std::pair<std::string, FusedAct>> names = {
      {"", FusedAct::kNone},
      {"identity", FusedAct::kNone},
      {"relu", FusedAct::kLeakyRelu},
      {"leaky_relu", FusedAct::kLeakyRelu},
      {"relu6", FusedAct::kClip},
      {"clip", FusedAct::kClip},
      {"swish", FusedAct::kSwish},
      {"hard_sigmoid", FusedAct::kHardSigmoid},
      {"hard_swish", FusedAct::kHardSwish},
      {"sigmoid", FusedAct::kSigmoid},
      {"tanh", FusedAct::kTanh},
      {"abs", FusedAct::kAbs},
      {"sqrt", FusedAct::kSqrt},
      {"mish", FusedAct::kMish},
      {"gelu", FusedAct::kGeluErf},
      {"gelu_erf", FusedAct::kGeluErf},
      {"gelu_tanh", FusedAct::kGeluTanh}};
  return names;
}

inline std::vector<std::string> FusedActNameList() {
  std::vector<std::string> v;
  for (const auto& n : FusedActNames()) v.push_back(n.first);
  return v;
}

struct FusedActParams {
  FusedAct act = FusedAct::kNone;
  float alpha = 0, beta = 0;
  // relu itself (leaky_relu with no slope), which kernels apply in their vector registers.
  bool IsRelu() const { return act == FusedAct::kLeakyRelu && alpha == 0; }
};

// Activation `name` (one of FusedActNames) with Paddle's alpha / beta.
inline FusedActParams FusedActOf(const std::string& name, float alpha, float beta) {
  FusedActParams a;
  for (const auto& n : FusedActNames())
    if (n.first == name) a.act = n.second;
  a.alpha = alpha;
  a.beta = beta;
  if (name == "relu6" && a.beta == 0 && a.alpha > 0) a = {FusedAct::kClip, 0, a.alpha};
  if (a.act == FusedAct::kHardSwish && a.alpha == 0 && a.beta == 0)
    a = {FusedAct::kHardSwish, 1.0f / 6, 0.5f};
  return a;
}

// The op's activation (its schema has checked the name); fuse_relu is Paddle's older relu flag.
inline FusedActParams GetFusedAct(const KernelContext& ctx) {
  FusedActParams a = FusedActOf(ctx.Attr<std::string>("fuse_activation"),
                                ctx.Attr<float>("fuse_alpha"), ctx.Attr<float>("fuse_beta"));
  if (a.act == FusedAct::kNone && ctx.Attr<bool>("fuse_relu")) a = {FusedAct::kLeakyRelu, 0, 0};
  return a;
}

namespace fused_act {
using namespace tide::ops;  // NOLINT: the functors
struct Identity {
  template <typename T>
  T Fwd(T x) const {
    return x;
  }
};
struct Sqrt {
  template <typename T>
  T Fwd(T x) const {
    return act_math::Sqrt(x);
  }
};
// mish: X tanh(softplus(X)) (no standalone op in Tide).
struct Mish {
  template <typename T>
  T Fwd(T x) const {
    return x * act_math::Tanh(act_math::Softplus(x));
  }
};
// X min(max(alpha X + beta, 0), 1) where hard_swish's functor cannot say it (alpha <= 0).
struct HardSwishAB {
  float alpha, beta;
  template <typename T>
  T Fwd(T x) const {
    return x * act_math::Min(act_math::Max(T(alpha) * x + T(beta), T(0)), T(1));
  }
};
}  // namespace fused_act

// Calls fn(functor) with the functor (a .Fwd<T>(x)) computing `a`.
template <typename Fn>
void WithFusedAct(const FusedActParams& a, Fn&& fn) {
  using namespace tide::ops;  // NOLINT: the functors
  const float ab[2] = {a.alpha, a.beta};
  switch (a.act) {
    case FusedAct::kNone:
      return fn(fused_act::Identity{});
    case FusedAct::kLeakyRelu:
      if (a.alpha == 0) return fn(ReluAct(nullptr));
      return fn(LeakyReluAct(ab));
    case FusedAct::kClip:
      return fn(BReluAct(ab));
    case FusedAct::kSwish:
      return fn(SwishAct(ab));
    case FusedAct::kHardSigmoid:
      return fn(HardSigmoidAct(ab));
    case FusedAct::kHardSwish:
      if (a.alpha > 0) {  // hard_swish's threshold = scale = 1 / alpha, offset = beta / alpha
        const float tso[3] = {1 / a.alpha, 1 / a.alpha, a.beta / a.alpha};
        return fn(HardSwishAct(tso));
      }
      return fn(fused_act::HardSwishAB{a.alpha, a.beta});
    case FusedAct::kSigmoid:
      return fn(SigmoidAct(nullptr));
    case FusedAct::kTanh:
      return fn(TanhAct(nullptr));
    case FusedAct::kAbs:
      return fn(AbsAct(nullptr));
    case FusedAct::kSqrt:
      return fn(fused_act::Sqrt{});
    case FusedAct::kMish:
      return fn(fused_act::Mish{});
    case FusedAct::kGeluErf:
      return fn(GeluAct(false));
    case FusedAct::kGeluTanh:
      return fn(GeluAct(true));
  }
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_FUSED_ACTIVATION_HPP_
