// interp_pad2d_ops.cc: bilinear_interp / nearest_interp (Fluid 1.x's align_corners and
// align_mode rules, out size from SizeTensor, OutSize, Scale, scale or out_h/out_w) and Paddle
// 2.x's bilinear_interp_v2 / nearest_interp_v2 / bicubic_interp_v2 (scale per axis, ratio
// 1 / scale; bicubic: Paddle's A = -0.75 over 4 x 4 clamped pixels), pad2d
// (constant, reflect, edge) and crop (a box of X at offsets), with grads. The interps and pad2d
// take NCHW or NHWC; trilinear_interp_v2, and nearest_interp_v2 on a 5-D X, NCDHW or NDHWC
// (interp3d.h).
#include <cmath>
#include <cstring>
#include <tide/ops/crop.hpp>
#include <tide/ops/interp_pad2d.hpp>

#include "common.h"
#include "interp3d.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// ---------------------------------------------------------------------------------------------
// Interpolation: per output row (or column) `k` source indices and their weights
// (tide/ops/interp_pad2d.hpp's two for bilinear and nearest, four for bicubic).
struct Taps {
  int k = 2;
  std::vector<int64_t> idx;  // [out, k]
  std::vector<double> w;     // [out, k]
};

// Paddle's bicubic (phi's interpolate kernel): the convolution with A = -0.75 over the four
// pixels around the source position, their indices clamped to the input; half-pixel centres
// without align_corners (align_mode is not read), the position not clamped at 0.
void BicubicTap(int64_t k, int64_t in, double ratio, bool align_corners, int64_t* idx, double* w) {
  constexpr double A = -0.75;
  const double src = align_corners ? ratio * double(k) : ratio * (double(k) + 0.5) - 0.5;
  const int64_t base = static_cast<int64_t>(std::floor(src));
  const double t = src - double(base);
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
  for (int m = 0; m < 4; ++m) idx[m] = std::min(std::max(base - 1 + m, int64_t(0)), in - 1);
}

Taps InterpTaps(const std::string& method, int64_t in, int64_t out, double ratio,
                bool align_corners, int align_mode) {
  Taps t;
  t.k = method == "bicubic" ? 4 : 2;
  t.idx.resize(out * t.k);
  t.w.resize(out * t.k);
  for (int64_t k = 0; k < out; ++k) {
    if (t.k == 4) {
      BicubicTap(k, in, ratio, align_corners, &t.idx[k * 4], &t.w[k * 4]);
      continue;
    }
    const tide::ops::InterpTap tap =
        method == "bilinear"
            ? tide::ops::BilinearTapByRatio(k, in, ratio, align_corners, align_mode)
            : tide::ops::NearestTapByRatio(k, in, ratio, align_corners);
    t.idx[2 * k] = tap.lo;
    t.idx[2 * k + 1] = tap.hi;
    t.w[2 * k] = tap.wlo;
    t.w[2 * k + 1] = tap.whi;
  }
  return t;
}

// X's layout (data_layout) and Out's size from the size inputs or the attributes.
tide::ops::InterpGeom InterpGeomOf(const KernelContext& ctx, const Dims& x) {
  return tide::ops::InterpGeomFromInputs(
      ctx, x, [&](const char* p) { return IntValues(ctx, p); },
      [&](const char* p) { return IntScalars(ctx, p); },
      [&](const char* p) { return tide::ops::FloatScalar(ctx, p); });
}

// The 5-D interps (nearest, trilinear) read by interp3d.h's rules.
bool IsInterp3d(const std::string& op, const Dims& x) {
  const bool trilinear = op.rfind("trilinear", 0) == 0;
  TIDE_CHECK(!trilinear || x.size() == 5, "op '", op, "': X must be 5-D [N, C, D, H, W], got ",
             tide::ToString(x));
  return trilinear || (op.rfind("nearest_interp_v2", 0) == 0 && x.size() == 5);
}

// Every value of a float tensor (Scale of a 5-D interp: 1 or 3 values).
std::vector<double> FloatValues(const KernelContext& ctx, const char* param) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64, "op '", ctx.op_type(), "': ", param,
             " must be float32 or float64, got ", tide::DataTypeName(t.dtype()));
  if (t.dtype() == TIDE_FP64)
    return std::vector<double>(t.data<double>(), t.data<double>() + t.numel());
  return std::vector<double>(t.data<float>(), t.data<float>() + t.numel());
}

Interp3dGeom Interp3dGeomOf(const KernelContext& ctx, const Dims& x) {
  return GetInterp3dGeom(
      ctx, x, true, [&](const char* p) { return IntValues(ctx, p); },
      [&](const char* p) { return IntScalars(ctx, p); },
      [&](const char* p) { return FloatValues(ctx, p); });
}

template <typename T, bool kGrad>
void Interp5d(KernelContext& ctx, const std::string& method) {
  Tensor x = ctx.Input("X");
  const Interp3dGeom g = Interp3dGeomOf(ctx, x.dims());
  const bool ac = ctx.Attr<bool>("align_corners");
  const int mode = ctx.Attr<int32_t>("align_mode");
  const std::string tap = method == "trilinear" ? "bilinear" : method;  // linear along each axis
  Taps taps[3];
  for (int a = 0; a < 3; ++a) taps[a] = InterpTaps(tap, g.in[a], g.out[a], g.ratio[a], ac, mode);
  if constexpr (!kGrad) {
    Interp3dLoop<T, false>(g, taps, x.data<T>(),
                           ctx.Output("Out").mutable_data<T>(g.OutDims(), ctx.place()));
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.OutDims());
    T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
    Interp3dLoop<T, true>(g, taps, dout.data<T>(), dx);
  }
}

template <typename T, bool kGrad>
void Interp(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const std::string op = ctx.op_type();
  const std::string method = op.substr(0, op.find('_'));  // bilinear, nearest, bicubic, trilinear
  if (IsInterp3d(op, x.dims())) return Interp5d<T, kGrad>(ctx, method);
  const tide::ops::InterpGeom g = InterpGeomOf(ctx, x.dims());
  const bool ac = ctx.Attr<bool>("align_corners");
  const int mode = ctx.Attr<int32_t>("align_mode");
  const Taps th = InterpTaps(method, g.ih, g.oh, g.rh, ac, mode);
  const Taps tw = InterpTaps(method, g.iw, g.ow, g.rw, ac, mode);
  const T* in = nullptr;
  T* o = nullptr;
  const T* gd = nullptr;
  T* dx = nullptr;
  if constexpr (!kGrad) {
    in = x.data<T>();
    o = ctx.Output("Out").mutable_data<T>(g.OutDims(), ctx.place());
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.OutDims());
    gd = dout.data<T>();
    dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  const int kh = th.k, kw = tw.k;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          const int64_t oi = g.OutAt(b, c, i, j);
          const int64_t* rows = &th.idx[i * kh];
          const int64_t* cols = &tw.idx[j * kw];
          const double* wr = &th.w[i * kh];
          const double* wc = &tw.w[j * kw];
          if constexpr (!kGrad) {
            double acc = 0;
            for (int a = 0; a < kh; ++a) {
              double row = 0;
              for (int e = 0; e < kw; ++e) row += wc[e] * in[g.XAt(b, c, rows[a], cols[e])];
              acc += wr[a] * row;
            }
            o[oi] = static_cast<T>(acc);
          } else {
            const double gv = gd[oi];
            for (int a = 0; a < kh; ++a)
              for (int e = 0; e < kw; ++e)
                dx[g.XAt(b, c, rows[a], cols[e])] += static_cast<T>(gv * wr[a] * wc[e]);
          }
        }
}
template <typename T>
void InterpKernel(KernelContext& c) {
  Interp<T, false>(c);
}
template <typename T>
void InterpGradKernel(KernelContext& c) {
  Interp<T, true>(c);
}

// The size inputs, which the grad op reads too.
constexpr const char* kSizeInputs[] = {"OutSize", "SizeTensor", "Scale"};

void InterpInferShape(tide::InferShapeContext& ctx) {
  // With a size input the kernel sets Out's dims; before, those sizes are -1.
  const Dims x = ctx.InputDims("X");
  if (IsInterp3d(ctx.op_type(), x)) {
    auto none = [](const char*) { return std::vector<int64_t>{}; };
    auto no_reals = [](const char*) { return std::vector<double>{}; };
    ctx.SetOutputDims("Out", GetInterp3dGeom(ctx, x, false, none, none, no_reals).OutDims());
  } else {
    ctx.SetOutputDims("Out", tide::ops::InterpOutDimsAtBuild(ctx, x));
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The scale attribute: one float (Fluid's interps), a list [h, w] or [s] with out_d (the v2 ops).
tide::OpSchema& ScaleAttr(tide::OpSchema& s, const std::string& type, bool doc) {
  if (!tide::ops::IsInterpV2(type))
    return s.Attr("scale", 0.0f, doc ? "output size = scale * input size when > 0" : "");
  return s
      .Attr("scale", std::vector<float>{},
            doc ? "[h, w] or [s]: output size = scale * input size when > 0, and the source "
                  "step 1 / scale (Paddle's scale_factor)"
                : "")
      .Attr("out_d", int32_t(-1), doc ? "output depth (5-D X only)" : "");
}

// The layouts an interp op (or its grad) accepts: the 5-D ones only where a 5-D X is taken.
std::vector<std::string> InterpLayouts(const std::string& type) {
  for (const char* op : {"nearest_interp_v2", "trilinear_interp_v2"})
    if (type == op || type == std::string(op) + "_grad") return {"NCHW", "NHWC", "NCDHW", "NDHWC"};
  return {"NCHW", "NHWC"};
}

tide::OpSchema InterpSchema(const std::string& type, const char* method) {
  tide::OpSchema s(type);
  ScaleAttr(s, type, true);
  return s
      .Comment(std::string("Out = X resized to (out_h, out_w) by ") + method +
               " interpolation (NCHW or NHWC); Out's size: SizeTensor, else OutSize, else X's "
               "times Scale or scale (> 0), else out_h/out_w (Fluid 1.8's order); align_corners "
               "maps the corner pixels onto each other." +
               (tide::ops::IsInterpV2(type)
                    ? " Paddle 2.x's v2: scale per axis, and with a scale the source step is 1 / "
                      "scale (not in / out), also under an OutSize. nearest_interp_v2 also and "
                      "trilinear_interp_v2 only take a 5-D X [N, C, D, H, W] (NCDHW / NDHWC), "
                      "resized to (out_d, out_h, out_w) along each axis (interp3d.h)."
                    : ""))
      .Input("X", "[N, C, H, W] (NCHW) or [N, H, W, C] (NHWC); 5-D for trilinear")
      .Input("OutSize", "int [2]: (h, w) (optional; over Scale and the attributes)")
      .AsDispensable()
      .Input("SizeTensor", "2 one-element int tensors: h, w (optional; over the others)")
      .AsDuplicable()
      .AsDispensable()
      .Input("Scale", "one float: Out is X's size times it (optional; over scale, out_h/out_w)")
      .AsDispensable()
      .Output("Out", "[N, C, out_h, out_w] or [N, out_h, out_w, C]")
      .Attr("out_h", int32_t(-1), "output height")
      .Attr("out_w", int32_t(-1), "output width")
      .Attr("interp_method", std::string(method), "the method (fixed by the op)")
      .Attr("align_corners", true, "align the corner pixels")
      .Attr("align_mode", int32_t(1),
            "0: half-pixel centres (without align_corners), 1: src = ratio * dst")
      .Attr("data_layout", std::string("NCHW"),
            "NCHW or NHWC; for a 5-D X (v2 nearest, trilinear) also NCDHW or NDHWC")
      .InSet(InterpLayouts(type))
      .KernelDataTypeFrom("X")
      .InferShape(InterpInferShape)
      .Grad([type](tide::GradMaker& g) {
        auto op = g.NewOp(type + "_grad");
        op.Input("X", g.Input("X"));
        for (const char* in : kSizeInputs)
          if (!g.Input(in).empty()) op.Input(in, g.Input(in));
        op.Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

tide::OpSchema InterpGradSchema(const std::string& type, const char* method) {
  tide::OpSchema s(type);
  ScaleAttr(s, type, false);
  return s.Input("X")
      .Input("OutSize")
      .AsDispensable()
      .Input("SizeTensor")
      .AsDuplicable()
      .AsDispensable()
      .Input("Scale")
      .AsDispensable()
      .Input(GradVarName("Out"))
      .Output(GradVarName("X"))
      .Attr("out_h", int32_t(-1))
      .Attr("out_w", int32_t(-1))
      .Attr("interp_method", std::string(method))
      .Attr("align_corners", true)
      .Attr("align_mode", int32_t(1))
      .Attr("data_layout", std::string("NCHW"))
      .InSet(InterpLayouts(type))
      .KernelDataTypeFrom("X")
      .InferShape(GradLike({"X"}));
}

// ---------------------------------------------------------------------------------------------
// pad2d: paddings [top, bottom, left, right] on H and W; mode constant (pad_value), reflect
// (mirror without the edge) or edge (repeat the edge); tide/ops/interp_pad2d.hpp's rules.
using tide::ops::Pad2dGeom;
using tide::ops::Pad2dSource;

template <typename Ctx>
Pad2dGeom GetPad2d(const Ctx& ctx, const Dims& x, const std::vector<int32_t>& p) {
  return tide::ops::GetPad2dGeom(ctx.op_type(), x, p, ctx.template Attr<std::string>("mode"),
                                 ctx.template Attr<std::string>("data_format"));
}
Dims Pad2dOut(const Pad2dGeom& g) { return tide::ops::Pad2dOutDims(g); }

std::vector<int32_t> Pad2dPaddings(const KernelContext& ctx) {
  if (ctx.HasInput("Paddings")) {
    Tensor t = ctx.Input("Paddings");
    TIDE_CHECK(t.numel() == 4 && t.dtype() == TIDE_INT32, "op '", ctx.op_type(),
               "': Paddings must be int32 [4]");
    return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + 4);
  }
  return ctx.Attr<std::vector<int32_t>>("paddings");
}

template <typename T, bool kGrad>
void Pad2d(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Pad2dGeom g = GetPad2d(ctx, x.dims(), Pad2dPaddings(ctx));
  const T pad = static_cast<T>(ctx.Attr<float>("pad_value"));
  auto x_at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return g.nhwc ? ((n * g.h + h) * g.w + w) * g.c + c : ((n * g.c + c) * g.h + h) * g.w + w;
  };
  auto o_at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    return g.nhwc ? ((n * g.oh + h) * g.ow + w) * g.c + c : ((n * g.c + c) * g.oh + h) * g.ow + w;
  };
  const T* src = kGrad ? nullptr : x.data<T>();
  T* o = nullptr;
  const T* gd = nullptr;
  T* dx = nullptr;
  if constexpr (!kGrad) {
    o = ctx.Output("Out").mutable_data<T>(Pad2dOut(g), ctx.place());
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), Pad2dOut(g));
    gd = dout.data<T>();
    dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t h = 0; h < g.oh; ++h) {
        const int64_t sh = Pad2dSource(g.mode, h - g.top, g.h);
        for (int64_t w = 0; w < g.ow; ++w) {
          const int64_t sw = Pad2dSource(g.mode, w - g.left, g.w);
          const bool inside = sh >= 0 && sw >= 0;
          if constexpr (!kGrad)
            o[o_at(n, c, h, w)] = inside ? src[x_at(n, c, sh, sw)] : pad;
          else if (inside)
            dx[x_at(n, c, sh, sw)] += gd[o_at(n, c, h, w)];
        }
      }
}
template <typename T>
void Pad2dKernel(KernelContext& c) {
  Pad2d<T, false>(c);
}
template <typename T>
void Pad2dGradKernel(KernelContext& c) {
  Pad2d<T, true>(c);
}

// ---------------------------------------------------------------------------------------------
// crop: Out = X[offsets : offsets + shape] (the box: tide/ops/crop.hpp).
tide::ops::CropGeom GetCrop(const KernelContext& ctx, const Dims& x) {
  return tide::ops::GetCropGeom(ctx, x, [](const Tensor& t) {
    return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.numel());
  });
}

template <typename T, bool kGrad>
void Crop(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const tide::ops::CropGeom g = GetCrop(ctx, x.dims());
  const std::vector<int64_t> xs = Strides(x.dims());
  auto offset = [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + g.offsets[d]) * xs[d];
    return off;
  };
  if constexpr (!kGrad) {
    const T* src = x.data<T>();
    T* o = ctx.Output("Out").mutable_data<T>(g.shape, ctx.place());
    ForEachIndex(g.shape,
                 [&](const std::vector<int64_t>& idx, int64_t i) { o[i] = src[offset(idx)]; });
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.shape);
    const T* gd = dout.data<T>();
    T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
    ForEachIndex(g.shape,
                 [&](const std::vector<int64_t>& idx, int64_t i) { dx[offset(idx)] = gd[i]; });
  }
}
template <typename T>
void CropKernel(KernelContext& c) {
  Crop<T, false>(c);
}
template <typename T>
void CropGradKernel(KernelContext& c) {
  Crop<T, true>(c);
}

tide::GradMakerFn ForwardInputsGrad(const std::string& grad, std::vector<std::string> extra) {
  return [grad, extra](tide::GradMaker& g) {
    auto op = g.NewOp(grad);
    op.Input("X", g.Input("X"));
    for (const auto& e : extra)
      if (!g.Input(e.c_str()).empty()) op.Input(e, g.Input(e.c_str()));
    op.Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  };
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(InterpSchema("bilinear_interp", "bilinear"));
TIDE_REGISTER_OP(InterpGradSchema("bilinear_interp_grad", "bilinear"));
TIDE_REGISTER_OP(InterpSchema("nearest_interp", "nearest"));
TIDE_REGISTER_OP(InterpGradSchema("nearest_interp_grad", "nearest"));
TIDE_REGISTER_KERNEL("bilinear_interp", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bilinear_interp_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nearest_interp", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nearest_interp_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_OP(InterpSchema("bilinear_interp_v2", "bilinear"));
TIDE_REGISTER_OP(InterpGradSchema("bilinear_interp_v2_grad", "bilinear"));
TIDE_REGISTER_OP(InterpSchema("nearest_interp_v2", "nearest"));
TIDE_REGISTER_OP(InterpGradSchema("nearest_interp_v2_grad", "nearest"));
TIDE_REGISTER_KERNEL("bilinear_interp_v2", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bilinear_interp_v2_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nearest_interp_v2", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nearest_interp_v2_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_OP(InterpSchema("bicubic_interp_v2", "bicubic"));
TIDE_REGISTER_OP(InterpGradSchema("bicubic_interp_v2_grad", "bicubic"));
TIDE_REGISTER_KERNEL("bicubic_interp_v2", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bicubic_interp_v2_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);
// 5-D only (interp3d.h); nearest_interp_v2 takes a 5-D X too.
TIDE_REGISTER_OP(InterpSchema("trilinear_interp_v2", "trilinear"));
TIDE_REGISTER_OP(InterpGradSchema("trilinear_interp_v2_grad", "trilinear"));
TIDE_REGISTER_KERNEL("trilinear_interp_v2", "cpu", InterpKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("trilinear_interp_v2_grad", "cpu", InterpGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("pad2d")
                     .Comment("Out = X padded on H and W by paddings [top, bottom, left, right]: "
                              "constant (pad_value), reflect or edge.")
                     .Input("X", "[N, C, H, W] (NCHW) or [N, H, W, C] (NHWC)")
                     .Input("Paddings", "int32 [4] (optional; overrides the attribute)")
                     .AsDispensable()
                     .Output("Out", "the padded input")
                     .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0}, "top, bottom, left, right")
                     .Attr("mode", std::string("constant"), "constant, reflect or edge")
                     .InSet({"constant", "reflect", "edge"})
                     .Attr("pad_value", 0.0f, "the constant mode's value")
                     .Attr("data_format", std::string("NCHW"), "NCHW or NHWC")
                     .InSet({"NCHW", "NHWC"})
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       Pad2dGeom g = GetPad2d(c, x, c.Attr<std::vector<int32_t>>("paddings"));
                       if (c.HasInput("Paddings")) g.oh = g.ow = -1;
                       c.SetOutputDims("Out", Pad2dOut(g));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad(ForwardInputsGrad("pad2d_grad", {"Paddings"})));
TIDE_REGISTER_OP(tide::OpSchema("pad2d_grad")
                     .Input("X")
                     .Input("Paddings")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0})
                     .Attr("mode", std::string("constant"))
                     .Attr("pad_value", 0.0f)
                     .Attr("data_format", std::string("NCHW"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("pad2d", "cpu", Pad2dKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pad2d_grad", "cpu", Pad2dGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("crop")
                     .Comment("Out = X[offsets : offsets + shape] (shape from Y's dims when given, "
                              "offsets from the Offsets tensor when given; a shape of -1 takes the "
                              "rest of the dim).")
                     .Input("X", "the input")
                     .Input("Y", "gives Out's dims (optional)")
                     .AsDispensable()
                     .Input("Offsets", "int32 offsets (optional)")
                     .AsDispensable()
                     .Output("Out", "the box")
                     .Attr("offsets", std::vector<int32_t>{}, "the box's first index per dim")
                     .Attr("shape", std::vector<int32_t>{}, "the box's dims")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       Dims out;
                       if (c.HasInput("Y")) {
                         out = c.InputDims("Y");
                       } else {
                         const auto s = c.Attr<std::vector<int32_t>>("shape");
                         out.assign(s.begin(), s.end());
                       }
                       TIDE_CHECK(out.size() == c.InputDims("X").size(), "op 'crop': shape ",
                                  tide::ToString(out), " needs one value per dim of X ",
                                  tide::ToString(c.InputDims("X")));
                       c.SetOutputDims("Out", out);
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad(ForwardInputsGrad("crop_grad", {"Y", "Offsets"})));
TIDE_REGISTER_OP(tide::OpSchema("crop_grad")
                     .Input("X")
                     .Input("Y")
                     .AsDispensable()
                     .Input("Offsets")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("offsets", std::vector<int32_t>{})
                     .Attr("shape", std::vector<int32_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("crop", "cpu", CropKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("crop_grad", "cpu", CropGradKernel, OPS_NN_FLOAT_TYPES);
