// max_pool_with_index_op.cc: Paddle's max_pool2d_with_index (nn.AdaptiveMaxPool2D,
// F.adaptive_max_pool2d, MaxPool2D with return_mask) and max_pool3d_with_index (the 3-D ones):
// the max of each window of X [N, C, H, W] or [N, C, D, H, W] and its position in the input plane
// or volume (Mask, int32 h * W + w, or (d * H + h) * W + w), windows as Paddle's CPU kernel makes
// them (pool_nd.h's loop, one for both ranks): adaptive (window i of out spans [floor(i H / out),
// ceil((i + 1) H / out)), ksize the output size), global_pooling (one window of the whole plane),
// or ksize / strides / paddings (clipped to the image; ceil_mode rounds the output size up). The
// first of equal maxima wins. The grad adds Out@GRAD to X@GRAD at Mask.
#include "pool_nd.h"

namespace ops_nn {
namespace {

int RankOf(const std::string& op) { return op.find("3d") != std::string::npos ? 3 : 2; }

PoolNdGeom GetMaxPoolIndexGeom(const char* op, const Dims& x, std::vector<int32_t> ksize,
                               const std::vector<int32_t>& strides, std::vector<int32_t> paddings,
                               bool global, bool adaptive, bool ceil_mode) {
  const int rank = RankOf(op);
  const char* axes = rank == 3 ? "(d, h, w)" : "(h, w)";
  PoolNdGeom g = PoolNdInput(op, x, rank);
  const size_t n = static_cast<size_t>(rank);
  TIDE_CHECK(ksize.size() == n && strides.size() == n && paddings.size() == n, "op '", op,
             "': ksize, strides and paddings need ", rank, " values each ", axes, ", got ",
             ksize.size(), ", ", strides.size(), " and ", paddings.size());
  adaptive = adaptive && !global;
  for (int a = 0; a < rank; ++a) {
    PoolAxis& ax = g.ax[3 - rank + a];
    ax.k = global ? ax.in : ksize[a];
    ax.s = strides[a];
    ax.pb = ax.pe = global ? 0 : paddings[a];
    TIDE_CHECK(ax.k > 0 || (global && ax.in <= 0), "op '", op, "': ksize must be > 0, got ",
               tide::ToString(Dims(ksize.begin(), ksize.end())));
    if (adaptive) {
      ax.adaptive = true;
      ax.out = ax.k;
      continue;
    }
    TIDE_CHECK(ax.s > 0, "op '", op, "': strides must be > 0, got ",
               tide::ToString(Dims(strides.begin(), strides.end())));
    TIDE_CHECK(ax.pb >= 0, "op '", op, "': paddings must be >= 0");
    if (ax.in < 0) {
      ax.out = -1;
      continue;
    }
    TIDE_CHECK(ax.in + 2 * ax.pb - ax.k >= 0, "op '", op, "': the window ", ax.k,
               " is larger than the padded input ", ax.in + 2 * ax.pb, " (X ", tide::ToString(x),
               ")");
    ax.out = PoolNdOutSize(ax.in, ax.k, ax.pb, ax.pe, ax.s, ceil_mode);
  }
  return g;
}

template <typename Ctx>
PoolNdGeom GeomOf(const Ctx& ctx, const Dims& x) {
  return GetMaxPoolIndexGeom(ctx.op_type(), x, ctx.template Attr<std::vector<int32_t>>("ksize"),
                             ctx.template Attr<std::vector<int32_t>>("strides"),
                             ctx.template Attr<std::vector<int32_t>>("paddings"),
                             ctx.template Attr<bool>("global_pooling"),
                             ctx.template Attr<bool>("adaptive"),
                             ctx.template Attr<bool>("ceil_mode"));
}

void MaxPoolIndexInferShape(tide::InferShapeContext& ctx) {
  const PoolNdGeom g = GeomOf(ctx, ctx.InputDims("X"));
  ctx.SetOutputDims("Out", g.out_dims());
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("Mask", g.out_dims());
  ctx.SetOutputDataType("Mask", TIDE_INT32);
}

template <typename T>
void MaxPoolIndexKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const PoolNdGeom g = GeomOf(ctx, x.dims());
  const Dims od = g.out_dims();
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  int32_t* mask = ctx.Output("Mask").mutable_data<int32_t>(od, ctx.place());
  const int64_t ivol = g.in_vol(), ovol = g.out_vol();
  ParallelFor(ctx, g.n * g.c, ivol, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl)
      ForEachPoolWindow(g, [&](int64_t i, const PoolNdWindow& win) {
        const auto [best, at] = WindowMax(g, win, xd + pl * ivol);
        o[pl * ovol + i] = best;
        mask[pl * ovol + i] = static_cast<int32_t>(at);
      });
  });
}

template <typename T>
void MaxPoolIndexGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), mask = ctx.Input("Mask");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const PoolNdGeom g = GeomOf(ctx, x.dims());
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), g.out_dims());
  tide::ops::CheckGradDims(op, "Mask", mask.dims(), g.out_dims());
  const int32_t* m = mask.data<int32_t>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  const int64_t per = g.out_vol(), plane = g.in_vol();
  for (int64_t pl = 0; pl < g.n * g.c; ++pl)
    for (int64_t k = 0; k < per; ++k) {
      const int64_t at = m[pl * per + k];
      if (at < 0) continue;  // an empty window
      TIDE_CHECK(at < plane, "op '", op, "': Mask holds ", at, ", outside the ",
                 g.rank == 3 ? "volume" : "plane", " of ", plane);
      dx[pl * plane + at] += gd[pl * per + k];
    }
}

tide::OpSchema MaxPoolIndexAttrs(tide::OpSchema s, int rank) {
  const bool v = rank == 3;
  return s
      .Attr("ksize", std::vector<int32_t>{},
            v ? "the window (d, h, w); with adaptive the output size"
              : "the window (h, w); with adaptive the output size")
      .Attr("strides", std::vector<int32_t>(rank, 1),
            v ? "the window's steps (d, h, w)" : "the window's steps (h, w)")
      .Attr("paddings", std::vector<int32_t>(rank, 0),
            v ? "padding of each side (d, h, w)" : "padding of each side (h, w)")
      .Attr("global_pooling", false, "one window of the whole plane (ksize, paddings ignored)")
      .Attr("adaptive", false, "ksize is the output size, the windows spread evenly")
      .Attr("ceil_mode", false, "round the output size up (Paddle 3)");
}

tide::OpSchema MaxPoolIndexSchema(const std::string& type) {
  const int rank = RankOf(type);
  const bool v = rank == 3;
  return MaxPoolIndexAttrs(
             tide::OpSchema(type)
                 .Comment(v ? "Out = the max of each window of X [N, C, D, H, W], Mask = its "
                              "int32 position (d * H + h) * W + w."
                            : "Out = the max of each window of X [N, C, H, W], Mask = its int32 "
                              "position h * W + w.")
                 .Input("X", v ? "[N, C, D, H, W]" : "[N, C, H, W]")
                 .Output("Out", v ? "[N, C, out_d, out_h, out_w]" : "[N, C, out_h, out_w]")
                 .Output("Mask", v ? "int32 positions in the input volume"
                                   : "int32 positions in the input plane"),
             rank)
      .KernelDataTypeFrom("X")
      .InferShape(MaxPoolIndexInferShape)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input("X", g.Input("X"))
            .Input("Mask", g.Output("Mask"))
            .Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

tide::OpSchema MaxPoolIndexGradSchema(const std::string& type) {
  return MaxPoolIndexAttrs(tide::OpSchema(type)
                               .Comment("X@GRAD of " + type.substr(0, type.size() - 5) +
                                        ": Out@GRAD added at Mask.")
                               .Input("X")
                               .Input("Mask")
                               .Input(GradVarName("Out"))
                               .Output(GradVarName("X")),
                           RankOf(type))
      .KernelDataTypeFrom("X")
      .InferShape(GradLike({"X"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(MaxPoolIndexSchema("max_pool2d_with_index"));
TIDE_REGISTER_OP(MaxPoolIndexGradSchema("max_pool2d_with_index_grad"));
TIDE_REGISTER_KERNEL("max_pool2d_with_index", "cpu", MaxPoolIndexKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("max_pool2d_with_index_grad", "cpu", MaxPoolIndexGradKernel,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_OP(MaxPoolIndexSchema("max_pool3d_with_index"));
TIDE_REGISTER_OP(MaxPoolIndexGradSchema("max_pool3d_with_index_grad"));
TIDE_REGISTER_KERNEL("max_pool3d_with_index", "cpu", MaxPoolIndexKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("max_pool3d_with_index_grad", "cpu", MaxPoolIndexGradKernel,
                     OPS_NN_FLOAT_TYPES);
