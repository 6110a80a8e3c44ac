// lp_pool2d_op.cc: Paddle's lp_pool2d (F.lp_pool2d, power-average pooling): Out = (sum of x^p
// over the window)^(1 / p), p = norm_type (not 0; inf: the window's max), over pool2d's windows
// (tide/ops/pool.hpp's geometry: ksize, strides, paddings, padding_algorithm, ceil_mode,
// global_pooling, adaptive; clipped to the image, so the padding adds nothing) walked by
// pool_nd.h, NCHW or NHWC. As Paddle's kernel, x^p is not of |x| (a negative x under an odd p
// gives NaN). The grad: Out@GRAD x^(p - 1) Out^(1 - p), or for inf to the window's first max.
#include <cmath>
#include <limits>
#include <tide/ops/pool.hpp>

#include "layout.h"
#include "pool_nd.h"

namespace ops_nn {
namespace {

// pool2d's geometry (NCHW dims) as pool_nd.h's window walk of depth 1.
template <typename Ctx>
PoolNdGeom LpPoolGeom(const Ctx& ctx, const Dims& x) {
  const tide::ops::PoolGeom p = tide::ops::GetPoolGeom(ctx, ctx.op_type(), x);
  PoolNdGeom g = PoolNdInput(ctx.op_type(), x, 2);
  const bool adaptive = p.adaptive && !ctx.template Attr<bool>("global_pooling");
  g.ax[1] = PoolAxis{p.h, p.oh, p.kh, p.sh, p.ph, p.ph_end, adaptive};
  g.ax[2] = PoolAxis{p.w, p.ow, p.kw, p.sw, p.pw, p.pw_end, adaptive};
  return g;
}

template <typename Ctx>
double NormType(const Ctx& ctx) {
  const float p = ctx.template Attr<float>("norm_type");
  TIDE_CHECK(p != 0 && !std::isnan(p), "op '", ctx.op_type(),
             "': norm_type must be nonzero (inf: max pooling), got ", p);
  return p;
}

void LpPoolShape(tide::InferShapeContext& ctx) {
  NormType(ctx);
  const bool last = ChannelLast(ctx);
  const Dims x = ctx.InputDims("X");
  const Dims out = LpPoolGeom(ctx, last ? NhwcToNchwDims(x) : x).out_dims();
  ctx.SetOutputDims("Out", last ? NchwToNhwcDims(out) : out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void LpPoolKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const bool last = ChannelLast(ctx);
  const double p = NormType(ctx);
  const PoolNdGeom g = LpPoolGeom(ctx, last ? NhwcToNchwDims(x.dims()) : x.dims());
  const T* xd = AsNchw<T>(ctx, x, last);
  T* od = NchwOutput<T>(ctx, out, g.out_dims(), last);
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  ParallelFor(ctx, g.n * g.c, ivol + ovol, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* in = xd + pl * ivol;
      T* o = od + pl * ovol;
      ForEachPoolWindow(g, [&](int64_t i, const PoolNdWindow& win) {
        if (std::isinf(p)) {
          o[i] = win.clipped ? WindowMax(g, win, in).first : T(0);
          return;
        }
        T sum = T(0);
        ForEachWindowCell(g, win, [&](int64_t c) { sum += static_cast<T>(std::pow(in[c], p)); });
        o[i] = static_cast<T>(std::pow(sum, 1.0 / p));
      });
    }
  });
  StoreNhwc(ctx, od, out, g.out_dims(), last);
}

template <typename T>
void LpPoolGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const bool last = ChannelLast(ctx);
  const double p = NormType(ctx);
  const Dims x_nchw = last ? NhwcToNchwDims(x.dims()) : x.dims();
  const PoolNdGeom g = LpPoolGeom(ctx, x_nchw);
  const Dims want = last ? NchwToNhwcDims(g.out_dims()) : g.out_dims();
  tide::ops::CheckGradDims(ctx.op_type(), "Out", out.dims(), want);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), want);
  const T* xd = AsNchw<T>(ctx, x, last);
  const T* od = AsNchw<T>(ctx, out, last);
  const T* gd = AsNchw<T>(ctx, dout, last);
  T* dd = NchwOutput<T>(ctx, dx, x_nchw, last);
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  ParallelFor(ctx, g.n * g.c, ivol + ovol, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* in = xd + pl * ivol;
      const T* y = od + pl * ovol;
      const T* go = gd + pl * ovol;
      T* d = dd + pl * ivol;
      std::fill(d, d + ivol, T(0));
      ForEachPoolWindow(g, [&](int64_t i, const PoolNdWindow& win) {
        if (win.clipped == 0) return;
        if (std::isinf(p)) {
          const int64_t at = WindowMax(g, win, in).second;
          if (at >= 0) d[at] += go[i];
          return;
        }
        const double scale = static_cast<double>(go[i]) * std::pow(double(y[i]), 1.0 - p);
        ForEachWindowCell(
            g, win, [&](int64_t c) { d[c] += static_cast<T>(scale * std::pow(in[c], p - 1)); });
      });
    }
  });
  StoreNhwc(ctx, dd, dx, x_nchw, last);
}

// pool2d's attributes (ksize, the window; pooling_type lp), with norm_type.
tide::OpSchema LpPoolAttrs(tide::OpSchema s, bool doc) {
  auto d = [doc](const char* text) { return std::string(doc ? text : ""); };
  return s.RequiredAttr("ksize", TIDE_ATTR_INTS, d("window (h, w); the output size when adaptive"))
      .Attr("strides", std::vector<int32_t>{1, 1}, d("stride (h, w)"))
      .Attr("paddings", std::vector<int32_t>{0, 0},
            d("(h, w) or (top, bottom, left, right); padding adds nothing to a window"))
      .Attr("ceil_mode", false, d("round the output size up"))
      .Attr("exclusive", true, d("(pool2d's; no divisor here)"))
      .Attr("data_format", std::string("NCHW"), d("NCHW or NHWC"))
      .Attr("pooling_type", std::string("lp"), d("lp (fixed)"))
      .InSet({"lp"})
      .Attr("global_pooling", false, d("one window of the whole image"))
      .Attr("adaptive", false, d("ksize is the output size, windows split the image evenly"))
      .Attr("padding_algorithm", std::string("EXPLICIT"), d("EXPLICIT, SAME or VALID"))
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("norm_type", 0.0f, d("p (nonzero; inf: max)"));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LpPoolAttrs(tide::OpSchema("lp_pool2d"), true)
                     .Comment("Out = (sum of X^norm_type over each window)^(1 / norm_type) "
                              "(F.lp_pool2d; norm_type inf: the max).")
                     .Input("X", "[N, C, H, W] (NCHW) or [N, H, W, C] (NHWC)")
                     .Output("Out", "the pooled X")
                     .KernelDataTypeFrom("X")
                     .InferShape(LpPoolShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lp_pool2d_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(LpPoolAttrs(tide::OpSchema("lp_pool2d_grad"), false)
                     .Input("X")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("lp_pool2d", "cpu", LpPoolKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lp_pool2d_grad", "cpu", LpPoolGradKernel, OPS_NN_FLOAT_TYPES);
