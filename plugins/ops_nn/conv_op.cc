// conv_op.cc: conv2d and depthwise_conv2d (NCHW, strides, paddings, dilations, groups; geometry
// from tide/ops/conv.hpp) by im2col + GEMM, and their grads (col2im for Input@GRAD, GEMM per
// image for Filter@GRAD).
#include <tide/ops/conv.hpp>

#include "gemm.h"

namespace ops_nn {
namespace {

using tide::ops::ConvGeom;
using tide::ops::GetConvGeom;

void ConvInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft, "op '", op, "': Input is ",
             tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  ctx.SetOutputDims(
      "Output", GetConvGeom(ctx, op, ctx.InputDims("Input"), ctx.InputDims("Filter")).out_dims());
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
  ConvGeom g = GetConvGeom(ctx, op, x.dims(), f.dims());
  T* od = out.mutable_data<T>(g.out_dims(), ctx.place());
  const T* xd = x.data<T>();
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
}

template <typename T>
void ConvGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  ConvGeom g = GetConvGeom(ctx, op, x.dims(), f.dims());
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(), g.out_dims());
  const T* xd = x.data<T>();
  const T* fd = f.data<T>();
  const T* gd = dout.data<T>();
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);
  T* dxd = nullptr;
  T* dfd = nullptr;
  if (dx) {
    dxd = dx.mutable_data<T>(x.dims(), ctx.place());
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
}

tide::OpSchema ConvAttrs(tide::OpSchema s) {
  return s.Attr("strides", std::vector<int32_t>{1, 1}, "stride (h, w) of the filter")
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
      .Attr("data_format", std::string("AnyLayout"), "layout of Input/Output: NCHW (AnyLayout)")
      .InSet({"NCHW", "AnyLayout"})
      .Attr("workspace_size_MB", int32_t(4096), "cuDNN workspace limit (ignored here)")
      .Attr("exhaustive_search", false, "cuDNN algorithm search (ignored here)");
}

tide::OpSchema ConvSchema(const std::string& type) {
  return ConvAttrs(
      tide::OpSchema(type)
          .Comment("Output[n, m] = sum over the channels c of m's group of "
                   "correlate(Input[n, c], Filter[m, c - group offset]) with strides, zero "
                   "paddings and dilations. Output size per axis: "
                   "(in + pad_begin + pad_end - (dilation * (k - 1) + 1)) / stride + 1.")
          .Input("Input", "the images, [N, C, H, W]")
          .Input("Filter", "the filters, [M, C / groups, kh, kw]")
          .Output("Output", "the feature maps, [N, M, H_out, W_out]")
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
