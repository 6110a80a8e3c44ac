// conv3d_ops.cc: conv3d and conv3d_transpose (Paddle's nn.Conv3D / nn.Conv3DTranspose: NCDHW or
// NDHWC, strides, paddings of 3 or 6 values, padding_algorithm, dilations, groups; the
// transpose's output_padding / output_size; geometry in conv3d_geom.h) and their grads, by
// vol2col.h's columns + GEMM. As conv_transpose_op.cc does for 2-D, the transpose runs the conv's
// kernels reversed: its forward is the conv's Input gradient, its Input@GRAD the conv's forward of
// Output@GRAD, its Filter@GRAD the conv's Filter gradient with the images' roles swapped.
#include "conv3d_geom.h"
#include "vol2col.h"
#include "vol_layout.h"

namespace ops_nn {
namespace {

bool IsTranspose(const std::string& op) { return op.find("transpose") != std::string::npos; }

// The geometry of either op from NCDHW-or-NDHWC dims.
template <typename Ctx>
Conv3dGeom GeomOf(const Ctx& ctx, const Dims& x, const Dims& f) {
  const char* op = ctx.op_type();
  const Dims xn = VolChannelLast(ctx) ? NdhwcToNcdhwDims(x) : x;
  return IsTranspose(op) ? GetConv3dTransposeGeom(ctx, op, xn, f) : GetConv3dGeom(ctx, op, xn, f);
}

// Output's NCDHW dims: the conv's Output, or the transpose's (the conv's Input).
Dims OutputDims(const Conv3dGeom& g, bool transpose) {
  return transpose ? g.in_dims() : g.out_dims();
}

void Conv3dInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  for (const char* extra : {"Bias", "ResidualData"})  // Paddle's oneDNN fusion inputs
    TIDE_CHECK(!ctx.HasInput(extra), "op '", op, "': input ", extra,
               " (a Paddle oneDNN fusion) is not supported; export the model without Paddle's "
               "inference optimisations");
  const TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft, "op '", op, "': Input is ",
             tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  const Conv3dGeom g = GeomOf(ctx, ctx.InputDims("Input"), ctx.InputDims("Filter"));
  const Dims out = OutputDims(g, IsTranspose(op));
  ctx.SetOutputDims("Output", VolChannelLast(ctx) ? NcdhwToNdhwcDims(out) : out);
  ctx.SetOutputDataType("Output", xt);
}

template <typename T>
void Conv3dKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  const bool last = VolChannelLast(ctx), transpose = IsTranspose(ctx.op_type());
  const Conv3dGeom g = GeomOf(ctx, x.dims(), f.dims());
  const Dims od = OutputDims(g, transpose);
  const T* xd = AsNcdhw<T>(ctx, x, last);
  T* o = NcdhwOutput<T>(ctx, out, od, last);
  if (transpose)
    Conv3dBackwardNcdhw<T>(ctx, g, /*x=*/nullptr, f.data<T>(), xd, o, nullptr);
  else
    Conv3dForwardNcdhw<T>(ctx, g, xd, f.data<T>(), o);
  StoreNdhwc(ctx, o, out, od, last);
}

template <typename T>
void Conv3dGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  const bool last = VolChannelLast(ctx), transpose = IsTranspose(op);
  const Conv3dGeom g = GeomOf(ctx, x.dims(), f.dims());
  const Dims od = OutputDims(g, transpose);
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(), last ? NcdhwToNdhwcDims(od) : od);
  const Dims x_ncdhw = last ? NdhwcToNcdhwDims(x.dims()) : x.dims();
  const T* xd = AsNcdhw<T>(ctx, x, last);
  const T* gd = AsNcdhw<T>(ctx, dout, last);
  T* dxd = dx ? NcdhwOutput<T>(ctx, dx, x_ncdhw, last) : nullptr;
  T* dfd = df ? df.mutable_data<T>(f.dims(), ctx.place()) : nullptr;
  if (!transpose) {
    Conv3dBackwardNcdhw<T>(ctx, g, xd, f.data<T>(), gd, dxd, dfd);
  } else {
    if (dxd) Conv3dForwardNcdhw<T>(ctx, g, gd, f.data<T>(), dxd);
    // The conv's Filter gradient: its Input is Output@GRAD, its Output@GRAD our Input.
    if (dfd) Conv3dBackwardNcdhw<T>(ctx, g, gd, f.data<T>(), xd, nullptr, dfd);
  }
  if (dx) StoreNdhwc(ctx, dxd, dx, x_ncdhw, last);
}

tide::OpSchema Conv3dAttrs(tide::OpSchema s, bool transpose) {
  s.Attr("strides", std::vector<int32_t>{1, 1, 1}, "stride (d, h, w) of the filter")
      .Check(IntsCheck("strides", 3, 0))
      .Attr("paddings", std::vector<int32_t>{0, 0, 0},
            transpose ? "padding (d, h, w) removed from each side of the output, or (front, back, "
                        "top, bottom, left, right)"
                      : "zero padding (d, h, w) on each side, or (front, back, top, bottom, left, "
                        "right)")
      .Attr("padding_algorithm", std::string("EXPLICIT"),
            "EXPLICIT (paddings), VALID (none) or SAME (output ceil(in / stride); no dilation)")
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("dilations", std::vector<int32_t>{1, 1, 1}, "dilation (d, h, w) of the filter")
      .Check(IntsCheck("dilations", 3, 0))
      .Attr("groups", int32_t(1), "channel groups")
      .GreaterThan(0)
      .Attr("data_format", std::string("NCDHW"),
            "layout of Input / Output: NCDHW (NCHW, AnyLayout) or NDHWC (NHWC)")
      .InSet({"NCDHW", "NDHWC", "AnyLayout", "NCHW", "NHWC"})
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .Attr("workspace_size_MB", int32_t(512), "cuDNN workspace limit (ignored here)")
      .Attr("is_test", false, "Paddle's inference hint (ignored)")
      .Attr("force_fp32_output", false, "oneDNN precision hint (ignored)");
  if (transpose)
    return s
        .Attr("output_padding", std::vector<int32_t>{},
              "added to the output size (d, h, w), each below max(stride, dilation)")
        .Attr("output_size", std::vector<int32_t>{},
              "the output size (d, h, w), at most a stride above the computed one");
  s.Attr("exhaustive_search", false, "cuDNN algorithm search (ignored here)")
      .Attr("fuse_alpha", 0.0f, "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_beta", 0.0f, "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_activation", std::string(""), "Paddle oneDNN fusion; must be empty")
      .Check(NotFused("fuse_activation"));
  for (const char* f : {"fuse_relu", "use_addto", "fuse_residual_connection"})
    s.Attr(f, false, "Paddle oneDNN fusion; must be false").Check(NotFused(f));
  return s;
}

tide::OpSchema Conv3dSchema(const std::string& type) {
  const bool transpose = IsTranspose(type);
  tide::OpSchema s(type);
  s.Comment(transpose
                ? "Output = the transposed 3-D convolution of Input by Filter (conv3d's Input "
                  "gradient): each input cell adds Filter times its value into a window of the "
                  "output at stride steps. Output size per axis: (in - 1) * stride - pad_begin - "
                  "pad_end + dilation * (k - 1) + 1 + output_padding."
                : "Output[n, m] = sum over the channels c of m's group of correlate(Input[n, c], "
                  "Filter[m, c - group offset]) over (d, h, w) with strides, zero paddings and "
                  "dilations. Output size per axis: (in + pad_begin + pad_end - (dilation * (k - "
                  "1) + 1)) / stride + 1.")
      .Input("Input", "[N, C, D, H, W] (NDHWC: [N, D, H, W, C])")
      .Input("Filter", transpose ? "[C, M / groups, kd, kh, kw]" : "[M, C / groups, kd, kh, kw]");
  if (transpose)
    s.Input("Bias", "Paddle's oneDNN fusion input: must be absent").AsDispensable();
  else
    s.Input("ResidualData", "Paddle's oneDNN fusion input: must be absent").AsDispensable();
  s.Output("Output", "[N, M, OD, OH, OW] (NDHWC: [N, OD, OH, OW, M])")
      .KernelDataTypeFrom("Input")
      .InferShape(Conv3dInferShape)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input("Input", g.Input("Input"))
            .Input("Filter", g.Input("Filter"))
            .Input(GradVarName("Output"), g.OutputGrad("Output"))
            .Output(GradVarName("Input"), g.InputGrad("Input"))
            .Output(GradVarName("Filter"), g.InputGrad("Filter"))
            .CopyAttrs();
      });
  return Conv3dAttrs(s, transpose);
}

tide::OpSchema Conv3dGradSchema(const std::string& type) {
  return Conv3dAttrs(
      tide::OpSchema(type)
          .Comment("Input@GRAD and Filter@GRAD of " + type.substr(0, type.size() - 5))
          .Input("Input", "the forward input")
          .Input("Filter", "the forward filter")
          .Input(GradVarName("Output"), "gradient of Output")
          .Output(GradVarName("Input"), "gradient of Input")
          .AsDispensable()
          .Output(GradVarName("Filter"), "gradient of Filter")
          .AsDispensable()
          .KernelDataTypeFrom("Input")
          .InferShape(GradLike({"Input", "Filter"})),
      IsTranspose(type));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(Conv3dSchema("conv3d"));
TIDE_REGISTER_OP(Conv3dGradSchema("conv3d_grad"));
TIDE_REGISTER_KERNEL("conv3d", "cpu", Conv3dKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv3d_grad", "cpu", Conv3dGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_OP(Conv3dSchema("conv3d_transpose"));
TIDE_REGISTER_OP(Conv3dGradSchema("conv3d_transpose_grad"));
TIDE_REGISTER_KERNEL("conv3d_transpose", "cpu", Conv3dKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv3d_transpose_grad", "cpu", Conv3dGradKernel, OPS_NN_FLOAT_TYPES);
