// conv_op.cc: conv2d and depthwise_conv2d (NCHW or Paddle 2.x's NHWC data_format, strides,
// paddings, padding_algorithm, dilations, groups; geometry from tide/ops/conv.hpp): their schemas
// and shape inference, the forward kernel (the SDK's header-only tide/kernels/conv.hpp: float32
// NCHW with one group by the direct kernel where it is faster, the rest by im2col + GEMM), and
// their grads (col2im for Input@GRAD), the batch cut as conv_im2col.h plans. The Filter is
// [M, C / groups, kh, kw] in both layouts, as in Paddle. fused_conv2d is Paddle's inference op of
// its oneDNN fusion passes (Paddle >= 2.5), made by tide.transpiler.InferenceTranspiler: Output
// = act(conv(Input, Filter) + Bias + ResidualData), act any of Paddle's fused activations
// (fused_activation.h), with no gradient; the same header kernel. conv2d / depthwise_conv2d keep
// refusing those fusions (not every device's kernel implements them).
#include <tide/kernels/conv.hpp>
#include <tide/ops/conv.hpp>
#include <tide/ops/int8.hpp>

#include "conv_backward_data.h"
#include "conv_gemm.h"
#include "fused_activation.h"
#include "layout.h"

namespace ops_nn {
namespace {

using tide::ops::ConvGeom;
using tide::ops::GetConvGeom;

void ConvInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const bool fused = std::string(op) == "fused_conv2d";
  TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  // fused_conv2d reads a float32 Filter under 16-bit Input (AsFloat32Param: bf16 inference) and
  // under u8/s8 Input (int8 inference: tide/ops/int8.hpp).
  const bool float32_filter =
      fused && ft == TIDE_FP32 && (xt == TIDE_BF16 || xt == TIDE_FP16 || tide::ops::IsInt8Type(xt));
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft || float32_filter, "op '", op,
             "': Input is ", tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  if (!fused)
    for (const char* extra : {"Bias", "ResidualData"})  // Paddle's oneDNN fusion inputs
      TIDE_CHECK(!ctx.HasInput(extra), "op '", op, "': input ", extra,
                 " (a Paddle oneDNN "
                 "fusion) is not supported; export the model without Paddle's inference "
                 "optimisations, or use fused_conv2d");
  const bool nhwc = ChannelLast(ctx);
  Dims x = ctx.InputDims("Input");
  Dims f = ctx.InputDims("Filter");
  Dims out = GetConvGeom(ctx, op, nhwc ? NhwcToNchwDims(x) : x, f).out_dims();
  const Dims out_dims = nhwc ? NchwToNhwcDims(out) : out;
  if (fused) {
    const bool residual = ctx.Attr<bool>("fuse_residual_connection");
    TIDE_CHECK(residual == ctx.HasInput("ResidualData"), "op '", op, "': ",
               residual ? "fuse_residual_connection is set but ResidualData is absent"
                        : "ResidualData is given but fuse_residual_connection is false");
    if (ctx.HasInput("Bias")) {
      Dims b = ctx.InputDims("Bias");
      TIDE_CHECK(b.size() == 1 && (b[0] < 0 || f.empty() || f[0] < 0 || b[0] == f[0]), "op '", op,
                 "': Bias must be [M] = [", f.empty() ? -1 : f[0], "], got ", tide::ToString(b));
    }
    if (residual) {
      const Dims r = ctx.InputDims("ResidualData");
      TIDE_CHECK(DimsCompatible(r, out_dims), "op '", op,
                 "': ResidualData must have Output's dims ", tide::ToString(out_dims), ", got ",
                 tide::ToString(r));
    }
  }
  ctx.SetOutputDims("Output", out_dims);
  ctx.SetOutputDataType("Output",
                        fused && tide::ops::IsInt8Type(xt) ? tide::ops::Int8OutputTypeOf(ctx) : xt);
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
  T* dxd = dx ? NchwOutput<T>(ctx, dx, x_nchw, nhwc) : nullptr;
  T* dfd = df ? df.mutable_data<T>(f.dims(), ctx.place()) : nullptr;
  if (!dx && !df) return;
  // Input@GRAD by the forward kernels where they take it; the rest by GEMMs.
  const bool dx_done = dx && ConvInputGradByForward<T>(ctx, g, fd, gd, dxd);
  if (!dx_done || df) ConvBackwardNchw<T>(ctx, g, xd, fd, gd, dx_done ? nullptr : dxd, dfd);
  if (dx) StoreNhwc(ctx, dxd, dx, x_nchw, nhwc);
}

// fused_conv2d's fusions (Paddle's names): a fuse_activation of Paddle's oneDNN fusions with
// fuse_alpha / fuse_beta (fused_activation.h; fuse_relu is the older relu flag),
// fuse_residual_connection with ResidualData, and Bias.
tide::OpSchema ConvAttrs(tide::OpSchema s, bool fused = false) {
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
      // int8 inference (tide/ops/int8.hpp): read by fused_conv2d's u8/s8 kernels, else ignored.
      .Attr("force_fp32_output", false, "int8: Output float32 (else u8 / s8 by Scale_out)")
      .Attr("Scale_in", 1.0f, "int8: Input's scale (Input = round(x * Scale_in))")
      .Attr("Scale_out", 1.0f, "int8: Output's scale, unless force_fp32_output")
      .Attr("Scale_in_eltwise", 1.0f, "int8: ResidualData's scale when it is u8 / s8")
      .Attr("Scale_weights", std::vector<float>{1.0f},
            "int8: the Filter's scale per output channel (or one for all)")
      .Attr("fuse_alpha", 0.0f,
            fused ? "fuse_activation's alpha (Paddle's meaning: see "
                    "fuse_activation)"
                  : "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_beta", 0.0f,
            fused ? "fuse_activation's beta (Paddle's meaning: see "
                    "fuse_activation)"
                  : "parameter of fuse_activation (unused: no fusion)")
      .Attr("fuse_brelu_threshold", 6.0f, "parameter of fuse_brelu (unused: no fusion)");
  // Fusions set by Paddle's inference passes: refused when set (fused_conv2d implements some).
  for (const char* f : {"use_addto", "fuse_relu", "fuse_brelu", "fuse_residual_connection",
                        "fuse_relu_before_depthwise_conv"}) {
    const std::string name(f);
    if (fused && (name == "fuse_relu" || name == "fuse_residual_connection")) {
      s.Attr(f, false,
             name == "fuse_relu" ? "Output = relu(...) (Paddle's older name for "
                                   "fuse_activation = relu)"
                                 : "add ResidualData to the output before the "
                                   "activation");
      continue;
    }
    s.Attr(f, false, "Paddle oneDNN / cuDNN fusion; must be false").Check(NotFused(f));
  }
  if (fused)
    s.Attr("fuse_activation", std::string(""),
           "activation of the sum (\"\" or \"identity\": none), Paddle's: relu and leaky_relu "
           "(X > 0 ? X : fuse_alpha X), relu6 and clip (min(max(X, fuse_alpha), fuse_beta)), "
           "swish (X sigmoid(fuse_alpha X)), hard_sigmoid (min(max(fuse_alpha X + fuse_beta, 0), "
           "1)), hard_swish (X times that), sigmoid, tanh, abs, sqrt, mish, gelu / gelu_erf, "
           "gelu_tanh")
        .InSet(FusedActNameList());
  else
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

// Paddle's fused_conv2d: an inference op (no gradient).
tide::OpSchema FusedConvSchema() {
  return ConvAttrs(
      tide::OpSchema("fused_conv2d")
          .Comment("Output = act(conv2d(Input, Filter) + Bias + ResidualData): conv2d's "
                   "geometry, then Bias [M] added per output channel, ResidualData (Output's "
                   "dims) added when fuse_residual_connection, then fuse_activation. Paddle's "
                   "oneDNN fusion op; made by tide.transpiler.InferenceTranspiler. No gradient.")
          .Input("Input", "the images, [N, C, H, W] (NHWC: [N, H, W, C])")
          .Input("Filter", "the filters, [M, C / groups, kh, kw]")
          .AsFloat32Param()  // a bfloat16 kernel reorders it into its type once (bf16 inference)
          .Input("Bias", "per output channel, [M]")
          .AsDispensable()
          .AsFloat32Param()  // oneDNN's bfloat16 convolutions add a float32 bias
          .Input("ResidualData", "added to the output (its dims) when fuse_residual_connection")
          .AsDispensable()
          .Output("Output", "the feature maps, [N, M, H_out, W_out] (NHWC: [N, H_out, W_out, M])")
          .KernelDataTypeFrom("Input")
          // The transpiler's in-place residual writes Output into ResidualData's variable; every
          // kernel reads the residual where it lies (or copies it first), so the core need not.
          .InPlace("ResidualData", "Output")
          .InferShape(ConvInferShape),
      true);
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
TIDE_REGISTER_KERNEL("conv2d", "cpu", tide::kernels::Conv2d, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv2d_grad", "cpu", ConvGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d", "cpu", tide::kernels::Conv2d, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_grad", "cpu", ConvGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_OP(FusedConvSchema());
TIDE_REGISTER_KERNEL("fused_conv2d", "cpu", tide::kernels::Conv2d, OPS_NN_FLOAT_TYPES);
