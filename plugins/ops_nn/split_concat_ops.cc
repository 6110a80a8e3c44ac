// split_concat_ops.cc: concat (inputs joined along an axis) with concat_grad, and split (an input
// cut into `num` equal parts or `sections` along an axis) whose grad is a concat; their shape
// rules are tide/ops/split_concat.hpp's. Paddle 2.x's AxisTensor / SectionsTensorList inputs
// override the attributes at run time. The CPU copies, and concat's forward kernel, are the SDK's
// header-only tide/kernels/concat.hpp.
#include <cstring>
#include <tide/kernels/concat.hpp>
#include <tide/low_precision.hpp>
#include <tide/ops/split_concat.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::ConcatDimsOf;
using tide::ops::SplitDimsOf;

// With an AxisTensor (or SectionsTensorList) the dims are known when the kernel runs; at
// compile time only the rank is.
bool TensorValued(tide::InferShapeContext& ctx) {
  return ctx.HasInput("AxisTensor") || ctx.HasInput("SectionsTensorList");
}

// ---------------------------------------------------------------------------------------------
// concat
void ConcatInferShape(tide::InferShapeContext& ctx) {
  int axis = 0;
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (TensorValued(ctx)) {
    if (!ctx.IsRuntime()) ctx.SetOutputDims("Out", Dims(ctx.InputDims("X").size(), -1));
    return;
  }
  ctx.SetOutputDims("Out", ConcatDimsOf(ctx, ctx.InputsDims("X"), &axis));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

// X@GRAD[i] = the slice of Out@GRAD that X[i] filled (only where wanted).
template <typename T>
void ConcatGradKernel(KernelContext& ctx) {
  tide::kernels::Cut(tide::ops::GetConcatGradArgs<T>(ctx));
}

// ---------------------------------------------------------------------------------------------
// split
void SplitInferShape(tide::InferShapeContext& ctx) {
  int axis = 0;
  if (TensorValued(ctx)) {
    for (size_t i = 0; i < ctx.OutputCount("Out"); ++i) {
      if (!ctx.IsRuntime()) ctx.SetOutputDims("Out", Dims(ctx.InputDims("X").size(), -1), i);
      ctx.SetOutputDataType("Out", ctx.InputDataType("X"), i);
    }
    return;
  }
  auto dims = SplitDimsOf(ctx, ctx.InputDims("X"), ctx.OutputCount("Out"), &axis);
  for (size_t i = 0; i < dims.size(); ++i) {
    ctx.SetOutputDims("Out", dims[i], i);
    ctx.SetOutputDataType("Out", ctx.InputDataType("X"), i);
  }
}

template <typename T>
void SplitKernel(KernelContext& ctx) {
  tide::kernels::Cut(tide::ops::GetSplitArgs<T>(ctx));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("concat")
                     .Comment("Out = the inputs joined along `axis`; other dims must agree.")
                     .Input("X", "the inputs, same rank")
                     .AsDuplicable()
                     .Output("Out", "the joined tensor")
                     .Input("AxisTensor",
                            "Paddle: the axis as a one-element int tensor "
                            "(optional; overrides `axis`)")
                     .AsDispensable()
                     .Attr("axis", int32_t(0),
                           "the axis to join along (negative counts from the end)")
                     .Attr("mkldnn_data_type", std::string("float32"),
                           "oneDNN precision hint "
                           "(ignored)")
                     .InferShape(ConcatInferShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("concat_grad");
                       op.Input("X", g.Input("X"));
                       if (!g.Input("AxisTensor").empty())
                         op.Input("AxisTensor", g.Input("AxisTensor"));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("concat_grad")
                     .Comment("X@GRAD[i] = the slice of Out@GRAD that X[i] filled.")
                     .Input("X", "the forward inputs (for their dims)")
                     .AsDuplicable()
                     .Input("AxisTensor", "the forward AxisTensor")
                     .AsDispensable()
                     .Input(GradVarName("Out"), "gradient of Out")
                     .Output(GradVarName("X"), "gradients of X (@EMPTY@ where unwanted)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Attr("axis", int32_t(0), "the forward axis")
                     .Attr("mkldnn_data_type", std::string("float32"), "ignored")
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape(GradLike({"X"})));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("concat", "cpu", tide::kernels::Concat, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("concat_grad", "cpu", ConcatGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("split")
                     .Comment("Cuts X along `axis` into `num` equal parts or parts of `sections` "
                              "sizes (one -1 takes the rest).")
                     .Input("X", "the input")
                     .Input("AxisTensor",
                            "Paddle: the axis as a one-element int tensor "
                            "(optional; overrides `axis`)")
                     .AsDispensable()
                     .Input("SectionsTensorList",
                            "Paddle: the sections as one-element int "
                            "tensors (optional; override `sections`)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the parts, in order")
                     .AsDuplicable()
                     .Attr("axis", int32_t(0), "the axis to cut (negative counts from the end)")
                     .Attr("num", int32_t(0), "number of equal parts (0: use sections)")
                     .Attr("sections", std::vector<int32_t>{}, "sizes of the parts (when num is 0)")
                     .Attr("mkldnn_data_type", std::string("float32"),
                           "oneDNN precision hint "
                           "(ignored)")
                     .InferShape(SplitInferShape)
                     .Grad([](tide::GradMaker& g) {  // the parts' grads joined back
                       auto op = g.NewOp("concat");
                       op.Input("X", g.OutputGrad("Out"));
                       if (!g.Input("AxisTensor").empty())
                         op.Input("AxisTensor", g.Input("AxisTensor"));
                       op.Output("Out", g.InputGrad("X")).Attr("axis", g.Attr<int32_t>("axis"));
                     }));
TIDE_REGISTER_KERNEL("split", "cpu", SplitKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
