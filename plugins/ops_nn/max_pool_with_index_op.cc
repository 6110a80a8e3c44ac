// max_pool_with_index_op.cc: Paddle 2.x's max_pool2d_with_index (nn.AdaptiveMaxPool2D,
// F.adaptive_max_pool2d, MaxPool2D with return_mask): the max of each window of X [N, C, H, W]
// and its position in the input plane (Mask, int32 h * W + w), windows as Paddle's CPU kernel
// makes them: adaptive (window i of out spans [floor(i H / out), ceil((i + 1) H / out)), ksize the
// output size), global_pooling (one window of the whole plane), or ksize / strides / paddings
// (clipped to the image; ceil_mode rounds the output size up). The first of equal maxima wins.
// The grad adds Out@GRAD to X@GRAD at Mask.
#include <limits>

#include "common.h"

namespace ops_nn {
namespace {

struct MaxPoolIndexGeom {
  int64_t n, c, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw;
  bool adaptive;
};

MaxPoolIndexGeom GetMaxPoolIndexGeom(const char* op, const Dims& x, std::vector<int32_t> ksize,
                                     const std::vector<int32_t>& strides,
                                     std::vector<int32_t> paddings, bool global, bool adaptive,
                                     bool ceil_mode) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x));
  TIDE_CHECK(ksize.size() == 2 && strides.size() == 2 && paddings.size() == 2, "op '", op,
             "': ksize, strides and paddings need 2 values each (h, w), got ", ksize.size(), ", ",
             strides.size(), " and ", paddings.size());
  MaxPoolIndexGeom g;
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.adaptive = adaptive && !global;
  if (global) {
    ksize = {static_cast<int32_t>(g.h), static_cast<int32_t>(g.w)};
    paddings = {0, 0};
  }
  g.kh = ksize[0];
  g.kw = ksize[1];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = paddings[0];
  g.pw = paddings[1];
  TIDE_CHECK(g.kh > 0 && g.kw > 0 || (global && (g.h <= 0 || g.w <= 0)), "op '", op,
             "': ksize must be > 0, got [", g.kh, ", ", g.kw, "]");
  if (g.adaptive) {
    g.oh = g.kh;
    g.ow = g.kw;
    return g;
  }
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0");
  auto out = [&](int64_t in, int64_t k, int64_t s, int64_t p) -> int64_t {
    if (in < 0) return -1;
    const int64_t span = in + 2 * p - k;
    TIDE_CHECK(span >= 0, "op '", op, "': the window ", k, " is larger than the padded input ",
               in + 2 * p, " (X ", tide::ToString(x), ")");
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  };
  g.oh = out(g.h, g.kh, g.sh, g.ph);
  g.ow = out(g.w, g.kw, g.sw, g.pw);
  return g;
}

template <typename Ctx>
MaxPoolIndexGeom GeomOf(const Ctx& ctx, const Dims& x) {
  return GetMaxPoolIndexGeom(ctx.op_type(), x, ctx.template Attr<std::vector<int32_t>>("ksize"),
                             ctx.template Attr<std::vector<int32_t>>("strides"),
                             ctx.template Attr<std::vector<int32_t>>("paddings"),
                             ctx.template Attr<bool>("global_pooling"),
                             ctx.template Attr<bool>("adaptive"),
                             ctx.template Attr<bool>("ceil_mode"));
}

// The window [start, end) of output index i along one dim.
std::pair<int64_t, int64_t> Window(const MaxPoolIndexGeom& g, bool rows, int64_t i) {
  const int64_t in = rows ? g.h : g.w, out = rows ? g.oh : g.ow;
  if (g.adaptive) return {i * in / out, ((i + 1) * in + out - 1) / out};
  const int64_t k = rows ? g.kh : g.kw, s = rows ? g.sh : g.sw, p = rows ? g.ph : g.pw;
  const int64_t start = i * s - p;
  return {std::max<int64_t>(start, 0), std::min(start + k, in)};
}

void MaxPoolIndexInferShape(tide::InferShapeContext& ctx) {
  const MaxPoolIndexGeom g = GeomOf(ctx, ctx.InputDims("X"));
  ctx.SetOutputDims("Out", {g.n, g.c, g.oh, g.ow});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("Mask", {g.n, g.c, g.oh, g.ow});
  ctx.SetOutputDataType("Mask", TIDE_INT32);
}

template <typename T>
void MaxPoolIndexKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const MaxPoolIndexGeom g = GeomOf(ctx, x.dims());
  const Dims od{g.n, g.c, g.oh, g.ow};
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  int32_t* mask = ctx.Output("Mask").mutable_data<int32_t>(od, ctx.place());
  ParallelFor(ctx, g.n * g.c, g.h * g.w, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* plane = xd + pl * g.h * g.w;
      for (int64_t i = 0; i < g.oh; ++i) {
        const auto [h0, h1] = Window(g, true, i);
        for (int64_t j = 0; j < g.ow; ++j) {
          const auto [w0, w1] = Window(g, false, j);
          T best = std::numeric_limits<T>::lowest();
          int64_t at = -1;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w)
              if (best < plane[h * g.w + w]) {
                best = plane[h * g.w + w];
                at = h * g.w + w;
              }
          const int64_t oi = (pl * g.oh + i) * g.ow + j;
          o[oi] = best;
          mask[oi] = static_cast<int32_t>(at);
        }
      }
    }
  });
}

template <typename T>
void MaxPoolIndexGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), mask = ctx.Input("Mask");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const MaxPoolIndexGeom g = GeomOf(ctx, x.dims());
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), {g.n, g.c, g.oh, g.ow});
  tide::ops::CheckGradDims(op, "Mask", mask.dims(), {g.n, g.c, g.oh, g.ow});
  const int32_t* m = mask.data<int32_t>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  const int64_t per = g.oh * g.ow, plane = g.h * g.w;
  for (int64_t pl = 0; pl < g.n * g.c; ++pl)
    for (int64_t k = 0; k < per; ++k) {
      const int64_t at = m[pl * per + k];
      if (at < 0) continue;  // an empty window
      TIDE_CHECK(at < plane, "op '", op, "': Mask holds ", at, ", outside the plane of ", plane);
      dx[pl * plane + at] += gd[pl * per + k];
    }
}

tide::OpSchema MaxPoolIndexAttrs(tide::OpSchema s) {
  return s.Attr("ksize", std::vector<int32_t>{}, "the window (h, w); with adaptive the output size")
      .Attr("strides", std::vector<int32_t>{1, 1}, "the window's steps (h, w)")
      .Attr("paddings", std::vector<int32_t>{0, 0}, "padding of each side (h, w)")
      .Attr("global_pooling", false, "one window of the whole plane (ksize, paddings ignored)")
      .Attr("adaptive", false, "ksize is the output size, the windows spread evenly")
      .Attr("ceil_mode", false, "round the output size up (Paddle 3)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(MaxPoolIndexAttrs(tide::OpSchema("max_pool2d_with_index")
                                       .Comment("Out = the max of each window of X [N, C, H, W], "
                                                "Mask = its int32 position h * W + w.")
                                       .Input("X", "[N, C, H, W]")
                                       .Output("Out", "[N, C, out_h, out_w]")
                                       .Output("Mask", "int32 positions in the input plane"))
                     .KernelDataTypeFrom("X")
                     .InferShape(MaxPoolIndexInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("max_pool2d_with_index_grad")
                           .Input("X", g.Input("X"))
                           .Input("Mask", g.Output("Mask"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(MaxPoolIndexAttrs(tide::OpSchema("max_pool2d_with_index_grad")
                                       .Comment("X@GRAD of max_pool2d_with_index: Out@GRAD added "
                                                "at Mask.")
                                       .Input("X")
                                       .Input("Mask")
                                       .Input(GradVarName("Out"))
                                       .Output(GradVarName("X")))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("max_pool2d_with_index", "cpu", MaxPoolIndexKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("max_pool2d_with_index_grad", "cpu", MaxPoolIndexGradKernel,
                     OPS_NN_FLOAT_TYPES);
