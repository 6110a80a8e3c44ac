// int8_ops.cc: int8 inference on any CPU (issue 32; tide/ops/int8.hpp has the rule). The
// quantize / dequantize ops that cross the borders of an int8 region (Paddle's oneDNN ops:
// quantize Output = saturate(round(Input * Scale)) as u8, or s8 with is_negative_input;
// dequantize Output = Input * (1 / Scale)), and the plain int8 kernels of fused_conv2d and fc: u8
// or s8 Input, the float32 weights quantized per output channel, int32 accumulation, then the
// real value's epilogue in float (bias, residual, activation) and Output's quantization; pool2d
// on u8 / s8 (Out in X's type and scale). They are the reference the oneDNN kernels
// (devices/mkldnn/int8_kernels.cc, int8_pool_kernel.cc) are tested against, and run a quantized
// program where oneDNN is absent.
#include <algorithm>
#include <cmath>
#include <string>
#include <tide/ops/conv.hpp>
#include <tide/ops/fc.hpp>
#include <tide/ops/int8.hpp>
#include <tide/ops/pool.hpp>
#include <vector>

#include "fused_activation.h"

namespace ops_nn {
namespace {

using tide::ops::Int8Scales;
using tide::ops::SaturateRound;

void CheckNoShift(const KernelContext& ctx, const char* op) {
  TIDE_CHECK(ctx.Attr<float>("Shift") == 0.0f, "op '", op, "': Shift ", ctx.Attr<float>("Shift"),
             " (asymmetric quantization) is not supported; only 0");
}

float ScaleAttr(const KernelContext& ctx, const char* op) {
  const float s = ctx.Attr<float>("Scale");
  TIDE_CHECK(std::isfinite(s) && s > 0.0f, "op '", op, "': Scale ", s,
             " is not a positive finite scale");
  return s;
}

template <typename Q>
void QuantizeTo(KernelContext& ctx, const Tensor& x, float scale) {
  const float* in = x.data<float>();
  Q* out = ctx.Output("Output").mutable_data<Q>(x.dims(), ctx.place());
  ParallelFor(ctx, x.numel(), 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out[i] = SaturateRound<Q>(in[i] * scale);
  });
}

template <typename T>
void QuantizeKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  CheckNoShift(ctx, op);
  const float scale = ScaleAttr(ctx, op);
  Tensor x = ctx.Input("Input");
  if (ctx.Attr<bool>("is_negative_input"))
    QuantizeTo<int8_t>(ctx, x, scale);
  else
    QuantizeTo<uint8_t>(ctx, x, scale);
}

template <typename Q>
void DequantizeKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  CheckNoShift(ctx, op);
  const float inv = 1.0f / ScaleAttr(ctx, op);  // oneDNN's reorder multiplies by its scale
  Tensor x = ctx.Input("Input");
  const Q* in = x.data<Q>();
  float* out = ctx.Output("Output").mutable_data<float>(x.dims(), ctx.place());
  ParallelFor(ctx, x.numel(), 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) out[i] = static_cast<float>(in[i]) * inv;
  });
}

// The s8 levels of float32 weights `w` whose output channel of element i is channel(i).
template <typename Channel>
std::vector<int8_t> QuantizedWeights(const Tensor& w, const std::vector<float>& scales,
                                     Channel channel) {
  const float* p = w.data<float>();
  std::vector<int8_t> q(static_cast<size_t>(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i)
    q[static_cast<size_t>(i)] = SaturateRound<int8_t>(p[i] * scales[channel(i)]);
  return q;
}

// Writes int8 results: each output channel's accumulations -> the real value -> Output.
class Int8Epilogue {
 public:
  Int8Epilogue(KernelContext& ctx, const Int8Scales& s, const FusedActParams& act,
               const float* bias)
      : s_(s), act_(act), bias_(bias), out_type_(tide::ops::Int8OutputTypeOf(ctx)) {}

  TideDataType out_type() const { return out_type_; }

  // The real value of accumulation `acc` of channel c, with `residual` (real) added.
  float Real(int32_t acc, int64_t c, float residual) const {
    const double v = static_cast<double>(acc) /
                         (static_cast<double>(s_.in) * s_.weights[static_cast<size_t>(c)]) +
                     (bias_ ? bias_[c] : 0.0f) + residual;
    float r = static_cast<float>(v);
    WithFusedAct(act_, [&](const auto& f) { r = f.Fwd(r); });
    return r;
  }
  // Stores real value v at out[i] in Output's type.
  void Store(void* out, int64_t i, float v) const {
    if (out_type_ == TIDE_FP32)
      static_cast<float*>(out)[i] = v;
    else if (out_type_ == TIDE_UINT8)
      static_cast<uint8_t*>(out)[i] = SaturateRound<uint8_t>(v * s_.out);
    else
      static_cast<int8_t*>(out)[i] = SaturateRound<int8_t>(v * s_.out);
  }

 private:
  const Int8Scales& s_;
  FusedActParams act_;
  const float* bias_;
  TideDataType out_type_;
};

// ResidualData's real values (float32 as they are, u8/s8 divided by Scale_in_eltwise).
std::vector<float> RealResidual(const Tensor& r, float scale) {
  std::vector<float> v(static_cast<size_t>(r.numel()));
  const int64_t n = r.numel();
  if (r.dtype() == TIDE_FP32) {
    std::copy(r.data<float>(), r.data<float>() + n, v.begin());
  } else if (r.dtype() == TIDE_UINT8) {
    for (int64_t i = 0; i < n; ++i) v[i] = r.data<uint8_t>()[i] / scale;
  } else {
    TIDE_CHECK(r.dtype() == TIDE_INT8, "ResidualData holds ", tide::DataTypeName(r.dtype()),
               "; an int8 fused_conv2d reads it as float32, uint8 or int8");
    for (int64_t i = 0; i < n; ++i) v[i] = r.data<int8_t>()[i] / scale;
  }
  return v;
}

template <typename Q>
void Int8ConvKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const std::string layout = ctx.Attr<std::string>("data_format");
  TIDE_CHECK(layout != "NHWC", "op '", op, "' (int8): data_format NHWC is not supported");
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  TIDE_CHECK(f.dtype() == TIDE_FP32, "op '", op, "' (int8): Filter must be float32, got ",
             tide::DataTypeName(f.dtype()));
  const tide::ops::ConvGeom g = tide::ops::GetConvGeom(ctx, op, x.dims(), f.dims());
  const Int8Scales s = tide::ops::GetInt8Scales(ctx, op, g.m);
  const int64_t per_filter = f.numel() / g.m;
  const std::vector<int8_t> wq =
      QuantizedWeights(f, s.weights, [&](int64_t i) { return i / per_filter; });
  const float* bias = nullptr;
  if (ctx.HasInput("Bias")) {
    Tensor b = ctx.Input("Bias");
    TIDE_CHECK(b.numel() == g.m && b.dtype() == TIDE_FP32, "op '", op,
               "' (int8): Bias must be M = ", g.m, " float32 values");
    bias = b.data<float>();
  }
  std::vector<float> residual;
  if (ctx.Attr<bool>("fuse_residual_connection")) {
    Tensor r = ctx.Input("ResidualData");
    TIDE_CHECK(r.dims() == g.out_dims(), "op '", op, "': ResidualData must have Output's dims ",
               tide::ToString(g.out_dims()), ", got ", tide::ToString(r.dims()));
    residual = RealResidual(r, s.residual);  // before Output, which may be its variable, is written
  }
  const Int8Epilogue epi(ctx, s, GetFusedAct(ctx), bias);
  Tensor out = ctx.Output("Output");
  out.Resize(g.out_dims());
  void* o = out.mutable_data(epi.out_type(), ctx.place());
  const Q* in = x.data<Q>();
  std::vector<Q> input_copy;  // Input is Output's variable: read a copy while Output is written
  if (static_cast<const void*>(in) == o) {
    input_copy.assign(in, in + x.numel());
    in = input_copy.data();
  }
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, ohw = g.oh * g.ow;
  ParallelFor(ctx, g.n * g.m, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t n = j / g.m, m = j % g.m, c0 = (m / mg) * cg;
      const int8_t* w = wq.data() + m * per_filter;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int32_t acc = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                if (ix < 0 || ix >= g.w) continue;
                acc += static_cast<int32_t>(in[((n * g.c + c0 + c) * g.h + iy) * g.w + ix]) *
                       w[(c * g.kh + ky) * g.kw + kx];
              }
            }
          const int64_t i = j * ohw + oy * g.ow + ox;
          epi.Store(o, i, epi.Real(acc, m, residual.empty() ? 0.0f : residual[i]));
        }
    }
  });
}

template <typename Q>
void Int8FcKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), w = ctx.Input("W");
  TIDE_CHECK(w.dtype() == TIDE_FP32, "op '", op, "' (int8): W must be float32, got ",
             tide::DataTypeName(w.dtype()));
  const tide::ops::FcShape sh =
      tide::ops::GetFcShape(op, x.dims(), w.dims(), ctx.Attr<int32_t>("in_num_col_dims"));
  const Int8Scales s = tide::ops::GetInt8Scales(ctx, op, sh.n);
  const std::vector<int8_t> wq =
      QuantizedWeights(w, s.weights, [&](int64_t i) { return i % sh.n; });
  const float* bias = nullptr;
  if (ctx.HasInput("Bias")) {
    Tensor b = ctx.Input("Bias");
    tide::ops::CheckFcBias(op, b.dims(), sh.n);
    bias = b.data<float>();
  }
  const std::string fused = ctx.Attr<std::string>("fuse_activation");
  const FusedActParams act =
      fused.empty()
          ? FusedActOf(ctx.Attr<std::string>("activation_type"), 0.0f, 0.0f)
          : FusedActOf(fused, ctx.Attr<float>("fuse_alpha"), ctx.Attr<float>("fuse_beta"));
  const Int8Epilogue epi(ctx, s, act, bias);
  Tensor out = ctx.Output("Out");
  out.Resize(sh.out);
  void* o = out.mutable_data(epi.out_type(), ctx.place());
  const Q* in = x.data<Q>();
  ParallelFor(ctx, sh.m, 1, [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> acc(static_cast<size_t>(sh.n));
    for (int64_t r = r0; r < r1; ++r) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t k = 0; k < sh.k; ++k) {
        const int32_t a = in[r * sh.k + k];
        const int8_t* wr = wq.data() + k * sh.n;
        for (int64_t j = 0; j < sh.n; ++j) acc[j] += a * wr[j];
      }
      for (int64_t j = 0; j < sh.n; ++j) epi.Store(o, r * sh.n + j, epi.Real(acc[j], j, 0.0f));
    }
  });
}

// quantize / dequantize: Output of Input's dims and `out_type(ctx)`'s type, Paddle's Scale and
// Shift (which must be 0).
tide::OpSchema BorderSchema(const char* type, const char* comment, const char* input,
                            const char* output, const char* scale,
                            TideDataType (*out_type)(tide::InferShapeContext&)) {
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("Input", input)
      .Output("Output", output)
      .KernelDataTypeFrom("Input")
      .InferShape([out_type](tide::InferShapeContext& ctx) {
        ctx.SetOutputDims("Output", ctx.InputDims("Input"));
        ctx.SetOutputDataType("Output", out_type(ctx));
      })
      .Attr("Scale", 1.0f, scale)
      .Attr("Shift", 0.0f, "Paddle's zero point (asymmetric quantization): must be 0")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)");
}

tide::OpSchema QuantizeSchema() {
  return BorderSchema(
             "quantize",
             "Output = saturate(round_half_even(Input * Scale)) as uint8, or as int8 with "
             "is_negative_input: the entry of an int8 region (Paddle's oneDNN quantize op).",
             "float32 values", "their int8 levels, Input's dims", "the multiplier of Input",
             [](tide::InferShapeContext& ctx) {
               return ctx.Attr<bool>("is_negative_input") ? TIDE_INT8 : TIDE_UINT8;
             })
      .Attr("is_negative_input", false, "Output int8 (values may be negative), else uint8")
      .Attr("output_format", std::string("NCHW"), "Paddle's layout hint (ignored)")
      .Attr("bfloat16", false, "Paddle's bfloat16 quantization (unsupported: must be false)")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.i == 0, "op 'quantize': bfloat16 = true is not supported (int8 only)");
      });
}

tide::OpSchema DequantizeSchema() {
  return BorderSchema("dequantize",
                      "Output = Input * (1 / Scale), float32: the exit of an int8 region "
                      "(Paddle's oneDNN dequantize op).",
                      "uint8 or int8 levels", "float32, Input's dims",
                      "Input's scale (Input = Output * Scale)",
                      [](tide::InferShapeContext&) { return TIDE_FP32; });
}

// pool2d on u8 / s8 X: Out in X's type and scale, each window pooled in float (tide/ops/pool.hpp's
// windows), then rounded half to even and saturated, as oneDNN's int8 pooling.
template <typename Q>
void Int8PoolKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(!ctx.HasAttr("data_format") || ctx.Attr<std::string>("data_format") != "NHWC", "op '",
             op, "' (int8): data_format NHWC is not supported");
  const tide::ops::PoolGeom g = tide::ops::GetPoolGeom(ctx, op, x.dims());
  const Q* xd = x.data<Q>();
  Q* od = out.mutable_data<Q>(g.out_dims(), ctx.place());
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    std::vector<float> in(static_cast<size_t>(plane)), pooled(static_cast<size_t>(oplane));
    for (int64_t p = b; p < e; ++p) {
      std::copy(xd + p * plane, xd + (p + 1) * plane, in.begin());
      tide::ops::PoolPlane(g, in.data(), pooled.data());
      for (int64_t i = 0; i < oplane; ++i) od[p * oplane + i] = SaturateRound<Q>(pooled[i]);
    }
  });
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(QuantizeSchema());
TIDE_REGISTER_OP(DequantizeSchema());
TIDE_REGISTER_KERNEL("quantize", "cpu", QuantizeKernel, float);
TIDE_REGISTER_KERNEL("dequantize", "cpu", DequantizeKernel, uint8_t, int8_t);
TIDE_REGISTER_KERNEL("fused_conv2d", "cpu", Int8ConvKernel, uint8_t, int8_t);
TIDE_REGISTER_KERNEL("fc", "cpu", Int8FcKernel, uint8_t, int8_t);
TIDE_REGISTER_KERNEL("pool2d", "cpu", Int8PoolKernel, uint8_t, int8_t);
