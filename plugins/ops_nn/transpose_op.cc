// transpose_op.cc: transpose / transpose2 (Out[i...] = X permuted by `axis`) and their grads
// (the inverse permutation). transpose2 also outputs XShape ([0] + X's dims, no data) so its
// grad needs no X. The forward CPU kernel is the SDK's header-only tide/kernels/transpose.hpp.
#include <tide/kernels/transpose.hpp>
#include <tide/low_precision.hpp>
#include <tide/ops/transpose.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::CheckedPerm;
using tide::ops::ForwardXDims;
using tide::ops::InversePerm;
using tide::ops::Permuted;

void TransposeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims x = ctx.InputDims("X");
  auto perm = CheckedPerm(op, ctx.Attr<std::vector<int32_t>>("axis"), x);
  ctx.SetOutputDims("Out", Permuted(x, perm));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("XShape")) {
    ctx.SetOutputDims("XShape", tide::ops::XShapeDims(x));
    ctx.SetOutputDataType("XShape", ctx.InputDataType("X"));
  }
}

void GradFromXShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("X");
  Dims xs = ctx.InputDims("XShape");
  ctx.SetOutputDims(g.c_str(), Dims(xs.begin() + 1, xs.end()));
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(GradVarName("Out").c_str()));
}

template <typename T>
void TransposeGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetTransposeGradArgs<T>(ctx);
  tide::kernels::TransposeData(ctx, a.dout, a.dout_dims, a.inverse, a.dx);
}

tide::OpSchema TransposeSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type)
               .Comment("Out = X with its axes permuted: Out.dims[i] = X.dims[axis[i]].")
               .Input("X", "the input")
               .Output("Out", "the permuted input");
  if (v2) {
    s.Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate().AsDispensable();
    // Paddle 2.x's backend hints on transpose2 (its oneDNN kernel's); none changes the result.
    s.Attr("data_format", std::string("AnyLayout"), "Paddle oneDNN hint (ignored)")
        .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
  }
  return s.RequiredAttr("axis", TIDE_ATTR_INTS, "the permutation of X's axes")
      .InferShape(TransposeInferShape)
      .Grad([type, v2](tide::GradMaker& g) {
        auto op = g.NewOp(type + "_grad");
        if (v2)
          op.Input("XShape", g.Output("XShape"));
        else
          op.Input("X", g.Input("X"));
        op.Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

tide::OpSchema TransposeGradSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type).Comment("X@GRAD = Out@GRAD permuted back.");
  if (v2)
    s.Input("XShape", "the forward XShape")
        .Attr("data_format", std::string("AnyLayout"), "ignored")
        .Attr("mkldnn_data_type", std::string("float32"), "ignored");
  else
    s.Input("X", "the forward input (for its dims)");
  return s.Input(GradVarName("Out"), "gradient of Out")
      .Output(GradVarName("X"), "gradient of X")
      .RequiredAttr("axis", TIDE_ATTR_INTS, "the forward permutation")
      .KernelDataTypeFrom(GradVarName("Out"))
      .InferShape(v2 ? tide::InferShapeFn(GradFromXShape) : GradLike({"X"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(TransposeSchema("transpose", false));
TIDE_REGISTER_OP(TransposeGradSchema("transpose_grad", false));
TIDE_REGISTER_OP(TransposeSchema("transpose2", true));
TIDE_REGISTER_OP(TransposeGradSchema("transpose2_grad", true));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("transpose", "cpu", tide::kernels::Transpose, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("transpose2", "cpu", tide::kernels::Transpose, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("transpose_grad", "cpu", TransposeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("transpose2_grad", "cpu", TransposeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
