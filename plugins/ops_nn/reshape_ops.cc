// reshape_ops.cc: reshape / reshape2 (shape with 0 = copy X's dim, one -1 = inferred; an optional
// Shape tensor overrides the attribute at run time) and flatten / flatten2 (to 2-D at `axis`),
// with grads. The *2 variants output XShape ([0] + X's dims, no data) so their grads need no X.
// The forward kernels (and flatten_contiguous_range's) are the SDK's tide/kernels/reshape.hpp.
// Every one of these ops declares Out (X@GRAD for the grads) a view of X (Out@GRAD): where the
// input dies at the op, the executor moves its memory into the output and the kernel copies
// nothing (TideOpDef.views; the CUDA plugin's kernels skip the copy too).
#include <cstring>
#include <tide/kernels/reshape.hpp>
#include <tide/low_precision.hpp>
#include <tide/ops/index_shape.hpp>
#include <tide/ops/reshape.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::FlattenDims;
using tide::ops::ForwardXDims;
using tide::ops::ReshapeDims;

// The target shape: Paddle's ShapeTensor (one value per variable) or the Shape tensor's values
// when given (run time, in that order of precedence), else the attribute.

void SetXShape(tide::InferShapeContext& ctx, const Dims& x) {
  if (!ctx.HasOutput("XShape")) return;
  ctx.SetOutputDims("XShape", tide::ops::XShapeDims(x));
  ctx.SetOutputDataType("XShape", ctx.InputDataType("X"));
}

void ReshapeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims x = ctx.InputDims("X");
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  SetXShape(ctx, x);
  if (ctx.HasInput("ShapeTensor")) {  // values known at run time; the rank now
    if (!ctx.IsRuntime()) ctx.SetOutputDims("Out", Dims(ctx.InputCount("ShapeTensor"), -1));
    return;
  }
  if (ctx.HasInput("Shape")) {
    // The values are only known when the kernel runs; at compile time the rank is.
    if (!ctx.IsRuntime()) {
      Dims s = ctx.InputDims("Shape");
      TIDE_CHECK(s.size() == 1, "op '", op, "': Shape must be 1-D, got ", tide::ToString(s));
      if (s[0] >= 0) ctx.SetOutputDims("Out", Dims(static_cast<size_t>(s[0]), -1));
    }
    return;
  }
  auto a = ctx.Attr<std::vector<int32_t>>("shape");
  Dims out = ReshapeDims(op, std::vector<int64_t>(a.begin(), a.end()), x);
  ctx.SetOutputDims("Out", out);
  if (!x.empty() && !out.empty() && x[0] == out[0]) ctx.ShareLoD("X", "Out");  // rows unchanged
}

void GradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("X");
  Dims x;
  if (ctx.HasInput("XShape")) {
    Dims xs = ctx.InputDims("XShape");
    x.assign(xs.begin() + 1, xs.end());
  } else {
    x = ctx.InputDims("X");
  }
  ctx.SetOutputDims(g.c_str(), x);
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(GradVarName("Out").c_str()));
}

// X@GRAD = Out@GRAD with X's dims.
template <typename T>
void ReshapeGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::kernels::CopyWithDims<T>(ctx, dout, ctx.Output(GradVarName("X").c_str()),
                                 tide::ops::ReshapeGradXDims(ctx, dout));
}

// ---------------------------------------------------------------------------------------------
void FlattenInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  ctx.SetOutputDims("Out", FlattenDims(ctx.op_type(), x, ctx.Attr<int32_t>("axis")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  SetXShape(ctx, x);
}

// Paddle 2.x's flatten_contiguous_range (tide/ops/index_shape.hpp).
template <typename Ctx>
Dims FlattenRangeDims(const Ctx& ctx, const Dims& x) {
  return tide::ops::FlattenRangeDims(ctx.op_type(), x, ctx.template Attr<int32_t>("start_axis"),
                                     ctx.template Attr<int32_t>("stop_axis"));
}

void FlattenRangeInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  Dims out = FlattenRangeDims(ctx, x);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  SetXShape(ctx, x);
  if (!x.empty() && !out.empty() && x[0] == out[0]) ctx.ShareLoD("X", "Out");
}

// Grad op of reshape/flatten (v1: reads X's dims from X) or the *2 ops (from XShape).
tide::GradMakerFn CopyGradMaker(const std::string& grad_type, bool v2) {
  return [grad_type, v2](tide::GradMaker& g) {
    auto op = g.NewOp(grad_type);
    if (v2)
      op.Input("XShape", g.Output("XShape"));
    else
      op.Input("X", g.Input("X"));
    op.Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  };
}

tide::OpSchema ReshapeSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type)
               .Comment(
                   "Out = X's data with dims `shape`: 0 copies X's dim at that index, one "
                   "-1 is inferred from the element count. A Shape tensor, when given, "
                   "overrides the attribute at run time.")
               .Input("X", "the input")
               .Input("Shape", "int32 target shape (optional; overrides `shape`)")
               .AsDispensable()
               .Input("ShapeTensor",
                      "Paddle: the target shape as one-element int tensors "
                      "(optional; overrides Shape and `shape`)")
               .AsDuplicable()
               .AsDispensable()
               .Output("Out", "the reshaped input");
  if (v2) {
    s.Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate().AsDispensable();
    // Paddle 2.x's reshape2 may take its shape from tensors alone.
    s.Attr("shape", std::vector<int32_t>{}, "the target shape (0: copy, -1: infer)")
        .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
  } else {
    s.RequiredAttr("shape", TIDE_ATTR_INTS, "the target shape (0: copy, -1: infer)");
  }
  return s
      .Attr("inplace", false, "Fluid's hint that Out may share X's memory (Out == X is supported)")
      .KernelDataTypeFrom("X")
      .View("X", "Out")
      .InferShape(ReshapeInferShape)
      .Grad(CopyGradMaker(type + "_grad", v2));
}

tide::OpSchema FlattenSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type)
               .Comment("Out = X as a matrix [prod(dims[:axis]), prod(dims[axis:])].")
               .Input("X", "the input")
               .Output("Out", "the 2-D result");
  if (v2)
    s.Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate().AsDispensable();
  return s
      .Attr("axis", int32_t(1), "dims before it become rows, the rest columns (0 <= axis <= rank)")
      .View("X", "Out")
      .InferShape(FlattenInferShape)
      .Grad(CopyGradMaker(type + "_grad", v2));
}

tide::OpSchema FlattenRangeSchema() {
  return tide::OpSchema("flatten_contiguous_range")
      .Comment(
          "Out = X with dims [start_axis, stop_axis] merged into one (Paddle 2.x's "
          "paddle.flatten).")
      .Input("X", "the input")
      .Output("Out", "the flattened input")
      .Output("XShape", "[0] + X's dims (no data), for the grad")
      .AsIntermediate()
      .AsDispensable()
      .Attr("start_axis", int32_t(1), "first dim merged (negative: from the end)")
      .Attr("stop_axis", int32_t(1), "last dim merged (negative: from the end)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .KernelDataTypeFrom("X")
      .View("X", "Out")
      .InferShape(FlattenRangeInferShape)
      .Grad(CopyGradMaker("flatten_contiguous_range_grad", true));
}

tide::OpSchema CopyGradSchema(const std::string& type, bool v2, tide::OpSchema s) {
  if (v2)
    s.Input("XShape", "the forward XShape");
  else
    s.Input("X", "the forward input (for its dims)");
  return s.Comment("X@GRAD = Out@GRAD with X's dims.")
      .Input(GradVarName("Out"), "gradient of Out")
      .Output(GradVarName("X"), "gradient of X")
      .KernelDataTypeFrom(GradVarName("Out"))
      .View(GradVarName("Out"), GradVarName("X"))
      .InferShape(GradInferShape);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ReshapeSchema("reshape", false));
TIDE_REGISTER_OP(ReshapeSchema("reshape2", true));
TIDE_REGISTER_OP(CopyGradSchema("reshape_grad", false, tide::OpSchema("reshape_grad"))
                     .RequiredAttr("shape", TIDE_ATTR_INTS, "the forward target shape")
                     .Attr("inplace", false, "the forward inplace hint"));
TIDE_REGISTER_OP(CopyGradSchema("reshape2_grad", true, tide::OpSchema("reshape2_grad"))
                     .Attr("shape", std::vector<int32_t>{}, "the forward target shape")
                     .Attr("inplace", false, "the forward inplace hint")
                     .Attr("mkldnn_data_type", std::string("float32"), "ignored"));
TIDE_REGISTER_OP(FlattenSchema("flatten", false));
TIDE_REGISTER_OP(FlattenSchema("flatten2", true));
TIDE_REGISTER_OP(CopyGradSchema("flatten_grad", false, tide::OpSchema("flatten_grad"))
                     .Attr("axis", int32_t(1), "the forward axis"));
TIDE_REGISTER_OP(CopyGradSchema("flatten2_grad", true, tide::OpSchema("flatten2_grad"))
                     .Attr("axis", int32_t(1), "the forward axis"));
TIDE_REGISTER_OP(FlattenRangeSchema());
TIDE_REGISTER_OP(CopyGradSchema("flatten_contiguous_range_grad", true,
                                tide::OpSchema("flatten_contiguous_range_grad"))
                     .Attr("start_axis", int32_t(1), "the forward start_axis")
                     .Attr("stop_axis", int32_t(1), "the forward stop_axis")
                     .Attr("mkldnn_data_type", std::string("float32"), "ignored"));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("flatten_contiguous_range", "cpu", tide::kernels::FlattenContiguousRange,
                     OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16,
                     tide::bfloat16);
TIDE_REGISTER_KERNEL("flatten_contiguous_range_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("reshape", "cpu", tide::kernels::Reshape, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("reshape2", "cpu", tide::kernels::Reshape, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("flatten", "cpu", tide::kernels::Flatten, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("flatten2", "cpu", tide::kernels::Flatten, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("reshape_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("reshape2_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("flatten_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("flatten2_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
