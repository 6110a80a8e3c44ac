// quant_ops.cc: the quantization ops of models saved by Paddle's quantization tools (QAT's
// ImperativeQuantAware / paddle.quantization, PaddleSlim, post-training quantization), run as
// Paddle Inference's CPU reference kernels run them: in float, each value rounded to its integer
// level and (for the quant-dequant ops) scaled back, so a quantized model gives the outputs its
// training saw. Inference only: an op in training mode (is_test false: the moving-average scale
// update) is refused, naming it.
//
// Paddle's rule (phi's fake_quantize functors): bin_cnt = 2^(bit_length - 1) - 1 (Paddle 3.x's
// qmax where the op carries one); inv_s = 1 / s (1 / (s + 1e-6) for s <= 1e-30);
//   round_type 0: q = clamp(round_half_even(bin_cnt * inv_s * x), -bin_cnt - 1, bin_cnt)
//   round_type 1: q = round_half_away(bin_cnt * inv_s * clamp(x, -s, s))
// dequantized: q * s / bin_cnt. The scale is one value, or one per index of `quant_axis`
// (channel-wise). ZeroPoint is read by no Paddle kernel (symmetric quantization) and neither here.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"

namespace ops_nn {
namespace {

// The levels and rounding of one op.
struct QuantRule {
  float bin_cnt;
  int round_type;
};

QuantRule RuleOf(KernelContext& ctx, const char* op) {
  const int bits = ctx.Attr<int32_t>("bit_length");
  const int32_t qmax = ctx.HasAttr("qmax") ? ctx.Attr<int32_t>("qmax") : -1;
  TIDE_CHECK(qmax > 0 || (bits >= 2 && bits <= 16), "op '", op, "': bit_length ", bits,
             " is outside [2, 16]");
  const int round_type = ctx.Attr<int32_t>("round_type");
  TIDE_CHECK(round_type == 0 || round_type == 1, "op '", op, "': round_type ", round_type,
             " is neither 0 (ties to even) nor 1 (ties away from zero)");
  return {qmax > 0 ? static_cast<float>(qmax) : std::ldexp(1.0f, bits - 1) - 1, round_type};
}

template <typename T>
T Inverse(T s) {
  return s <= T(1e-30) ? T(1) / (s + T(1e-6)) : T(1) / s;
}

// x's integer level under scale s.
template <typename T>
T Quantize(T x, T s, const QuantRule& r) {
  const T bin = static_cast<T>(r.bin_cnt), inv = Inverse(s);
  if (r.round_type == 0) {
    const T q = std::nearbyint(bin * inv * x);  // the default rounding mode: ties to even
    return q > bin ? bin : q < -bin - 1 ? -bin - 1 : q;
  }
  const T c = x > s ? s : x < -s ? -s : x;
  return std::round(bin * inv * c);
}

// X seen as [pre, channels, inner] around quant_axis (tide::ops::SplitAt; channels 1 for a
// per-tensor scale): element i is in channel (i / inner) % channels.
struct ChannelView {
  int64_t channels = 1, inner = 1;
  int64_t Channel(int64_t i) const { return (i / inner) % channels; }
};

ChannelView ViewOf(const char* op, const Dims& dims, int axis) {
  if (axis < 0) return {1, tide::ops::DimsProduct(dims)};
  TIDE_CHECK(axis == 0 || axis == 1, "op '", op, "': quant_axis ", axis,
             " (channel-wise scales are along dim 0 or 1, as Paddle's)");
  const tide::ops::AxisSplit s = tide::ops::SplitAt(op, dims, axis);
  return {s.n, s.post};
}

// The scale of each channel: the input `param` (one value, or one per channel).
template <typename T>
std::vector<T> ScalesOf(KernelContext& ctx, const char* op, const char* param,
                        const ChannelView& v) {
  Tensor s = ctx.Input(param);
  TIDE_CHECK(s.numel() == v.channels, "op '", op, "': ", param, " holds ", s.numel(),
             " value(s); X has ", v.channels, " channel(s) along quant_axis");
  return std::vector<T>(s.data<T>(), s.data<T>() + s.numel());
}

// Each channel's largest |x| (Paddle's FindAbsMax / FindChannelAbsMax).
template <typename T>
std::vector<T> AbsMaxOf(const Tensor& x, const ChannelView& v) {
  std::vector<T> m(static_cast<size_t>(v.channels), T(0));
  const T* p = x.data<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    T& c = m[static_cast<size_t>(v.Channel(i))];
    c = std::max(c, std::abs(p[i]));
  }
  return m;
}

// Out = each X element quantized (and with `dequantize`, scaled back) by its channel's scale.
template <typename T>
void QuantizeInto(KernelContext& ctx, const char* out_param, const Tensor& x,
                  const std::vector<T>& scales, const ChannelView& v, const QuantRule& r,
                  bool dequantize) {
  const T* in = x.data<T>();
  T* out = ctx.Output(out_param).mutable_data<T>(x.dims(), ctx.place());
  const T bin = static_cast<T>(r.bin_cnt);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const T s = scales[static_cast<size_t>(v.Channel(i))];
    const T q = Quantize(in[i], s, r);
    out[i] = dequantize ? q * s / bin : q;
  }
}

template <typename T>
void SetOptionalScale(KernelContext& ctx, const char* param, const std::vector<T>& scales) {
  if (!ctx.HasOutput(param)) return;
  T* o = ctx.Output(param).mutable_data<T>({static_cast<int64_t>(scales.size())}, ctx.place());
  std::copy(scales.begin(), scales.end(), o);
}

void RefuseTraining(KernelContext& ctx, const char* op) {
  if (ctx.HasAttr("is_test") && !ctx.Attr<bool>("is_test"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' in training mode (is_test false: quantization-aware training updates its "
               "scale) is not supported; Tide runs quantized models saved for inference");
}

// quantize_linear: the levels (Y, float) by Scale; dequantize_linear: X's levels scaled back.
template <typename T>
void QuantizeLinearKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  RefuseTraining(ctx, op);
  Tensor x = ctx.Input("X");
  if (ctx.Attr<bool>("only_observer")) {
    T* out = ctx.Output("Y").mutable_data<T>(x.dims(), ctx.place());
    std::copy(x.data<T>(), x.data<T>() + x.numel(), out);
    return;
  }
  const ChannelView v = ViewOf(op, x.dims(), ctx.Attr<int32_t>("quant_axis"));
  QuantizeInto<T>(ctx, "Y", x, ScalesOf<T>(ctx, op, "Scale", v), v, RuleOf(ctx, op), false);
}

// X's levels of type L (float, or int8 where the program declares the weight so), Y in S, the
// Scale's type.
template <typename L, typename S>
void DequantizeLevels(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  S* out = ctx.Output("Y").mutable_data<S>(x.dims(), ctx.place());
  const L* in = x.data<L>();
  if (ctx.Attr<bool>("only_observer")) {
    std::copy(in, in + x.numel(), out);
    return;
  }
  const ChannelView v = ViewOf(op, x.dims(), ctx.Attr<int32_t>("quant_axis"));
  const std::vector<S> scales = ScalesOf<S>(ctx, op, "Scale", v);
  const S bin = static_cast<S>(RuleOf(ctx, op).bin_cnt);
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    out[i] = static_cast<S>(in[i]) * scales[static_cast<size_t>(v.Channel(i))] / bin;
}

template <typename T>
void DequantizeLinearKernel(KernelContext& ctx) {
  if constexpr (std::is_same_v<T, int8_t>) {
    TIDE_CHECK(ctx.Input("Scale").dtype() == TIDE_FP32, "op '", ctx.op_type(),
               "': int8 X with a Scale of another type than float32");
    DequantizeLevels<int8_t, float>(ctx);
  } else {
    DequantizeLevels<T, T>(ctx);
  }
}

// fake_quantize_dequantize_moving_average_abs_max / fake_quantize_moving_average_abs_max
// (is_test): X quantized by InScale, the scale its training kept (and scaled back).
template <typename T, bool kDequantize>
void MovingAverageKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  RefuseTraining(ctx, op);
  Tensor x = ctx.Input("X");
  const ChannelView v = ViewOf(op, x.dims(), -1);
  const std::vector<T> scale = ScalesOf<T>(ctx, op, "InScale", v);
  QuantizeInto<T>(ctx, "Out", x, scale, v, RuleOf(ctx, op), kDequantize);
  SetOptionalScale<T>(ctx, "OutScale", scale);
}

// fake_(channel_wise_)quantize(_dequantize)_abs_max: the scale is X's own largest |x| (per
// channel along quant_axis for the channel-wise ones): weights' quantization.
template <typename T, bool kChannelWise, bool kDequantize>
void AbsMaxKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  RefuseTraining(ctx, op);
  Tensor x = ctx.Input("X");
  const ChannelView v = ViewOf(op, x.dims(), kChannelWise ? ctx.Attr<int32_t>("quant_axis") : -1);
  const std::vector<T> scales = AbsMaxOf<T>(x, v);
  QuantizeInto<T>(ctx, "Out", x, scales, v, RuleOf(ctx, op), kDequantize);
  SetOptionalScale<T>(ctx, "OutScale", scales);
}

// fake_dequantize_max_abs: Out = X * Scale / max_range.
template <typename T>
void DequantizeMaxAbsKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), s = ctx.Input("Scale");
  TIDE_CHECK(s.numel() == 1, "op '", ctx.op_type(), "': Scale holds ", s.numel(),
             " values, not one");
  const T scale = s.data<T>()[0], range = static_cast<T>(ctx.Attr<float>("max_range"));
  const T* in = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = in[i] * scale / range;
}

// fake_channel_wise_dequantize_max_abs: Out = X * Scales[0][c] / (2^(quant_bits[0]-1) - 1),
// times Scales[1][0] / (2^(quant_bits[1]-1) - 1) where a second (activation) scale is given;
// channels along quant_axis (0 or 1).
template <typename T>
void ChannelDequantizeMaxAbsKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  const auto bits = ctx.Attr<std::vector<int32_t>>("quant_bits");
  const size_t n_scales = ctx.InputCount("Scales");
  TIDE_CHECK(n_scales == 1 || n_scales == 2, "op '", op, "': ", n_scales,
             " Scales; one (the weights') or two (and the activations') are read");
  TIDE_CHECK(bits.size() >= n_scales, "op '", op, "': quant_bits holds ", bits.size(),
             " value(s) for ", n_scales, " Scales");
  const ChannelView v = ViewOf(op, x.dims(), ctx.Attr<int32_t>("quant_axis"));
  Tensor s0 = ctx.Input("Scales", 0);
  TIDE_CHECK(s0.numel() == v.channels, "op '", op, "': Scales[0] holds ", s0.numel(),
             " value(s); X has ", v.channels, " channel(s) along quant_axis");
  T factor = T(1);
  if (n_scales == 2) {
    Tensor s1 = ctx.Input("Scales", 1);
    TIDE_CHECK(s1.numel() == 1, "op '", op, "': Scales[1] holds ", s1.numel(), " values, not one");
    factor = s1.data<T>()[0] / (std::ldexp(T(1), bits[1] - 1) - 1);
  }
  const T range = std::ldexp(T(1), bits[0] - 1) - 1;
  const T* in = x.data<T>();
  const T* scales = s0.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    out[i] = in[i] * scales[v.Channel(i)] / range * factor;
}

// moving_average_abs_max_scale (is_test): an observer; Out = X, the scale outputs untouched.
template <typename T>
void MovingAverageScaleKernel(KernelContext& ctx) {
  RefuseTraining(ctx, ctx.op_type());
  if (!ctx.HasOutput("Out")) return;
  Tensor x = ctx.Input("X");
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(x.data<T>(), x.data<T>() + x.numel(), out);
}

// The kernels by op (the registration takes one template parameter).
template <typename T>
void FakeQuantDequantMovingAverage(KernelContext& ctx) {
  MovingAverageKernel<T, true>(ctx);
}
template <typename T>
void FakeQuantMovingAverage(KernelContext& ctx) {
  MovingAverageKernel<T, false>(ctx);
}
template <typename T>
void FakeQuantDequantAbsMax(KernelContext& ctx) {
  AbsMaxKernel<T, false, true>(ctx);
}
template <typename T>
void FakeQuantAbsMax(KernelContext& ctx) {
  AbsMaxKernel<T, false, false>(ctx);
}
template <typename T>
void FakeChannelQuantDequantAbsMax(KernelContext& ctx) {
  AbsMaxKernel<T, true, true>(ctx);
}
template <typename T>
void FakeChannelQuantAbsMax(KernelContext& ctx) {
  AbsMaxKernel<T, true, false>(ctx);
}

void SameAsX(tide::InferShapeContext& ctx, const char* out) {
  if (!ctx.HasOutput(out)) return;
  ctx.SetOutputDims(out, ctx.InputDims("X"));
  ctx.SetOutputDataType(out, ctx.InputDataType("X"));
}

// OutScale: one value, or one per channel of quant_axis.
void ScaleShape(tide::InferShapeContext& ctx, int axis) {
  if (!ctx.HasOutput("OutScale")) return;
  const tide::Dims x = ctx.InputDims("X");
  const int64_t n = axis >= 0 && axis < static_cast<int>(x.size()) ? x[axis] : 1;
  ctx.SetOutputDims("OutScale", {n});
  ctx.SetOutputDataType("OutScale", ctx.InputDataType("X"));
}

tide::OpSchema LinearOp(const char* type, const char* comment) {
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("X", "the tensor")
      .Input("Scale", "one scale, or one per index of quant_axis")
      .AsDispensable()
      .Input("ZeroPoint", "zero points (0: symmetric; read by no kernel, as in Paddle)")
      .AsDispensable()
      .Input("InAccum", "training state (unused in inference)")
      .AsDispensable()
      .Input("InState", "training state (unused in inference)")
      .AsDispensable()
      .Output("Y", "X's dims")
      .Output("OutState", "training state (not written)")
      .AsDispensable()
      .Output("OutAccum", "training state (not written)")
      .AsDispensable()
      .Output("OutScale", "training state (not written)")
      .AsDispensable()
      .Attr("quant_axis", int32_t(0), "-1: one scale; 0 or 1: one per index of that dim")
      .Attr("bit_length", int32_t(8), "levels 2^(bit_length-1)-1 each side (qmax overrides)")
      .Attr("qmin", int32_t(-1), "Paddle 3.x: the lowest level (Paddle's kernels use -qmax-1)")
      .Attr("qmax", int32_t(-1), "Paddle 3.x: the highest level; -1: from bit_length")
      .Attr("round_type", int32_t(0), "0: ties to even, 1: ties away from zero")
      .Attr("is_test", true, "false: training (refused)")
      .Attr("only_observer", false, "true: Y = X")
      .Attr("moving_rate", 0.9f, "training's moving average (unused in inference)")
      .InferShape([](tide::InferShapeContext& ctx) {
        SameAsX(ctx, "Y");
        // int8 levels (a weight the program declares int8) dequantize to the Scale's type.
        if (ctx.InputDataType("X") == TIDE_INT8 && ctx.HasInput("Scale"))
          ctx.SetOutputDataType("Y", ctx.InputDataType("Scale"));
      });
}

// The fake_* ops: X, Out, OutScale, bit_length, round_type (default 1, as Paddle's extra attr).
tide::OpSchema FakeOp(const char* type, const char* comment, bool channel_wise,
                      bool moving_average) {
  tide::OpSchema s(type);
  s.Comment(comment).Input("X", "the tensor");
  if (moving_average)
    s.Input("InScale", "the scale training kept")
        .Input("InAccum", "training state")
        .AsDispensable()
        .Input("InState", "training state")
        .AsDispensable();
  s.Output("Out", "X's dims").Output("OutScale", "the scale(s) used").AsDispensable();
  if (moving_average)
    s.Output("OutState", "training state (not written)")
        .AsDispensable()
        .Output("OutAccum", "training state (not written)")
        .AsDispensable()
        .Attr("moving_rate", 0.9f, "training's moving average (unused in inference)");
  if (channel_wise) s.Attr("quant_axis", int32_t(0), "the channels' dim: 0 or 1");
  return s.Attr("bit_length", int32_t(8), "levels 2^(bit_length-1)-1 each side")
      .Attr("round_type", int32_t(1), "0: ties to even, 1: ties away from zero")
      .Attr("is_test", true, "false: training (refused)")
      .InferShape([channel_wise](tide::InferShapeContext& ctx) {
        SameAsX(ctx, "Out");
        ScaleShape(ctx, channel_wise ? ctx.Attr<int32_t>("quant_axis") : -1);
      });
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LinearOp("quantize_linear",
                          "Y = X's integer levels by Scale (float), Paddle's symmetric "
                          "quantization; inference only."));
TIDE_REGISTER_OP(LinearOp("dequantize_linear",
                          "Y = X * Scale / bin_cnt (per tensor, or per index of quant_axis)."));
TIDE_REGISTER_OP(FakeOp("fake_quantize_dequantize_moving_average_abs_max",
                        "Out = X quantized by InScale and scaled back.", false, true));
TIDE_REGISTER_OP(FakeOp("fake_quantize_moving_average_abs_max",
                        "Out = X's integer levels by InScale.", false, true));
TIDE_REGISTER_OP(FakeOp("fake_quantize_dequantize_abs_max",
                        "Out = X quantized by its largest |x| and scaled back.", false, false));
TIDE_REGISTER_OP(FakeOp("fake_quantize_abs_max", "Out = X's integer levels by its largest |x|.",
                        false, false));
TIDE_REGISTER_OP(FakeOp("fake_channel_wise_quantize_dequantize_abs_max",
                        "Out = X quantized by each channel's largest |x| and scaled back.", true,
                        false));
TIDE_REGISTER_OP(FakeOp("fake_channel_wise_quantize_abs_max",
                        "Out = X's integer levels by each channel's largest |x|.", true, false));
TIDE_REGISTER_OP(tide::OpSchema("fake_dequantize_max_abs")
                     .Comment("Out = X * Scale / max_range.")
                     .Input("X", "integer levels (float)")
                     .Input("Scale", "one value")
                     .Output("Out", "X's dims")
                     .Attr("max_range", 127.0f, "the levels' range")
                     .InferShape([](tide::InferShapeContext& ctx) { SameAsX(ctx, "Out"); }));
TIDE_REGISTER_OP(
    tide::OpSchema("fake_channel_wise_dequantize_max_abs")
        .Comment("Out = X * Scales[0][channel] / (2^(quant_bits[0]-1)-1) (times Scales[1] / "
                 "(2^(quant_bits[1]-1)-1) where given).")
        .Input("X", "integer levels (float)")
        .Input("Scales", "the weights' per-channel scales, then optionally the activations'")
        .AsDuplicable()
        .Output("Out", "X's dims")
        .Attr("quant_bits", std::vector<int32_t>{8}, "bits of each scale's levels")
        .Attr("quant_axis", int32_t(0), "the channels' dim: 0 or 1")
        .Attr("x_num_col_dims", int32_t(1), "Paddle's (unused: quant_axis gives the channels)")
        .InferShape([](tide::InferShapeContext& ctx) { SameAsX(ctx, "Out"); }));
TIDE_REGISTER_OP(tide::OpSchema("moving_average_abs_max_scale")
                     .Comment("An observer of X's scale: Out = X in inference.")
                     .Input("X", "the tensor")
                     .Input("InAccum", "training state")
                     .AsDispensable()
                     .Input("InState", "training state")
                     .AsDispensable()
                     .Output("Out", "X")
                     .AsDispensable()
                     .Output("OutScale", "the scale (not written in inference)")
                     .AsDispensable()
                     .Output("OutState", "training state (not written)")
                     .AsDispensable()
                     .Output("OutAccum", "training state (not written)")
                     .AsDispensable()
                     .Attr("moving_rate", 0.9f, "training's moving average")
                     .Attr("is_test", true, "false: training (refused)")
                     .InferShape([](tide::InferShapeContext& ctx) { SameAsX(ctx, "Out"); }));

TIDE_REGISTER_KERNEL("quantize_linear", "cpu", QuantizeLinearKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("dequantize_linear", "cpu", DequantizeLinearKernel, OPS_NN_FLOAT_TYPES,
                     int8_t);
TIDE_REGISTER_KERNEL("fake_quantize_dequantize_moving_average_abs_max", "cpu",
                     FakeQuantDequantMovingAverage, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_quantize_moving_average_abs_max", "cpu", FakeQuantMovingAverage,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_quantize_dequantize_abs_max", "cpu", FakeQuantDequantAbsMax,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_quantize_abs_max", "cpu", FakeQuantAbsMax, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_channel_wise_quantize_dequantize_abs_max", "cpu",
                     FakeChannelQuantDequantAbsMax, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_channel_wise_quantize_abs_max", "cpu", FakeChannelQuantAbsMax,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_dequantize_max_abs", "cpu", DequantizeMaxAbsKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fake_channel_wise_dequantize_max_abs", "cpu", ChannelDequantizeMaxAbsKernel,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("moving_average_abs_max_scale", "cpu", MovingAverageScaleKernel,
                     OPS_NN_FLOAT_TYPES);
