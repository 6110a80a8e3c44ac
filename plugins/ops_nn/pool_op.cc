// pool_op.cc: pool2d (max / avg over NCHW windows; global, ceil_mode, exclusive, adaptive) and
// its grad, with Fluid 1.x window rules: a window is clipped to the image (padding never wins a
// max); an exclusive avg divides by the clipped window's size, a non-exclusive one by kh * kw.
#include <cmath>
#include <limits>

#include "common.h"

namespace ops_nn {
namespace {

struct PoolGeom {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow;
  bool max, exclusive, adaptive;
};

int64_t PoolOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  if (in < 0) return -1;
  return ceil_mode ? (in - k + 2 * pad + stride - 1) / stride + 1 : (in - k + 2 * pad) / stride + 1;
}

template <typename Ctx>
PoolGeom GetGeom(const Ctx& ctx, const char* op, const Dims& x) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x));
  auto ksize = ctx.template Attr<std::vector<int32_t>>("ksize");
  auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.template Attr<std::vector<int32_t>>("paddings");
  CheckPair(op, "ksize", ksize);
  CheckPair(op, "strides", strides);
  CheckPair(op, "paddings", pads);
  PoolGeom g{};
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.max = ctx.template Attr<std::string>("pooling_type") == "max";
  g.exclusive = ctx.template Attr<bool>("exclusive");
  g.adaptive = ctx.template Attr<bool>("adaptive");
  const bool global = ctx.template Attr<bool>("global_pooling");
  const bool ceil_mode = ctx.template Attr<bool>("ceil_mode");
  g.kh = ksize[0];
  g.kw = ksize[1];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = pads[0];
  g.pw = pads[1];
  if (global) {  // one window over the whole image
    g.kh = g.h;
    g.kw = g.w;
    g.ph = g.pw = 0;
    g.sh = g.sw = 1;
    g.adaptive = false;
    g.oh = g.ow = 1;
    return g;
  }
  TIDE_CHECK(g.kh > 0 && g.kw > 0, "op '", op, "': ksize must be > 0, got [", g.kh, ", ", g.kw,
             "]");
  if (g.adaptive) {  // ksize is the output size; windows split the image evenly
    g.oh = g.kh;
    g.ow = g.kw;
    return g;
  }
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0, got [", g.ph, ", ",
             g.pw, "]");
  g.oh = PoolOutSize(g.h, g.kh, g.ph, g.sh, ceil_mode);
  g.ow = PoolOutSize(g.w, g.kw, g.pw, g.sw, ceil_mode);
  TIDE_CHECK((g.h < 0 || g.oh > 0) && (g.w < 0 || g.ow > 0), "op '", op,
             "': the output would be empty: X ", tide::ToString(x), ", ksize [", g.kh, ", ", g.kw,
             "], strides [", g.sh, ", ", g.sw, "], paddings [", g.ph, ", ", g.pw, "] give ", g.oh,
             " x ", g.ow);
  return g;
}

void PoolInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  PoolGeom g = GetGeom(ctx, ctx.op_type(), x);
  ctx.SetOutputDims("Out", {g.n, g.c, g.oh, g.ow});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The input window [y0, y1) x [x0, x1) of output (oy, ox), clipped to the image, and the
// divisor of an avg pool.
struct Window {
  int64_t y0, y1, x0, x1, size;
};
Window GetWindow(const PoolGeom& g, int64_t oy, int64_t ox) {
  Window win{};
  if (g.adaptive) {
    win.y0 = oy * g.h / g.oh;
    win.y1 = ((oy + 1) * g.h + g.oh - 1) / g.oh;
    win.x0 = ox * g.w / g.ow;
    win.x1 = ((ox + 1) * g.w + g.ow - 1) / g.ow;
    win.size = (win.y1 - win.y0) * (win.x1 - win.x0);
    return win;
  }
  win.y0 = oy * g.sh - g.ph;
  win.x0 = ox * g.sw - g.pw;
  win.y1 = std::min(win.y0 + g.kh, g.h);
  win.x1 = std::min(win.x0 + g.kw, g.w);
  win.y0 = std::max<int64_t>(win.y0, 0);
  win.x0 = std::max<int64_t>(win.x0, 0);
  const int64_t clipped =
      std::max<int64_t>(win.y1 - win.y0, 0) * std::max<int64_t>(win.x1 - win.x0, 0);
  win.size = g.exclusive ? clipped : g.kh * g.kw;
  if (clipped == 0) win.size = 0;  // a window wholly in the padding: output 0, no gradient
  return win;
}

template <typename T>
void PoolKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  PoolGeom g = GetGeom(ctx, op, x.dims());
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>({g.n, g.c, g.oh, g.ow}, ctx.place());
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = xd + p * plane;
      T* op_ = od + p * oplane;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          Window win = GetWindow(g, oy, ox);
          T r;
          if (win.size == 0) {
            r = T(0);
          } else if (g.max) {
            r = std::numeric_limits<T>::lowest();
            for (int64_t y = win.y0; y < win.y1; ++y)
              for (int64_t xx = win.x0; xx < win.x1; ++xx) r = std::max(r, xp[y * g.w + xx]);
          } else {
            r = T(0);
            for (int64_t y = win.y0; y < win.y1; ++y)
              for (int64_t xx = win.x0; xx < win.x1; ++xx) r += xp[y * g.w + xx];
            r /= static_cast<T>(win.size);
          }
          op_[oy * g.ow + ox] = r;
        }
    }
  });
}

// max: the gradient goes to the first maximum of the window (scan order), as Fluid's;
// avg: spread evenly over the window's divisor.
template <typename T>
void PoolGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  PoolGeom g = GetGeom(ctx, op, x.dims());
  Dims want{g.n, g.c, g.oh, g.ow};
  TIDE_CHECK(dout.dims() == want, "op '", op, "': Out@GRAD has dims ", tide::ToString(dout.dims()),
             ", expected ", tide::ToString(want));
  const T* xd = x.data<T>();
  const T* gd = dout.data<T>();
  T* dd = dx.mutable_data<T>(x.dims(), ctx.place());
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xp = xd + p * plane;
      const T* gp = gd + p * oplane;
      T* dp = dd + p * plane;
      std::fill(dp, dp + plane, T(0));
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          Window win = GetWindow(g, oy, ox);
          if (win.size == 0) continue;
          const T go = gp[oy * g.ow + ox];
          if (g.max) {
            int64_t arg = win.y0 * g.w + win.x0;
            for (int64_t y = win.y0; y < win.y1; ++y)
              for (int64_t xx = win.x0; xx < win.x1; ++xx)
                if (xp[y * g.w + xx] > xp[arg]) arg = y * g.w + xx;
            dp[arg] += go;
          } else {
            const T share = go / static_cast<T>(win.size);
            for (int64_t y = win.y0; y < win.y1; ++y)
              for (int64_t xx = win.x0; xx < win.x1; ++xx) dp[y * g.w + xx] += share;
          }
        }
    }
  });
}

tide::OpSchema PoolAttrs(tide::OpSchema s) {
  return s.Attr("pooling_type", std::string("max"), "\"max\" or \"avg\"")
      .InSet({"max", "avg"})
      .RequiredAttr("ksize", TIDE_ATTR_INTS,
                    "window size (h, w); the output size when adaptive; "
                    "ignored when global_pooling")
      .Attr("global_pooling", false, "pool each whole image to 1 x 1 (ksize and paddings ignored)")
      .Attr("strides", std::vector<int32_t>{1, 1}, "window stride (h, w)")
      .Attr("paddings", std::vector<int32_t>{0, 0},
            "padding (h, w) on each side; padded cells "
            "never win a max and an exclusive avg skips them")
      .Attr("exclusive", true,
            "avg: divide by the window's cells inside the image (true) or by "
            "kh * kw (false)")
      .Attr("adaptive", false,
            "ksize is the output size; window i spans "
            "[floor(i * H / oh), ceil((i + 1) * H / oh))")
      .Attr("ceil_mode", false, "output size rounds up: (H - k + 2p + s - 1) / s + 1")
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("data_format", std::string("AnyLayout"), "layout of X/Out: NCHW (AnyLayout)")
      .InSet({"NCHW", "AnyLayout"});
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(PoolAttrs(tide::OpSchema("pool2d")
                               .Comment("Max or average pooling of NCHW images over kh x kw "
                                        "windows. Out size per axis: (H - k + 2p) / s + 1, "
                                        "rounded up with ceil_mode.")
                               .Input("X", "the images, [N, C, H, W]")
                               .Output("Out", "the pooled images, [N, C, H_out, W_out]")
                               .InferShape(PoolInferShape)
                               .Grad([](tide::GradMaker& g) {
                                 g.NewOp("pool2d_grad")
                                     .Input("X", g.Input("X"))
                                     .Input("Out", g.Output("Out"))
                                     .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                     .Output(GradVarName("X"), g.InputGrad("X"))
                                     .CopyAttrs();
                               })));
TIDE_REGISTER_OP(PoolAttrs(tide::OpSchema("pool2d_grad")
                               .Comment("X@GRAD of pool2d.")
                               .Input("X", "the forward input")
                               .Input("Out", "the forward output (Fluid's signature; unused)")
                               .AsDispensable()
                               .Input(GradVarName("Out"), "gradient of Out")
                               .Output(GradVarName("X"), "gradient of X")
                               .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("pool2d", "cpu", PoolKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pool2d_grad", "cpu", PoolGradKernel, OPS_NN_FLOAT_TYPES);
