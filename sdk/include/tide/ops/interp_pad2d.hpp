// tide/ops/interp_pad2d.hpp: the rules of Fluid's bilinear_interp / nearest_interp and Paddle
// 2.x's *_interp_v2 (output size; per output row or column the two source indices and their
// weights, with align_corners and align_mode) and pad2d (geometry; the source index of a padded
// index for constant, reflect and edge), with their errors, for every implementation. The per-index
// functions run on the host and on a device. The interps take X in NCHW or NHWC (data_layout), as
// pad2d does (data_format), and Out's size from Fluid 1.6+'s SizeTensor / OutSize / Scale inputs or
// the attributes.
#ifndef TIDE_OPS_INTERP_PAD2D_HPP_
#define TIDE_OPS_INTERP_PAD2D_HPP_

#include <cmath>
#include <cstdint>
#include <string>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace tide {
namespace ops {

// ---------------------------------------------------------------------------------------------
// Interpolation: output index k of `out` reads source indices lo and hi of `in` with weights
// wlo and whi.
struct InterpTap {
  int64_t lo, hi;
  double wlo, whi;
};

// Source pixels per output pixel along an axis: Fluid's interps, in / out ((in - 1) / (out - 1)
// with align_corners).
TIDE_OPS_HOST_DEVICE inline double InterpRatio(int64_t in, int64_t out, bool align_corners) {
  return out > 1 ? (align_corners ? double(in - 1) / double(out - 1) : double(in) / double(out))
                 : 0.0;
}

// The *_interp_v2 ops' ratio, Paddle's (in float): 1 / scale where a scale gave the size
// (Paddle 2.x's F.interpolate(scale_factor=...)), else as above.
inline double InterpRatioV2(int64_t in, int64_t out, bool align_corners, float scale) {
  if (out <= 1) return 0.0;
  if (align_corners) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return scale > 0 ? static_cast<float>(1. / scale) : static_cast<float>(in) / out;
}

// Bilinear: align_mode 0 without align_corners samples at half-pixel centres; `ratio` is the
// axis's (InterpGeom's rh / rw).
TIDE_OPS_HOST_DEVICE inline InterpTap BilinearTapByRatio(int64_t k, int64_t in, double ratio,
                                                         bool align_corners, int align_mode) {
  const bool half_pixel = align_mode == 0 && !align_corners;
  double src = half_pixel ? ratio * (double(k) + 0.5) - 0.5 : ratio * double(k);
  if (src < 0) src = 0;
  int64_t lo = static_cast<int64_t>(src);
  if (lo > in - 1) lo = in - 1;
  const int64_t hi = lo + 1 < in ? lo + 1 : lo;
  const double frac = src - double(lo);
  return {lo, hi, 1.0 - frac, frac};
}

// Nearest: align_corners rounds (half away from zero), else truncates.
TIDE_OPS_HOST_DEVICE inline InterpTap NearestTapByRatio(int64_t k, int64_t in, double ratio,
                                                        bool align_corners) {
  int64_t i = align_corners ? static_cast<int64_t>(::lround(ratio * double(k)))
                            : static_cast<int64_t>(ratio * double(k));
  if (i > in - 1) i = in - 1;
  return {i, i, 1.0, 0.0};
}

// Whether the op is one of Paddle 2.x's *_interp_v2 (per-axis scale list, ratio 1 / scale) or
// its grad.
inline bool IsInterpV2(std::string op) {
  if (op.size() > 5 && op.compare(op.size() - 5, 5, "_grad") == 0) op.resize(op.size() - 5);
  return op.size() > 3 && op.compare(op.size() - 3, 3, "_v2") == 0;
}

// Where Out's (h, w) comes from: given outright (out_h / out_w, SizeTensor or OutSize), or X's
// times scale when scale > 0 (floored, as Fluid's float product).
struct InterpSize {
  int64_t h = -1, w = -1;
  float scale_h = 0, scale_w = 0;  // > 0: Out's size (unless given outright) and v2's ratio
  bool v2 = false;                 // an *_interp_v2 op
  bool align_corners = false;
  const char* from = "out_h/out_w";  // named in the errors
};

// The v2 ops' scale attribute: [] (none), [s] or [h, w].
inline void InterpScaleListV2(const char* op, const std::vector<float>& v, InterpSize* s) {
  TIDE_CHECK(v.size() <= 2, "op '", op, "': scale needs 0, 1 or 2 values, got ", v.size());
  if (v.empty()) return;
  s->scale_h = v[0];
  s->scale_w = v.size() == 2 ? v[1] : v[0];
  if (s->scale_h <= 0 || s->scale_w <= 0) s->scale_h = s->scale_w = 0;  // Paddle: both or none
}

// At run time, Fluid 1.8's precedence: SizeTensor (one value per variable: h, w) over OutSize
// (h, w) over Scale (one value) over the scale attribute, each scale only when > 0, over out_h /
// out_w. The v2 ops (Paddle's phi kernels) keep Scale's or scale's value for the ratio under an
// OutSize, and take scale as a list ([h, w] or one for both). Each device reads the tensors its
// way: `values(param)` every value of a tensor, `scalars(param)` one value per variable of a
// duplicable input (tide/ops/int_inputs.hpp's IntValues / IntScalars on the host), `real(param)`
// the one value of a float tensor.
template <typename Values, typename Scalars, typename Real>
InterpSize InterpSizeFromInputs(const KernelContext& ctx, Values values, Scalars scalars,
                                Real real) {
  const char* op = ctx.op_type();
  InterpSize s;
  s.h = ctx.Attr<int32_t>("out_h");
  s.w = ctx.Attr<int32_t>("out_w");
  s.v2 = IsInterpV2(op);
  s.align_corners = ctx.Attr<bool>("align_corners");
  if (ctx.HasInput("SizeTensor")) {
    const std::vector<int64_t> v = scalars("SizeTensor");
    TIDE_CHECK(v.size() == 2, "op '", op,
               "': SizeTensor must be 2 one-element tensors (h, w), got ", v.size());
    s.h = v[0];
    s.w = v[1];
    s.from = "SizeTensor";
    return s;
  }
  auto take_out_size = [&] {
    const std::vector<int64_t> v = values("OutSize");
    TIDE_CHECK(v.size() == 2, "op '", op, "': OutSize must hold 2 values (h, w), got ",
               ToString(v));
    s.h = v[0];
    s.w = v[1];
    s.from = "OutSize";
  };
  const bool out_size = ctx.HasInput("OutSize");
  if (out_size && !s.v2) {  // v1: OutSize, its own ratio; Scale is not read
    take_out_size();
    return s;
  }
  const bool tensor = ctx.HasInput("Scale");
  if (tensor) {
    const float scale = static_cast<float>(real("Scale"));
    if (scale > 0) s.scale_h = s.scale_w = scale;
  } else if (s.v2) {
    InterpScaleListV2(op, ctx.template Attr<std::vector<float>>("scale"), &s);
  } else if (ctx.Attr<float>("scale") > 0) {
    s.scale_h = s.scale_w = ctx.Attr<float>("scale");
  }
  if (s.scale_h > 0) s.from = tensor ? "Scale" : "scale";
  if (out_size) take_out_size();  // v2: the size, with the scale's ratio
  return s;
}

// At build time: SizeTensor leaves out_h / out_w (where Fluid's layers put -1 for each Variable),
// OutSize or Scale an unknown size, else as at run time.
inline InterpSize InterpSizeAtBuild(const InferShapeContext& ctx) {
  InterpSize s;
  s.h = ctx.Attr<int32_t>("out_h");
  s.w = ctx.Attr<int32_t>("out_w");
  s.v2 = IsInterpV2(ctx.op_type());
  s.align_corners = ctx.Attr<bool>("align_corners");
  if (ctx.HasInput("SizeTensor")) {
    TIDE_CHECK(ctx.InputCount("SizeTensor") == 2, "op '", ctx.op_type(),
               "': SizeTensor must be 2 one-element tensors (h, w), got ",
               ctx.InputCount("SizeTensor"));
    s.from = "SizeTensor";
  } else if (ctx.HasInput("OutSize") || ctx.HasInput("Scale")) {
    s.h = s.w = -1;
    s.from = ctx.HasInput("OutSize") ? "OutSize" : "Scale";
  } else if (s.v2) {
    InterpScaleListV2(ctx.op_type(), ctx.Attr<std::vector<float>>("scale"), &s);
    if (s.scale_h > 0) s.from = "scale";
  } else if (ctx.Attr<float>("scale") > 0) {
    s.scale_h = s.scale_w = ctx.Attr<float>("scale");
    s.from = "scale";
  }
  return s;
}

// Out's (h, w) for X [N, C, H, W], or [N, H, W, C] when nhwc. At run time each must be > 0; at
// build time an unknown (-1) passes.
inline std::pair<int64_t, int64_t> InterpOutSize(const char* op, const Dims& x, const InterpSize& s,
                                                 bool nhwc, bool run_time) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be ", nhwc ? "[N, H, W, C]" : "[N, C, H, W]",
             ", got ", ToString(x));
  const int64_t xh = nhwc ? x[1] : x[2], xw = nhwc ? x[2] : x[3];
  int64_t h = s.h, w = s.w;
  if (s.scale_h > 0 && std::string(s.from) != "OutSize") {
    h = xh < 0 ? -1 : static_cast<int64_t>(xh * s.scale_h);
    w = xw < 0 ? -1 : static_cast<int64_t>(xw * s.scale_w);
  }
  const bool ok = run_time ? h > 0 && w > 0 : (h > 0 || h == -1) && (w > 0 || w == -1);
  TIDE_CHECK(ok, "op '", op, "': the output size must be positive (from ", s.from, "), got ", h,
             " x ", w);
  return {h, w};
}

// X and Out of an interpolation in NCHW or NHWC (data_layout): the flat offsets of their
// elements.
struct InterpGeom {
  int64_t n, c, ih, iw, oh, ow;
  bool nhwc;
  double rh = 0, rw = 0;  // source pixels per output pixel (InterpRatio / InterpRatioV2)
  TIDE_OPS_HOST_DEVICE int64_t XAt(int64_t b, int64_t ch, int64_t h, int64_t w) const {
    return nhwc ? ((b * ih + h) * iw + w) * c + ch : ((b * c + ch) * ih + h) * iw + w;
  }
  TIDE_OPS_HOST_DEVICE int64_t OutAt(int64_t b, int64_t ch, int64_t h, int64_t w) const {
    return nhwc ? ((b * oh + h) * ow + w) * c + ch : ((b * c + ch) * oh + h) * ow + w;
  }
  // (b, ch, h, w) of Out's element e.
  TIDE_OPS_HOST_DEVICE void OutCoords(int64_t e, int64_t* b, int64_t* ch, int64_t* h,
                                      int64_t* w) const {
    if (nhwc) {
      *ch = e % c;
      e /= c;
    }
    *w = e % ow;
    e /= ow;
    *h = e % oh;
    e /= oh;
    if (!nhwc) {
      *ch = e % c;
      e /= c;
    }
    *b = e;
  }
  Dims OutDims() const { return nhwc ? Dims{n, oh, ow, c} : Dims{n, c, oh, ow}; }
};

// X's geometry and Out's size (InterpOutSize's rules).
inline InterpGeom GetInterpGeom(const char* op, const Dims& x, bool nhwc, const InterpSize& size,
                                bool run_time = true) {
  const auto hw = InterpOutSize(op, x, size, nhwc, run_time);
  InterpGeom g = nhwc ? InterpGeom{x[0], x[3], x[1], x[2], hw.first, hw.second, true}
                      : InterpGeom{x[0], x[1], x[2], x[3], hw.first, hw.second, false};
  // An image of no rows or columns has no pixel to sample (an empty batch or channels is fine).
  TIDE_CHECK(!run_time || g.n * g.c == 0 || (g.ih > 0 && g.iw > 0), "op '", op, "': X ",
             ToString(x), " has no pixels to interpolate");
  const bool ac = size.align_corners;
  g.rh = size.v2 ? InterpRatioV2(g.ih, g.oh, ac, size.scale_h) : InterpRatio(g.ih, g.oh, ac);
  g.rw = size.v2 ? InterpRatioV2(g.iw, g.ow, ac, size.scale_w) : InterpRatio(g.iw, g.ow, ac);
  // Paddle's v2 kernels copy X when Out has its size (a scale of 1.2 on 4 rows gives 4, read
  // as they are, not at the step 1 / 1.2): a step of 1 is that copy.
  if (size.v2 && g.oh == g.ih && g.ow == g.iw) g.rh = g.rw = 1.0;
  return g;
}

// The interps' X layout (data_layout: NCHW or NHWC).
template <typename Ctx>
bool InterpNhwc(const Ctx& ctx) {
  return ChannelsLast(ctx.op_type(), "data_layout", ctx.template Attr<std::string>("data_layout"));
}

// An interp's geometry at run time, its size inputs read as InterpSizeFromInputs says.
template <typename Values, typename Scalars, typename Real>
InterpGeom InterpGeomFromInputs(const KernelContext& ctx, const Dims& x, Values values,
                                Scalars scalars, Real real) {
  return GetInterpGeom(ctx.op_type(), x, InterpNhwc(ctx),
                       InterpSizeFromInputs(ctx, values, scalars, real));
}

// Out's dims at build time (unknown sizes -1).
inline Dims InterpOutDimsAtBuild(const InferShapeContext& ctx, const Dims& x) {
  return GetInterpGeom(ctx.op_type(), x, InterpNhwc(ctx), InterpSizeAtBuild(ctx), false).OutDims();
}

// ---------------------------------------------------------------------------------------------
// pad2d: paddings [top, bottom, left, right] on H and W of NCHW or NHWC X.
enum class Pad2dMode { kConstant, kReflect, kEdge };

struct Pad2dGeom {
  int64_t n, c, h, w, oh, ow;
  bool nhwc;
  int top, left;
  Pad2dMode mode;
};

inline Pad2dGeom GetPad2dGeom(const char* op, const Dims& x, const std::vector<int32_t>& p,
                              const std::string& mode, const std::string& data_format) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must have rank 4, got ", ToString(x));
  TIDE_CHECK(p.size() == 4, "op '", op, "': paddings needs 4 values (top, bottom, left, right)");
  TIDE_CHECK(mode == "constant" || mode == "reflect" || mode == "edge", "op '", op,
             "': mode must be constant, reflect or edge, got '", mode, "'");
  Pad2dGeom g;
  g.nhwc = data_format == "NHWC";
  g.n = x[0];
  g.c = g.nhwc ? x[3] : x[1];
  g.h = g.nhwc ? x[1] : x[2];
  g.w = g.nhwc ? x[2] : x[3];
  g.top = p[0];
  g.left = p[2];
  g.mode = mode == "reflect" ? Pad2dMode::kReflect
                             : (mode == "edge" ? Pad2dMode::kEdge : Pad2dMode::kConstant);
  for (int v : p) TIDE_CHECK(v >= 0, "op '", op, "': paddings must be >= 0");
  if (g.mode == Pad2dMode::kReflect)
    TIDE_CHECK(g.h < 0 || (p[0] < g.h && p[1] < g.h && p[2] < g.w && p[3] < g.w), "op '", op,
               "': reflect paddings must be smaller than the padded dims (X ", ToString(x), ")");
  g.oh = g.h < 0 ? -1 : g.h + p[0] + p[1];
  g.ow = g.w < 0 ? -1 : g.w + p[2] + p[3];
  // Edge padding repeats X's border: a padded image of X's with no rows or columns has none.
  if (g.mode == Pad2dMode::kEdge && g.oh > 0 && g.ow > 0)
    TIDE_CHECK(g.h != 0 && g.w != 0, "op '", op, "': edge padding of X ", ToString(x),
               ", which has no rows or columns to repeat");
  return g;
}

inline Dims Pad2dOutDims(const Pad2dGeom& g) {
  return g.nhwc ? Dims{g.n, g.oh, g.ow, g.c} : Dims{g.n, g.c, g.oh, g.ow};
}

// The source index of padded index i over a dim of n (-1: a constant pad).
TIDE_OPS_HOST_DEVICE inline int64_t Pad2dSource(Pad2dMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == Pad2dMode::kReflect) return i < 0 ? -i : 2 * (n - 1) - i;
  if (mode == Pad2dMode::kEdge) return i < 0 ? 0 : n - 1;
  return -1;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INTERP_PAD2D_HPP_
