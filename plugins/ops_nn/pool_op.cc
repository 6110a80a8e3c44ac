// pool_op.cc: pool2d (max / avg over NCHW windows, or NHWC ones on transposed copies; global,
// ceil_mode, exclusive, adaptive, padding_algorithm) and its grad, with Fluid 1.x window rules
// (tide/ops/pool.hpp): a window is clipped to the image (padding never wins a max); an exclusive
// avg divides by the clipped window's size, a non-exclusive one by kh * kw. The forward kernel is
// the SDK's header-only tide/kernels/pool.hpp; max over 2x2 windows at stride 2 takes its own
// loops (there, and pool_max2x2.h for the grad), with the same results.
#include <tide/kernels/pool.hpp>
#include <tide/ops/pool.hpp>

#include "common.h"
#include "layout.h"
#include "pool_max2x2.h"

namespace ops_nn {
namespace {

using tide::ops::GetPoolGeom;
using tide::ops::PoolGeom;

void PoolInferShape(tide::InferShapeContext& ctx) {
  const bool nhwc = ChannelLast(ctx);
  Dims x = ctx.InputDims("X");
  Dims out = GetPoolGeom(ctx, ctx.op_type(), nhwc ? NhwcToNchwDims(x) : x).out_dims();
  ctx.SetOutputDims("Out", nhwc ? NchwToNhwcDims(out) : out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The reference gradient per plane (tide::ops::PoolGradPlane): max to the first maximum of the
// window (scan order), as Fluid's; avg spread evenly over the window's divisor.
template <typename T>
void PoolGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const bool nhwc = ChannelLast(ctx);
  const Dims x_nchw = nhwc ? NhwcToNchwDims(x.dims()) : x.dims();
  PoolGeom g = GetPoolGeom(ctx, op, x_nchw);
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(),
                           nhwc ? NchwToNhwcDims(g.out_dims()) : g.out_dims());
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  const T* gd = AsNchw<T>(ctx, dout, nhwc);
  T* dd = NchwOutput<T>(ctx, dx, x_nchw, nhwc);
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  const bool max2x2 = IsMaxPool2x2(g);
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      if (max2x2)
        MaxPool2x2GradPlane(g, xd + p * plane, gd + p * oplane, dd + p * plane);
      else
        tide::ops::PoolGradPlane(g, xd + p * plane, gd + p * oplane, dd + p * plane);
  });
  StoreNhwc(ctx, dd, dx, x_nchw, nhwc);
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
            "padding (h, w) on each side, or (top, bottom, left, right); padded cells "
            "never win a max and an exclusive avg skips them")
      .Check(PaddingsCheck())
      .Attr("padding_algorithm", std::string("EXPLICIT"),
            "EXPLICIT (paddings), VALID (none) or SAME (output ceil(in / stride))")
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("exclusive", true,
            "avg: divide by the window's cells inside the image (true) or by "
            "kh * kw (false)")
      .Attr("adaptive", false,
            "ksize is the output size; window i spans "
            "[floor(i * H / oh), ceil((i + 1) * H / oh))")
      .Attr("ceil_mode", false, "output size rounds up: (H - k + p_begin + p_end + s - 1) / s + 1")
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("data_format", std::string("AnyLayout"), "layout of X/Out: NCHW (AnyLayout) or NHWC")
      .InSet({"NCHW", "NHWC", "AnyLayout"})
      // Paddle 2.x's backend hints, carried by its saved programs; none changes the result.
      .Attr("is_test", false, "Paddle's inference hint (ignored)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
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
TIDE_REGISTER_KERNEL("pool2d", "cpu", tide::kernels::Pool2d, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pool2d_grad", "cpu", PoolGradKernel, OPS_NN_FLOAT_TYPES);
