// conv_transpose_op.cc: conv2d_transpose (Paddle's nn.Conv2DTranspose: NCHW or NHWC, strides,
// paddings, padding_algorithm, output_padding / output_size, dilations, groups; geometry from
// tide/ops/conv_transpose.hpp) and its grad. The op is the Input gradient of the conv2d that
// takes its Output back to its Input, so the plain kernels are conv_gemm.h's, reversed: the
// forward is that conv's backward (GEMM, then col2im), Input@GRAD that conv's forward of
// Output@GRAD, Filter@GRAD that conv's Filter gradient with the roles of the images swapped.
// Paddle 3.x's PIR op takes output_size as an operand, which a model computes at run time when it
// upsamples to a skip connection's size (`deconv(x, output_size=paddle.shape(skip)[2:])`): the
// loader binds it to OutputSize (one int tensor: h, w) or OutputSizeTensor (one-element tensors),
// which replace the attribute; Output's size is then unknown until the kernel runs.
#include <tide/ops/conv_transpose.hpp>
#include <tide/ops/int_inputs.hpp>

#include "conv_gemm.h"
#include "layout.h"

namespace ops_nn {
namespace {

using tide::ops::ConvGeom;
using tide::ops::ConvTransposeOutDims;

constexpr const char* kOutputSizeInputs[] = {"OutputSize", "OutputSizeTensor"};

template <typename Ctx>
bool HasRunTimeOutputSize(const Ctx& ctx) {
  return ctx.HasInput("OutputSize") || ctx.HasInput("OutputSizeTensor");
}

// The op's context with output_size read from the OutputSize / OutputSizeTensor input (`size`)
// in place of the attribute, for tide/ops/conv_transpose.hpp's geometry.
template <typename Ctx>
struct WithOutputSize {
  const Ctx& ctx;
  std::vector<int32_t> size;
  bool HasAttr(const char* name) const { return ctx.HasAttr(name); }
  template <typename A>
  A Attr(const char* name) const {
    if constexpr (std::is_same_v<A, std::vector<int32_t>>)
      if (std::string(name) == "output_size") return size;
    return ctx.template Attr<A>(name);
  }
};

// output_size from the run-time input (h, w), checked like the attribute's values.
std::vector<int32_t> RunTimeOutputSize(const KernelContext& ctx) {
  const char* param = ctx.HasInput("OutputSize") ? "OutputSize" : "OutputSizeTensor";
  const std::vector<int64_t> v = ctx.HasInput("OutputSize") ? tide::ops::IntValues(ctx, param)
                                                            : tide::ops::IntScalars(ctx, param);
  TIDE_CHECK(v.size() == 2, "op '", ctx.op_type(), "': ", param,
             " must give the output size (h, w), got ", tide::ToString(v));
  return tide::ops::AsInt32s(ctx, param, v);
}

ConvGeom GeomOf(const KernelContext& ctx, const Dims& x, const Dims& f) {
  const Dims nchw = ChannelLast(ctx) ? NhwcToNchwDims(x) : x;
  if (HasRunTimeOutputSize(ctx))
    return tide::ops::GetConvTransposeGeom(
        WithOutputSize<KernelContext>{ctx, RunTimeOutputSize(ctx)}, ctx.op_type(), nchw, f);
  return tide::ops::GetConvTransposeGeom(ctx, ctx.op_type(), nchw, f);
}

template <typename T>
void ConvTransposeKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  const bool nhwc = ChannelLast(ctx);
  const ConvGeom g = GeomOf(ctx, x.dims(), f.dims());
  T* od = NchwOutput<T>(ctx, out, ConvTransposeOutDims(g), nhwc);
  ConvBackwardNchw<T>(ctx, g, /*xd=*/nullptr, f.data<T>(), AsNchw<T>(ctx, x, nhwc), od, nullptr);
  StoreNhwc(ctx, od, out, ConvTransposeOutDims(g), nhwc);
}

template <typename T>
void ConvTransposeGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  const bool nhwc = ChannelLast(ctx);
  const ConvGeom g = GeomOf(ctx, x.dims(), f.dims());
  const Dims out_nchw = ConvTransposeOutDims(g);
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(),
                           nhwc ? NchwToNhwcDims(out_nchw) : out_nchw);
  const T* gd = AsNchw<T>(ctx, dout, nhwc);
  const Dims x_nchw = nhwc ? NhwcToNchwDims(x.dims()) : x.dims();
  if (dx) {  // the conv of Output@GRAD
    T* dxd = NchwOutput<T>(ctx, dx, x_nchw, nhwc);
    ConvForwardNchw<T>(ctx, g, gd, f.data<T>(), dxd);
    StoreNhwc(ctx, dxd, dx, x_nchw, nhwc);
  }
  if (df)  // that conv's Filter gradient: its Input is Output@GRAD, its Output@GRAD our Input
    ConvBackwardNchw<T>(ctx, g, gd, f.data<T>(), AsNchw<T>(ctx, x, nhwc), nullptr,
                        df.mutable_data<T>(f.dims(), ctx.place()));
}

void ConvTransposeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TIDE_CHECK(!ctx.HasInput("Bias"), "op '", op,
             "': input Bias (a Paddle oneDNN fusion) is not supported; export the model without "
             "Paddle's inference optimisations");
  const TideDataType xt = ctx.InputDataType("Input"), ft = ctx.InputDataType("Filter");
  TIDE_CHECK(xt == TIDE_UNDEFINED || ft == TIDE_UNDEFINED || xt == ft, "op '", op, "': Input is ",
             tide::DataTypeName(xt), " but Filter is ", tide::DataTypeName(ft));
  const Dims x = ctx.InputDims("Input"), nchw = ChannelLast(ctx) ? NhwcToNchwDims(x) : x;
  const Dims f = ctx.InputDims("Filter");
  Dims out;
  if (HasRunTimeOutputSize(ctx)) {  // the rest of the geometry checked here, the size -1
    out = ConvTransposeOutDims(tide::ops::GetConvTransposeGeom(
        WithOutputSize<tide::InferShapeContext>{ctx, {}}, op, nchw, f));
    out[2] = out[3] = -1;
  } else {
    out = ConvTransposeOutDims(tide::ops::GetConvTransposeGeom(ctx, op, nchw, f));
  }
  ctx.SetOutputDims("Output", ChannelLast(ctx) ? NchwToNhwcDims(out) : out);
  ctx.SetOutputDataType("Output", xt);
}

tide::OpSchema ConvTransposeAttrs(tide::OpSchema s) {
  return s.Attr("strides", std::vector<int32_t>{1, 1}, "stride (h, w)")
      .Check(IntsCheck("strides", 2, 0))
      .Attr("paddings", std::vector<int32_t>{0, 0},
            "padding (h, w) removed from each side of the output, or (top, bottom, left, right)")
      .Check(PaddingsCheck())
      .Attr("padding_algorithm", std::string("EXPLICIT"),
            "EXPLICIT (paddings), VALID (none) or SAME (paddings of a SAME conv of the Input)")
      .InSet({"EXPLICIT", "SAME", "VALID"})
      .Attr("output_padding", std::vector<int32_t>{},
            "added to the output size (h, w), each below max(stride, dilation)")
      .Attr("output_size", std::vector<int32_t>{},
            "the output size (h, w), at most a stride above the computed one (over "
            "output_padding; OutputSize or OutputSizeTensor over this)")
      .Attr("dilations", std::vector<int32_t>{1, 1}, "dilation (h, w) of the filter")
      .Check(IntsCheck("dilations", 2, 0))
      .Attr("groups", int32_t(1), "channel groups")
      .GreaterThan(0)
      .Attr("data_format", std::string("NCHW"), "NCHW (AnyLayout) or NHWC of Input and Output")
      .InSet({"NCHW", "NHWC", "AnyLayout"})
      .Attr("use_cudnn", false, "use cuDNN where available (ignored by the CPU kernel)")
      .Attr("workspace_size_MB", int32_t(4096), "cuDNN workspace limit (the CUDA kernel's)")
      .Attr("is_test", false, "Paddle's inference hint (ignored)")
      // Paddle's op version 2 (its oneDNN bfloat16 kernel's hints).
      .Attr("force_fp32_output", false, "bfloat16 hint of Paddle's oneDNN kernel (ignored)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
}

tide::OpSchema ConvTransposeSchema(const std::string& type) {
  return ConvTransposeAttrs(
      tide::OpSchema(type)
          .Comment("Output = the transposed convolution of Input by Filter (the Input gradient "
                   "of conv2d): each input pixel adds Filter times its value into a k x k "
                   "window of the output at stride steps. Output size per axis: (in - 1) * "
                   "stride - pad_begin - pad_end + dilation * (k - 1) + 1 + output_padding.")
          .Input("Input", "[N, C, H, W] (NHWC: [N, H, W, C])")
          .Input("Filter", "[C, M / groups, kh, kw]")
          .Input("Bias", "Paddle's oneDNN fusion input: must be absent")
          .AsDispensable()
          .Input("OutputSize", "output_size (h, w) computed at run time: an int tensor of 2")
          .AsDispensable()
          .Input("OutputSizeTensor", "output_size computed at run time: 2 one-element tensors")
          .AsDuplicable()
          .AsDispensable()
          .Output("Output", "[N, M, OH, OW] (NHWC: [N, OH, OW, M])")
          .KernelDataTypeFrom("Input")
          .InferShape(ConvTransposeInferShape)
          .Grad([type](tide::GradMaker& g) {
            auto op = g.NewOp(type + "_grad");
            for (const char* in : kOutputSizeInputs)
              if (!g.Input(in).empty()) op.Input(in, g.Input(in));
            op.Input("Input", g.Input("Input"))
                .Input("Filter", g.Input("Filter"))
                .Input(GradVarName("Output"), g.OutputGrad("Output"))
                .Output(GradVarName("Input"), g.InputGrad("Input"))
                .Output(GradVarName("Filter"), g.InputGrad("Filter"))
                .CopyAttrs();
          }));
}

tide::OpSchema ConvTransposeGradSchema(const std::string& type) {
  return ConvTransposeAttrs(
      tide::OpSchema(type)
          .Comment("Input@GRAD and Filter@GRAD of " + type.substr(0, type.size() - 5))
          .Input("Input", "the forward input")
          .Input("Filter", "the forward filter")
          .Input("OutputSize", "the forward's run-time output size")
          .AsDispensable()
          .Input("OutputSizeTensor", "the forward's run-time output size")
          .AsDuplicable()
          .AsDispensable()
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

TIDE_REGISTER_OP(ConvTransposeSchema("conv2d_transpose"));
TIDE_REGISTER_OP(ConvTransposeGradSchema("conv2d_transpose_grad"));
// Paddle emits depthwise_conv2d_transpose when groups == the input channels and each group has one
// output channel (off cuDNN); the same kernels serve it.
TIDE_REGISTER_OP(ConvTransposeSchema("depthwise_conv2d_transpose"));
TIDE_REGISTER_OP(ConvTransposeGradSchema("depthwise_conv2d_transpose_grad"));
TIDE_REGISTER_KERNEL("conv2d_transpose", "cpu", ConvTransposeKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv2d_transpose_grad", "cpu", ConvTransposeGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_transpose", "cpu", ConvTransposeKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_transpose_grad", "cpu", ConvTransposeGradKernel,
                     OPS_NN_FLOAT_TYPES);
