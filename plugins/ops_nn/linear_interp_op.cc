// linear_interp_op.cc: Paddle 2.x's linear_interp_v2 (F.interpolate(mode="linear") of a 3-D X,
// PIR pd_op.linear_interp): X [N, C, W] (data_layout NCHW / NCW) or [N, W, C] (NHWC / NWC)
// resized along W by linear interpolation, with the bilinear interps' taps and ratio
// (tide/ops/interp_pad2d.hpp: align_corners, align_mode 0's half-pixel centres, ratio 1 / scale
// where a scale is given). Out's width: SizeTensor, else OutSize, else X's times Scale or scale,
// else out_w (Paddle's phi kernel's order; with OutSize a scale still sets the ratio); an Out as
// wide as X is X. The grad adds each Out@GRAD element back to its two taps.
#include <tide/ops/interp_pad2d.hpp>

#include "common.h"

namespace ops_nn {
namespace {

template <typename Ctx>
bool ChannelsLastW(const Ctx& ctx) {
  const std::string f = ctx.template Attr<std::string>("data_layout");
  return f == "NHWC" || f == "NWC";
}

// Out's width and the scale that gave it (0: none).
struct LinearSize {
  int64_t w = -1;
  float scale = 0;
};

void CheckScale(const char* op, float s, const char* from) {
  TIDE_CHECK(s > 0, "op '", op, "': the scale (from ", from, ") must be > 0, got ", s);
}

LinearSize RunTimeSize(const KernelContext& ctx, int64_t in_w) {
  const char* op = ctx.op_type();
  LinearSize s;
  s.w = ctx.Attr<int32_t>("out_w");
  if (ctx.HasInput("SizeTensor")) {
    const std::vector<int64_t> v = IntScalars(ctx, "SizeTensor");
    TIDE_CHECK(v.size() == 1, "op '", op, "': SizeTensor must be 1 one-element tensor (w), got ",
               v.size());
    s.w = v[0];
    return s;
  }
  if (ctx.HasInput("Scale")) {
    s.scale = static_cast<float>(tide::ops::FloatScalar(ctx, "Scale"));
    CheckScale(op, s.scale, "Scale");
  } else {
    const auto v = ctx.Attr<std::vector<float>>("scale");
    if (!v.empty()) {
      s.scale = v[0];
      CheckScale(op, s.scale, "scale");
    }
  }
  if (s.scale > 0) s.w = static_cast<int64_t>(static_cast<float>(in_w) * s.scale);
  if (ctx.HasInput("OutSize")) {
    const std::vector<int64_t> v = IntValues(ctx, "OutSize");
    TIDE_CHECK(v.size() == 1, "op '", op, "': OutSize must hold 1 value (w), got ",
               tide::ToString(Dims(v.begin(), v.end())));
    s.w = v[0];
  }
  return s;
}

// X's [N, C, W] view, checked.
struct LinearGeom {
  int64_t n, c, iw, ow;
  bool last;
  Dims OutDims() const { return last ? Dims{n, ow, c} : Dims{n, c, ow}; }
  int64_t At(int64_t b, int64_t ch, int64_t i, int64_t w) const {
    return last ? (b * w + i) * c + ch : (b * c + ch) * w + i;
  }
};

template <typename Ctx>
LinearGeom GetLinear(const Ctx& ctx, const Dims& x, int64_t out_w) {
  const char* op = ctx.op_type();
  const bool last = ChannelsLastW(ctx);
  TIDE_CHECK(x.size() == 3, "op '", op, "': X must be 3-D ", last ? "[N, W, C]" : "[N, C, W]",
             ", got ", tide::ToString(x));
  return last ? LinearGeom{x[0], x[2], x[1], out_w, true}
              : LinearGeom{x[0], x[1], x[2], out_w, false};
}

void LinearShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  int64_t w = ctx.Attr<int32_t>("out_w");
  const LinearGeom probe = GetLinear(ctx, x, -1);
  if (ctx.HasInput("SizeTensor")) {
    TIDE_CHECK(ctx.InputCount("SizeTensor") == 1, "op '", op,
               "': SizeTensor must be 1 one-element tensor (w), got ",
               ctx.InputCount("SizeTensor"));
    w = -1;
  } else if (ctx.HasInput("OutSize") || ctx.HasInput("Scale")) {
    w = -1;
  } else {
    const auto v = ctx.Attr<std::vector<float>>("scale");
    if (!v.empty()) {
      CheckScale(op, v[0], "scale");
      w = probe.iw < 0 ? -1 : static_cast<int64_t>(static_cast<float>(probe.iw) * v[0]);
    }
  }
  TIDE_CHECK(w > 0 || w == -1, "op '", op, "': the output width must be positive, got ", w);
  ctx.SetOutputDims("Out", GetLinear(ctx, x, w).OutDims());
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T, bool kGrad>
void LinearInterp(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const LinearGeom probe = GetLinear(ctx, x.dims(), -1);
  const LinearSize size = RunTimeSize(ctx, probe.iw);
  TIDE_CHECK(size.w > 0, "op '", ctx.op_type(), "': the output width must be positive, got ",
             size.w);
  const LinearGeom g = GetLinear(ctx, x.dims(), size.w);
  TIDE_CHECK(g.n * g.c == 0 || g.iw > 0, "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()),
             " has no elements to interpolate");
  const bool ac = ctx.Attr<bool>("align_corners");
  const int mode = ctx.Attr<int32_t>("align_mode");
  double ratio = tide::ops::InterpRatioV2(g.iw, g.ow, ac, size.scale);
  if (g.ow == g.iw) ratio = 1.0;  // Paddle copies X
  std::vector<tide::ops::InterpTap> taps(g.ow);
  for (int64_t k = 0; k < g.ow; ++k)
    taps[k] = tide::ops::BilinearTapByRatio(k, g.iw, ratio, ac, mode);
  const T* src;
  T* dst;
  if constexpr (!kGrad) {
    src = x.data<T>();
    dst = ctx.Output("Out").mutable_data<T>(g.OutDims(), ctx.place());
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.OutDims());
    src = dout.data<T>();
    dst = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dst, dst + x.numel(), T(0));
  }
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t ch = 0; ch < g.c; ++ch)
      for (int64_t k = 0; k < g.ow; ++k) {
        const tide::ops::InterpTap& t = taps[k];
        const int64_t o = g.At(b, ch, k, g.ow);
        const int64_t lo = g.At(b, ch, t.lo, g.iw), hi = g.At(b, ch, t.hi, g.iw);
        if constexpr (!kGrad) {
          dst[o] = static_cast<T>(t.wlo * src[lo] + t.whi * src[hi]);
        } else {
          dst[lo] += static_cast<T>(t.wlo * src[o]);
          dst[hi] += static_cast<T>(t.whi * src[o]);
        }
      }
}
template <typename T>
void LinearInterpKernel(KernelContext& c) {
  LinearInterp<T, false>(c);
}
template <typename T>
void LinearInterpGradKernel(KernelContext& c) {
  LinearInterp<T, true>(c);
}

tide::OpSchema LinearAttrs(tide::OpSchema s, bool doc) {
  auto d = [doc](const char* text) { return std::string(doc ? text : ""); };
  return s
      .Attr("data_layout", std::string("NCHW"), d("NCHW / NCW: [N, C, W]; NHWC / NWC: [N, W, C]"))
      .InSet({"NCHW", "NHWC", "NCW", "NWC"})
      .Attr("out_d", int32_t(-1), d("(unused)"))
      .Attr("out_h", int32_t(-1), d("(unused)"))
      .Attr("out_w", int32_t(-1), d("output width"))
      .Attr("scale", std::vector<float>{}, d("[s]: width = X's times s (> 0), and the ratio 1 / s"))
      .Attr("interp_method", std::string("linear"), d("linear (fixed)"))
      .Attr("align_corners", true, d("align the end elements"))
      .Attr("align_mode", int32_t(1), d("0: half-pixel centres (without align_corners)"));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LinearAttrs(tide::OpSchema("linear_interp_v2"), true)
                     .Comment("Out = X resized along W by linear interpolation (F.interpolate "
                              "mode 'linear').")
                     .Input("X", "[N, C, W] or [N, W, C]")
                     .Input("OutSize", "int [1]: the width (optional)")
                     .AsDispensable()
                     .Input("SizeTensor", "1 one-element int tensor: the width (optional)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Scale", "one float: the width is X's times it (optional)")
                     .AsDispensable()
                     .Output("Out", "[N, C, out_w] or [N, out_w, C]")
                     .KernelDataTypeFrom("X")
                     .InferShape(LinearShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("linear_interp_v2_grad");
                       op.Input("X", g.Input("X"));
                       for (const char* in : {"OutSize", "SizeTensor", "Scale"})
                         if (!g.Input(in).empty()) op.Input(in, g.Input(in));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(LinearAttrs(tide::OpSchema("linear_interp_v2_grad"), false)
                     .Input("X")
                     .Input("OutSize")
                     .AsDispensable()
                     .Input("SizeTensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Scale")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("linear_interp_v2", "cpu", LinearInterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("linear_interp_v2_grad", "cpu", LinearInterpGradKernel, OPS_NN_FLOAT_TYPES);
