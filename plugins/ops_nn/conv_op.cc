// conv_op.cc: conv2d and depthwise_conv2d (NCHW or Paddle 2.x's NHWC data_format, strides,
// paddings, padding_algorithm, dilations, groups; geometry from tide/ops/conv.hpp) by im2col +
// GEMM, and their grads (col2im for Input@GRAD, GEMM per image for Filter@GRAD). The Filter is
// [M, C / groups, kh, kw] in both layouts, as in Paddle.
#include <tide/ops/conv.hpp>

#include "gemm.h"
#include "layout.h"

namespace ops_nn {
namespace {

using tide::ops::ConvGeom;
using tide::ops::GetConvGeom;

void ConvInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft, "op '", op, "': Input is ",
             tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  for (const char* extra : {"Bias", "ResidualData"})  // Paddle's oneDNN fusion inputs
    TIDE_CHECK(!ctx.HasInput(extra), "op '", op, "': input ", extra, " (a Paddle oneDNN fusion) "
               "is not supported; export the model without Paddle's inference optimisations");
  const bool nhwc = ChannelLast(ctx);
  Dims x = ctx.InputDims("Input");
  Dims out = GetConvGeom(ctx, op, nhwc ? NhwcToNchwDims(x) : x, ctx.InputDims("Filter")).out_dims();
  ctx.SetOutputDims("Output", nhwc ? NchwToNhwcDims(out) : out);
  ctx.SetOutputDataType("Output", xt);
}

// col[c][i][j][oy][ox] = x[c][oy*sh - ph + i*dh][ox*sw - pw + j*dw] (0 outside the image).
template <typename T>
void Im2Col(const ConvGeom& g, const T* x, T* col) {
  const int64_t ohw = g.oh * g.ow;
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        T* dst = col + ((c * g.kh + i) * g.kw + j) * ohw;
        const T* src = x + c * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + i * g.dh;
          T* row = dst + oy * g.ow;
          if (iy < 0 || iy >= g.h) {
            std::fill(row, row + g.ow, T(0));
            continue;
          }
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pw + j * g.dw;
            row[ox] = (ix >= 0 && ix < g.w) ? src[iy * g.w + ix] : T(0);
          }
        }
      }
}

// The adjoint of Im2Col: dx[c][iy][ix] += col[...] (dx must be zeroed first).
template <typename T>
void Col2Im(const ConvGeom& g, const T* col, T* dx) {
  const int64_t ohw = g.oh * g.ow;
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* src = col + ((c * g.kh + i) * g.kw + j) * ohw;
        T* dst = dx + c * g.h * g.w;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pw + j * g.dw;
            if (ix >= 0 && ix < g.w) dst[iy * g.w + ix] += src[oy * g.ow + ox];
          }
        }
      }
}

// A 1x1 filter with unit stride and dilation and no padding reads the image as its own columns.
bool IsPointwise(const ConvGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
         g.ph_end == 0 && g.pw_end == 0 && g.dh == 1 && g.dw == 1;
}

template <typename T>
void ConvKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  const bool nhwc = ChannelLast(ctx);
  ConvGeom g = GetConvGeom(ctx, op, nhwc ? NhwcToNchwDims(x.dims()) : x.dims(), f.dims());
  T* od = NchwOutput<T>(ctx, out, g.out_dims(), nhwc);
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  const T* fd = f.data<T>();
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);
  T* col = pointwise ? nullptr : ctx.TempBuffer<T>(static_cast<size_t>(g.c * g.kh * g.kw * ohw));
  for (int64_t n = 0; n < g.n; ++n) {
    const T* cols = xd + n * chw;
    if (!pointwise) {
      Im2Col(g, cols, col);
      cols = col;
    }
    for (int64_t gi = 0; gi < g.groups; ++gi)
      Gemm<T>(ctx, false, false, mg, ohw, k, T(1), fd + gi * mg * k, cols + gi * k * ohw, T(0),
              od + (n * g.m + gi * mg) * ohw);
  }
  StoreNhwc(ctx, od, out, g.out_dims(), nhwc);
}

template <typename T>
void ConvGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  const bool nhwc = ChannelLast(ctx);
  const Dims x_nchw = nhwc ? NhwcToNchwDims(x.dims()) : x.dims();
  ConvGeom g = GetConvGeom(ctx, op, x_nchw, f.dims());
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(),
                           nhwc ? NchwToNhwcDims(g.out_dims()) : g.out_dims());
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  const T* fd = f.data<T>();
  const T* gd = AsNchw<T>(ctx, dout, nhwc);
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);
  T* dxd = nullptr;
  T* dfd = nullptr;
  if (dx) {
    dxd = NchwOutput<T>(ctx, dx, x_nchw, nhwc);
    std::fill(dxd, dxd + x.numel(), T(0));
  }
  if (df) {
    dfd = df.mutable_data<T>(f.dims(), ctx.place());
    std::fill(dfd, dfd + f.numel(), T(0));
  }
  if (!dx && !df) return;
  T* col = pointwise ? nullptr : ctx.TempBuffer<T>(static_cast<size_t>(g.c * g.kh * g.kw * ohw));
  for (int64_t n = 0; n < g.n; ++n) {
    const T* gn = gd + n * g.m * ohw;
    if (df) {  // dF_g += dOut_g [mg, ohw] * col_g^T [ohw, k]
      const T* cols = xd + n * chw;
      if (!pointwise) {
        Im2Col(g, cols, col);
        cols = col;
      }
      for (int64_t gi = 0; gi < g.groups; ++gi)
        Gemm<T>(ctx, false, true, mg, k, ohw, T(1), gn + gi * mg * ohw, cols + gi * k * ohw, T(1),
                dfd + gi * mg * k);
    }
    if (dx) {  // dcol_g = F_g^T [k, mg] * dOut_g [mg, ohw], then col2im
      T* dcol = pointwise ? dxd + n * chw : col;
      for (int64_t gi = 0; gi < g.groups; ++gi)
        Gemm<T>(ctx, true, false, k, ohw, mg, T(1), fd + gi * mg * k, gn + gi * mg * ohw, T(0),
                dcol + gi * k * ohw);
      if (!pointwise) Col2Im(g, col, dxd + n * chw);
    }
  }
  if (dx) StoreNhwc(ctx, dxd, dx, x_nchw, nhwc);
}

// A bool attribute that must stay false / a string that must stay empty: Paddle's oneDNN fusion
// passes set them in an optimised program (a saved model has them at their defaults).
tide::AttrCheckFn NotFused(std::string name) {
  return [name](const TideAttrValue& v) {
    const bool set = v.type == TIDE_ATTR_BOOLEAN ? v.i != 0 : (v.s != nullptr && v.s[0] != 0);
    TIDE_CHECK(!set, "attribute '", name, "' (a Paddle oneDNN fusion) is not supported; export "
               "the model without Paddle's inference optimisations");
  };
}

tide::OpSchema ConvAttrs(tide::OpSchema s) {
  s.Attr("strides", std::vector<int32_t>{1, 1}, "stride (h, w) of the filter")
      .Check(IntsCheck("strides", 2, 0))
      .Attr("paddings", std::vector<int32_t>{0, 0},
            "zero padding (h, w) on each side, or (top, bottom, left, right)")
      .Check(PaddingsCheck())
      .Attr("padding_algorithm", std::string("EXPLICIT"),
            "EXPLICIT (paddings), VALID (none) or SAME (output ceil(in / stride); no dilation)")
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("dilations", std::vector<int32_t>{1, 1}, "dilation (h, w) of the filter")
      .Check(IntsCheck("dilations", 2, 0))
      .Attr("groups", int32_t(1),
            "channel groups: input and output channels are split into "
            "`groups` groups, group g of the output sees group g of the input")
      .GreaterThan(0)
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("data_format", std::string("AnyLayout"),
            "layout of Input/Output: NCHW (AnyLayout) or NHWC; Filter is [M, C/groups, kh, kw]")
      .InSet({"NCHW", "NHWC", "AnyLayout"})
      .Attr("workspace_size_MB", int32_t(4096), "cuDNN workspace limit (ignored here)")
      .Attr("exhaustive_search", false, "cuDNN algorithm search (ignored here)")
      // Paddle 2.x's backend hints, carried by its saved programs; none changes the result.
      .Attr("is_test", false, "Paddle's inference hint (ignored)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .Attr("force_fp32_output", false, "int8 hint of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_in", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_out", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_in_eltwise", 1.0f, "int8 scale of Paddle's oneDNN kernel (ignored)")
      .Attr("Scale_weights", std::vector<float>{1.0f}, "int8 scales of Paddle's oneDNN kernel "
            "(ignored)")
      .Attr("fuse_alpha", 0.0f, "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_beta", 0.0f, "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_brelu_threshold", 6.0f, "parameter of fuse_brelu (unused: no fusion)");
  // Fusions set by Paddle's inference passes: refused when set.
  for (const char* f : {"use_addto", "fuse_relu", "fuse_brelu", "fuse_residual_connection",
                        "fuse_relu_before_depthwise_conv"})
    s.Attr(f, false, "Paddle oneDNN / cuDNN fusion; must be false").Check(NotFused(f));
  s.Attr("fuse_activation", std::string(""), "Paddle oneDNN fusion; must be empty")
      .Check(NotFused("fuse_activation"));
  return s;
}

tide::OpSchema ConvSchema(const std::string& type) {
  return ConvAttrs(
      tide::OpSchema(type)
          .Comment("Output[n, m] = sum over the channels c of m's group of "
                   "correlate(Input[n, c], Filter[m, c - group offset]) with strides, zero "
                   "paddings and dilations. Output size per axis: "
                   "(in + pad_begin + pad_end - (dilation * (k - 1) + 1)) / stride + 1.")
          .Input("Input", "the images, [N, C, H, W] (NHWC: [N, H, W, C])")
          .Input("Filter", "the filters, [M, C / groups, kh, kw]")
          .Input("Bias", "Paddle's oneDNN fusion input: must be absent")
          .AsDispensable()
          .Input("ResidualData", "Paddle's oneDNN fusion input: must be absent")
          .AsDispensable()
          .Output("Output", "the feature maps, [N, M, H_out, W_out] (NHWC: [N, H_out, W_out, M])")
          .KernelDataTypeFrom("Input")
          .InferShape(ConvInferShape)
          .Grad([type](tide::GradMaker& g) {
            g.NewOp(type + "_grad")
                .Input("Input", g.Input("Input"))
                .Input("Filter", g.Input("Filter"))
                .Input(GradVarName("Output"), g.OutputGrad("Output"))
                .Output(GradVarName("Input"), g.InputGrad("Input"))
                .Output(GradVarName("Filter"), g.InputGrad("Filter"))
                .CopyAttrs();
          }));
}

tide::OpSchema ConvGradSchema(const std::string& type) {
  return ConvAttrs(tide::OpSchema(type)
                       .Comment("Input@GRAD and Filter@GRAD of " + type.substr(0, type.size() - 5))
                       .Input("Input", "the forward images")
                       .Input("Filter", "the forward filters")
                       .Input(GradVarName("Output"), "gradient of Output")
                       .Output(GradVarName("Input"), "gradient of Input")
                       .AsDispensable()
                       .Output(GradVarName("Filter"), "gradient of Filter")
                       .AsDispensable()
                       .KernelDataTypeFrom("Input")
                       .InferShape(GradLike({"Input", "Filter"})));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ConvSchema("conv2d"));
TIDE_REGISTER_OP(ConvGradSchema("conv2d_grad"));
// Fluid's layers emit depthwise_conv2d when groups == channels; the same kernels serve it.
TIDE_REGISTER_OP(ConvSchema("depthwise_conv2d"));
TIDE_REGISTER_OP(ConvGradSchema("depthwise_conv2d_grad"));
TIDE_REGISTER_KERNEL("conv2d", "cpu", ConvKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv2d_grad", "cpu", ConvGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d", "cpu", ConvKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_grad", "cpu", ConvGradKernel, OPS_NN_FLOAT_TYPES);
