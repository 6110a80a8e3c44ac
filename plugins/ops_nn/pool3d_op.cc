// pool3d_op.cc: Paddle's pool3d (F.max_pool3d, F.avg_pool3d, F.adaptive_avg_pool3d, and the
// channel-window avg of F.local_response_norm) and its grad: max or avg over the windows of X
// [N, C, D, H, W] (NCDHW, or NDHWC on transposed copies), ksize / strides of 3 values, paddings of
// 3 or 6 (front, back, top, bottom, left, right), padding_algorithm, global_pooling, adaptive,
// ceil_mode, exclusive; the windows and divisors are pool_nd.h's (Paddle 3's rules). The max's
// gradient goes to the window's first maximum in scan order, as Paddle's.
#include "conv3d_geom.h"
#include "pool_nd.h"
#include "vol_layout.h"

namespace ops_nn {
namespace {

struct Pool3dGeom : PoolNdGeom {
  bool max = true, exclusive = true;
};

// Reads and checks pool3d's attributes for X's NCDHW dims (unknown dims allowed at compile time).
template <typename Ctx>
Pool3dGeom GetPool3dGeom(const Ctx& ctx, const char* op, const Dims& x) {
  Pool3dGeom g;
  static_cast<PoolNdGeom&>(g) = PoolNdInput(op, x, 3);
  const auto ksize = ctx.template Attr<std::vector<int32_t>>("ksize");
  const auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  TIDE_CHECK(ksize.size() == 3, "op '", op, "': ksize needs 3 values (d, h, w), got ",
             ksize.size());
  TIDE_CHECK(strides.size() == 3, "op '", op, "': strides needs 3 values (d, h, w), got ",
             strides.size());
  int64_t pb[3], pe[3];
  SixPaddings(op, ctx.template Attr<std::vector<int32_t>>("paddings"), pb, pe);
  g.max = ctx.template Attr<std::string>("pooling_type") == "max";
  g.exclusive = ctx.template Attr<bool>("exclusive");
  const bool global = ctx.template Attr<bool>("global_pooling");
  const bool adaptive = ctx.template Attr<bool>("adaptive") && !global;
  const bool ceil_mode = ctx.template Attr<bool>("ceil_mode");
  const std::string algo = tide::ops::PaddingAlgorithm(ctx, op);
  for (int a = 0; a < 3; ++a) {
    PoolAxis& ax = g.ax[a];
    if (global) {  // one window of the whole volume
      ax.k = ax.in;
      ax.out = 1;
      continue;
    }
    ax.k = ksize[a];
    TIDE_CHECK(ax.k > 0, "op '", op, "': ksize must be > 0, got ", ax.k, " on spatial axis ", a);
    if (adaptive) {  // ksize is the output size
      ax.adaptive = true;
      ax.out = ax.k;
      continue;
    }
    ax.s = strides[a];
    TIDE_CHECK(ax.s > 0, "op '", op, "': strides must be > 0, got ", ax.s, " on spatial axis ", a);
    ax.pb = pb[a];
    ax.pe = pe[a];
    tide::ops::ApplyPaddingAlgorithm(algo, ax.in, ax.k, ax.s, &ax.pb, &ax.pe);
    ax.out = PoolNdOutSize(ax.in, ax.k, ax.pb, ax.pe, ax.s, ceil_mode);
    TIDE_CHECK(ax.in < 0 || ax.out > 0, "op '", op, "': the output would be empty: X ",
               tide::ToString(x), ", ksize ", ax.k, ", stride ", ax.s, ", paddings ", ax.pb,
               " and ", ax.pe, " give size ", ax.out, " on spatial axis ", a);
  }
  return g;
}

template <typename Ctx>
Pool3dGeom GeomOf(const Ctx& ctx, const Dims& x) {
  return GetPool3dGeom(ctx, ctx.op_type(), VolChannelLast(ctx) ? NdhwcToNcdhwDims(x) : x);
}

void Pool3dInferShape(tide::InferShapeContext& ctx) {
  const Dims out = GeomOf(ctx, ctx.InputDims("X")).out_dims();
  ctx.SetOutputDims("Out", VolChannelLast(ctx) ? NcdhwToNdhwcDims(out) : out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// An avg window's divisor; 0 for a window wholly in the padding (output 0, no gradient).
int64_t AvgDivisor(const Pool3dGeom& g, const PoolNdWindow& win) {
  if (win.clipped == 0) return 0;
  return g.exclusive || g.ax[0].adaptive ? win.clipped : win.span;
}

template <typename T>
void Pool3dKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const bool last = VolChannelLast(ctx);
  const Pool3dGeom g = GeomOf(ctx, x.dims());
  const T* xd = AsNcdhw<T>(ctx, x, last);
  T* od = NcdhwOutput<T>(ctx, out, g.out_dims(), last);
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  ParallelFor(ctx, g.n * g.c, ivol + ovol, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* in = xd + p * ivol;
      T* o = od + p * ovol;
      ForEachPoolWindow(g, [&](int64_t i, const PoolNdWindow& win) {
        if (win.clipped == 0) {
          o[i] = T(0);
        } else if (g.max) {
          o[i] = WindowMax(g, win, in).first;
        } else {
          T sum = T(0);
          ForEachWindowCell(g, win, [&](int64_t c) { sum += in[c]; });
          o[i] = sum / static_cast<T>(AvgDivisor(g, win));
        }
      });
    }
  });
  StoreNdhwc(ctx, od, out, g.out_dims(), last);
}

template <typename T>
void Pool3dGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const bool last = VolChannelLast(ctx);
  const Pool3dGeom g = GeomOf(ctx, x.dims());
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(),
                           last ? NcdhwToNdhwcDims(g.out_dims()) : g.out_dims());
  const Dims x_ncdhw = last ? NdhwcToNcdhwDims(x.dims()) : x.dims();
  const T* xd = AsNcdhw<T>(ctx, x, last);
  const T* gd = AsNcdhw<T>(ctx, dout, last);
  T* dd = NcdhwOutput<T>(ctx, dx, x_ncdhw, last);
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  ParallelFor(ctx, g.n * g.c, ivol + ovol, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* in = xd + p * ivol;
      const T* go = gd + p * ovol;
      T* d = dd + p * ivol;
      std::fill(d, d + ivol, T(0));
      ForEachPoolWindow(g, [&](int64_t i, const PoolNdWindow& win) {
        if (win.clipped == 0) return;
        if (g.max) {
          const int64_t at = WindowMax(g, win, in).second;
          if (at >= 0) d[at] += go[i];
          return;
        }
        const T share = go[i] / static_cast<T>(AvgDivisor(g, win));
        ForEachWindowCell(g, win, [&](int64_t c) { d[c] += share; });
      });
    }
  });
  StoreNdhwc(ctx, dd, dx, x_ncdhw, last);
}

tide::OpSchema Pool3dAttrs(tide::OpSchema s) {
  return s.Attr("pooling_type", std::string("max"), "\"max\" or \"avg\"")
      .InSet({"max", "avg"})
      .RequiredAttr("ksize", TIDE_ATTR_INTS,
                    "window size (d, h, w); the output size when adaptive; ignored when "
                    "global_pooling")
      .Attr("global_pooling", false, "pool each whole volume to 1 x 1 x 1")
      .Attr("strides", std::vector<int32_t>{1, 1, 1}, "window stride (d, h, w)")
      .Attr("paddings", std::vector<int32_t>{0, 0, 0},
            "padding (d, h, w) on each side, or (front, back, top, bottom, left, right); padded "
            "cells never win a max and an exclusive avg skips them")
      .Attr("padding_algorithm", std::string("EXPLICIT"),
            "EXPLICIT (paddings), VALID (none) or SAME (output ceil(in / stride))")
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("exclusive", true,
            "avg: divide by the window's cells inside the input (true) or inside the padded "
            "input (false)")
      .Attr("adaptive", false,
            "ksize is the output size; window i spans [floor(i * D / od), ceil((i + 1) * D / od))")
      .Attr("ceil_mode", false, "output size rounds up: (D - k + p_begin + p_end + s - 1) / s + 1")
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("data_format", std::string("NCDHW"), "layout of X / Out: NCDHW or NDHWC")
      .InSet({"NCDHW", "NDHWC", "AnyLayout", "NCHW", "NHWC"})
      .Attr("is_test", false, "Paddle's inference hint (ignored)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(Pool3dAttrs(tide::OpSchema("pool3d")
                                 .Comment("Max or average pooling of NCDHW volumes over kd x kh x "
                                          "kw windows. Out size per axis: (D - k + p_begin + "
                                          "p_end) / s + 1, rounded up with ceil_mode.")
                                 .Input("X",
                                        "the volumes, [N, C, D, H, W] (NDHWC: [N, D, H, W, C])")
                                 .Output("Out", "the pooled volumes, [N, C, OD, OH, OW]")
                                 .KernelDataTypeFrom("X")
                                 .InferShape(Pool3dInferShape)
                                 .Grad([](tide::GradMaker& g) {
                                   g.NewOp("pool3d_grad")
                                       .Input("X", g.Input("X"))
                                       .Input("Out", g.Output("Out"))
                                       .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                       .Output(GradVarName("X"), g.InputGrad("X"))
                                       .CopyAttrs();
                                 })));
TIDE_REGISTER_OP(Pool3dAttrs(tide::OpSchema("pool3d_grad")
                                 .Comment("X@GRAD of pool3d.")
                                 .Input("X", "the forward input")
                                 .Input("Out", "the forward output (Paddle's signature; unused)")
                                 .AsDispensable()
                                 .Input(GradVarName("Out"), "gradient of Out")
                                 .Output(GradVarName("X"), "gradient of X")
                                 .KernelDataTypeFrom("X")
                                 .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("pool3d", "cpu", Pool3dKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pool3d_grad", "cpu", Pool3dGradKernel, OPS_NN_FLOAT_TYPES);
