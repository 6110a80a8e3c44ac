// fc_op.cc: Paddle's fc, the inference op its fc_fuse_pass makes of a matmul and its bias add
// (InferenceTranspiler makes it of matmul_v2 + elementwise_add [+ an activation]):
// Out = act(Input [M, K] @ W [K, N] + Bias), Input flattened at in_num_col_dims
// (tide/ops/fc.hpp). act is activation_type (Paddle's fc: "" or relu) or fuse_activation with
// fuse_alpha / fuse_beta (its oneDNN fc_act fusion; fused_activation.h), e.g. gelu. One GEMM,
// then the bias and activation in one pass over Out (the SDK's header-only kernel,
// tide/kernels/fc.hpp). No gradient.
#include <string>
#include <tide/kernels/fc.hpp>
#include <tide/ops/fc.hpp>
#include <tide/ops/int8.hpp>

#include "fused_activation.h"

namespace ops_nn {
namespace {

using tide::ops::FcShape;

void FcInferShape(tide::InferShapeContext& ctx) {
  const FcShape s = tide::ops::GetFcShape("fc", ctx.InputDims("Input"), ctx.InputDims("W"),
                                          ctx.Attr<int32_t>("in_num_col_dims"));
  if (ctx.HasInput("Bias")) tide::ops::CheckFcBias("fc", ctx.InputDims("Bias"), s.n);
  ctx.SetOutputDims("Out", s.out);
  const TideDataType xt = ctx.InputDataType("Input");
  TideDataType out = tide::ops::IsInt8Type(xt) ? tide::ops::Int8OutputTypeOf(ctx) : xt;
  if (xt == TIDE_BF16 && ctx.Attr<bool>("force_fp32_output")) out = TIDE_FP32;  // bf16 inference
  ctx.SetOutputDataType("Out", out);
  ctx.ShareLoD("Input", "Out");  // as mul's: the rows keep their sequences (Paddle's fc too)
}

tide::OpSchema FcSchema() {
  return tide::OpSchema("fc")
      .Comment(
          "Out = act(Input @ W + Bias), Input flattened to [M, K] at in_num_col_dims, Out "
          "Input's first in_num_col_dims dims then N. act: fuse_activation (with "
          "fuse_alpha / fuse_beta, the meanings of fused_conv2d's) when set, else "
          "activation_type. Paddle's inference op (fc_fuse_pass); made by "
          "tide.transpiler.InferenceTranspiler. No gradient.")
      .Input("Input", "the rows, [..., K] flattened at in_num_col_dims")
      .Input("W", "the weights, [K, N]")
      .AsFloat32Param()  // a bfloat16 kernel reorders it into its type once (bf16 inference)
      .Input("Bias", "added to each row, N values ([N] or [1, N])")
      .AsDispensable()
      .AsFloat32Param()
      .Output("Out", "Input's first in_num_col_dims dims, then N")
      .KernelDataTypeFrom("Input")
      .InferShape(FcInferShape)
      .Attr("in_num_col_dims", int32_t(1), "Input's leading dims that make the rows")
      .Attr("activation_type", std::string(""), "Paddle's fc activation: \"\" or relu")
      .InSet({"", "relu"})
      .Attr("fuse_activation", std::string(""),
            "the activation of Paddle's oneDNN fc fusion (fused_conv2d's names: gelu / gelu_erf, "
            "gelu_tanh, relu, tanh, ...); overrides activation_type")
      .InSet(FusedActNameList())
      .Attr("fuse_alpha", 0.0f, "fuse_activation's alpha")
      .Attr("fuse_beta", 0.0f, "fuse_activation's beta")
      .Attr("padding_weights", false, "Paddle's padded W (unsupported: must be false)")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.i == 0,
                   "op 'fc': padding_weights (W padded by 4 on each dim) is not "
                   "supported");
      })
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      // int8 inference (tide/ops/int8.hpp): read by the u8/s8 kernels (Paddle's names).
      .Attr("force_fp32_output", false,
            "int8: Out float32 (else u8 / s8 by Scale_out); bfloat16: Out float32, the float32 "
            "sums not rounded (bf16 inference's fc writing a fetched value, as Paddle's)")
      .Attr("Scale_in", 1.0f, "int8: Input's scale (Input = round(x * Scale_in))")
      .Attr("Scale_out", 1.0f, "int8: Out's scale, unless force_fp32_output")
      .Attr("Scale_weights", std::vector<float>{1.0f},
            "int8: W's scale per column (output channel), or one for all");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(FcSchema());
TIDE_REGISTER_KERNEL("fc", "cpu", tide::kernels::Fc, OPS_NN_FLOAT_TYPES);
