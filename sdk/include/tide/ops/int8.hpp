// tide/ops/int8.hpp: int8 inference of fused_conv2d and fc (issue 32), the rule every
// implementation follows (Paddle's cpu_quantize_pass design: the op keeps its type; u8/s8 Input
// makes it an int8 op and these attributes, Paddle's names, give its scales).
//
// Scales multiply: a value v is stored as q = saturate(round_half_even(v * scale)).
//   Scale_in          Input's scale: Input holds q_x (u8, or s8 where values may be negative)
//   Scale_weights     one per output channel (or one for all): the float32 Filter / W, quantized
//                     by the kernel to s8 levels q_w = saturate(round_half_even(w * Scale_weights))
//   Scale_in_eltwise  fused_conv2d's ResidualData's scale when it is u8/s8 (float32: none)
//   Scale_out         Output's scale, unless force_fp32_output
//   force_fp32_output Output is float32
// Output's real value, from the int32 accumulation acc of q_x * q_w over a channel c:
//   v = act(acc / (Scale_in * Scale_weights[c]) + Bias[c] + ResidualData's real value)
// stored as float32 (force_fp32_output), else u8 where act is non-negative (relu, relu6), else s8,
// by Scale_out. The quantize / dequantize ops cross the borders of an int8 region.
#ifndef TIDE_OPS_INT8_HPP_
#define TIDE_OPS_INT8_HPP_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// True for the data types of int8 values.
inline bool IsInt8Type(TideDataType t) { return t == TIDE_UINT8 || t == TIDE_INT8; }

// v rounded half to even and saturated to Q's range (what oneDNN's conversions do).
template <typename Q>
Q SaturateRound(float v) {
  const float r = std::nearbyint(v);
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(r < lo ? lo : r > hi ? hi : r);
}

// The int8 attributes of an op.
struct Int8Scales {
  float in = 1.0f, out = 1.0f, residual = 1.0f;
  std::vector<float> weights;  // one per output channel
  bool fp32_output = false;
};

// The attributes of int8 `op` (Input u8/s8) with `channels` output channels, checked: every scale
// positive and finite, Scale_weights one value (repeated) or one per channel.
inline Int8Scales GetInt8Scales(const KernelContext& ctx, const char* op, int64_t channels) {
  Int8Scales s;
  s.in = ctx.Attr<float>("Scale_in");
  s.out = ctx.Attr<float>("Scale_out");
  s.residual = ctx.HasAttr("Scale_in_eltwise") ? ctx.Attr<float>("Scale_in_eltwise") : 1.0f;
  s.fp32_output = ctx.Attr<bool>("force_fp32_output");
  s.weights = ctx.Attr<std::vector<float>>("Scale_weights");
  TIDE_CHECK(s.weights.size() == 1 || static_cast<int64_t>(s.weights.size()) == channels, "op '",
             op, "' (int8): Scale_weights holds ", s.weights.size(),
             " values; it needs one, or one per output channel (", channels, ")");
  if (s.weights.size() == 1) s.weights.assign(static_cast<size_t>(channels), s.weights[0]);
  auto check = [op](const char* name, float v) {
    TIDE_CHECK(std::isfinite(v) && v > 0.0f, "op '", op, "' (int8): ", name, " ", v,
               " is not a positive finite scale");
  };
  check("Scale_in", s.in);
  check("Scale_out", s.out);
  check("Scale_in_eltwise", s.residual);
  for (float w : s.weights) check("Scale_weights", w);
  return s;
}

// True for the fused activations whose results are never negative (Output u8).
inline bool NonNegativeActivation(const std::string& act, float alpha) {
  return (act == "relu" && alpha == 0.0f) || act == "relu6";
}

// Output's data type: float32 with force_fp32_output, else u8 after a non-negative activation,
// else s8.
inline TideDataType Int8OutputType(bool fp32_output, const std::string& act, float alpha) {
  if (fp32_output) return TIDE_FP32;
  return NonNegativeActivation(act, alpha) ? TIDE_UINT8 : TIDE_INT8;
}

// The data type of int8 `op`'s Output (a KernelContext or an InferShapeContext): fused_conv2d's
// activation is fuse_activation (fuse_relu: relu) with fuse_alpha, fc's fuse_activation with
// fuse_alpha, else activation_type.
template <typename Ctx>
TideDataType Int8OutputTypeOf(const Ctx& ctx) {
  std::string act = ctx.template Attr<std::string>("fuse_activation");
  float alpha = ctx.template Attr<float>("fuse_alpha");
  if (act.empty() || act == "identity") {
    alpha = 0.0f;
    if (ctx.HasAttr("fuse_relu") && ctx.template Attr<bool>("fuse_relu")) act = "relu";
    if (ctx.HasAttr("activation_type")) act = ctx.template Attr<std::string>("activation_type");
  }
  return Int8OutputType(ctx.template Attr<bool>("force_fp32_output"), act, alpha);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INT8_HPP_
