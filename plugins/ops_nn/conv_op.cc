// conv_op.cc: conv2d and depthwise_conv2d (NCHW, strides, paddings, dilations, groups) by
// im2col + GEMM, and their grads (col2im for Input@GRAD, GEMM per image for Filter@GRAD).
#include "gemm.h"

namespace ops_nn {
namespace {

struct ConvGeom {
  int64_t n, c, h, w;  // Input
  int64_t m, kh, kw;   // Filter [m, c / groups, kh, kw]
  int64_t oh, ow;      // Output spatial dims
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

// One spatial output size; -1 when the input size is unknown.
int64_t ConvOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  if (in < 0 || k < 0) return -1;
  const int64_t extent = dil * (k - 1) + 1;
  return (in + 2 * pad - extent) / stride + 1;
}

// Reads and checks the attributes and the Input/Filter dims (unknown dims allowed at compile
// time); the output dims are in `out`.
template <typename Ctx>
ConvGeom GetGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f, Dims* out) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': Input must be 4-D [N, C, H, W], got ",
             tide::ToString(x));
  TIDE_CHECK(f.size() == 4, "op '", op, "': Filter must be 4-D [M, C/groups, kh, kw], got ",
             tide::ToString(f));
  auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.template Attr<std::vector<int32_t>>("paddings");
  auto dils = ctx.template Attr<std::vector<int32_t>>("dilations");
  CheckPair(op, "strides", strides);
  CheckPair(op, "paddings", pads);
  CheckPair(op, "dilations", dils);
  ConvGeom g{};
  g.groups = ctx.template Attr<int32_t>("groups");
  TIDE_CHECK(g.groups >= 1, "op '", op, "': groups must be >= 1, got ", g.groups);
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.m = f[0];
  g.kh = f[2];
  g.kw = f[3];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = pads[0];
  g.pw = pads[1];
  g.dh = dils[0];
  g.dw = dils[1];
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.dh > 0 && g.dw > 0, "op '", op, "': dilations must be > 0, got [", g.dh, ", ", g.dw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0, got [", g.ph, ", ",
             g.pw, "]");
  TIDE_CHECK(g.c < 0 || f[1] < 0 || g.c == f[1] * g.groups, "op '", op, "': Input ",
             tide::ToString(x), " has ", g.c, " channels but Filter ", tide::ToString(f),
             " expects C/groups = ", f[1], " with groups = ", g.groups, " (", f[1] * g.groups,
             " channels)");
  TIDE_CHECK(g.m < 0 || g.m % g.groups == 0, "op '", op, "': Filter ", tide::ToString(f), " has ",
             g.m, " output channels, not divisible by groups = ", g.groups);
  g.oh = ConvOutSize(g.h, g.kh, g.ph, g.sh, g.dh);
  g.ow = ConvOutSize(g.w, g.kw, g.pw, g.sw, g.dw);
  TIDE_CHECK((g.h < 0 || g.oh > 0) && (g.w < 0 || g.ow > 0), "op '", op,
             "': the output would be empty: Input ", tide::ToString(x), ", Filter ",
             tide::ToString(f), ", strides [", g.sh, ", ", g.sw, "], paddings [", g.ph, ", ", g.pw,
             "], dilations [", g.dh, ", ", g.dw, "] give output size ", g.oh, " x ", g.ow);
  *out = {g.n, g.m, g.oh, g.ow};
  return g;
}

void ConvInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft, "op '", op, "': Input is ",
             tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  Dims out;
  GetGeom(ctx, op, ctx.InputDims("Input"), ctx.InputDims("Filter"), &out);
  ctx.SetOutputDims("Output", out);
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
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.dh == 1 &&
         g.dw == 1;
}

template <typename T>
void ConvKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  Dims out_dims;
  ConvGeom g = GetGeom(ctx, op, x.dims(), f.dims(), &out_dims);
  T* od = out.mutable_data<T>(out_dims, ctx.place());
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
  Dims out_dims;
  ConvGeom g = GetGeom(ctx, op, x.dims(), f.dims(), &out_dims);
  TIDE_CHECK(dout.dims() == out_dims, "op '", op, "': Output@GRAD has dims ",
             tide::ToString(dout.dims()), ", expected ", tide::ToString(out_dims));
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
      .Attr("paddings", std::vector<int32_t>{0, 0}, "zero padding (h, w) on each side")
      .Check(IntsCheck("paddings", 2, -1))
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
                   "(in + 2 * pad - (dilation * (k - 1) + 1)) / stride + 1.")
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
