// stack_squeeze_ops.cc: squeeze2 / unsqueeze2 (X's data with dims dropped or added; XShape for
// the grad, like reshape2; their forward kernel is the SDK's tide/kernels/reshape.hpp; Out is
// declared a view of X, as reshape_ops.cc's) and stack /
// unstack (a new dim at `axis`, each other's grad; their copies are tide/kernels/concat.hpp's).
#include <cstring>
#include <tide/kernels/concat.hpp>
#include <tide/kernels/reshape.hpp>
#include <tide/low_precision.hpp>
#include <tide/ops/reshape.hpp>
#include <tide/ops/tensor_shape.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// The attribute's axes at compile time (the axes tensors are read when the kernel runs).
Dims SqueezeOut(const tide::InferShapeContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const auto axes = ctx.Attr<std::vector<int32_t>>("axes");
  return std::string(op) == "squeeze2" ? tide::ops::SqueezeDims(op, x, axes)
                                       : tide::ops::UnsqueezeDims(op, x, axes);
}

// X@GRAD = Out@GRAD with X's dims (from XShape).
template <typename T>
void SqueezeGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::kernels::CopyAs<T>(ctx, dout, ctx.Output(GradVarName("X").c_str()),
                           tide::ops::ReshapeGradXDims(ctx, dout));
}

void SqueezeInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  if (ctx.HasInput("AxesTensor") || ctx.HasInput("AxesTensorList")) {
    // The axes are known when the kernel runs; at compile time Out's rank is.
    if (!ctx.IsRuntime()) {
      const int64_t k = ctx.HasInput("AxesTensor")
                            ? DimsProduct(ctx.InputDims("AxesTensor"))
                            : static_cast<int64_t>(ctx.InputCount("AxesTensorList"));
      if (k >= 0) ctx.SetOutputDims("Out", Dims(x.size() + static_cast<size_t>(k), -1));
    }
  } else {
    ctx.SetOutputDims("Out", SqueezeOut(ctx, x));
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("XShape")) {
    ctx.SetOutputDims("XShape", tide::ops::XShapeDims(x));
    ctx.SetOutputDataType("XShape", ctx.InputDataType("X"));
  }
}

tide::OpSchema SqueezeSchema(const std::string& type, const char* comment) {
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("X", "the input")
      .Output("Out", "X's data with the new dims")
      .Output("XShape", "[0] + X's dims (no data), for the grad")
      .AsIntermediate()
      .AsDispensable()
      .Attr("axes", std::vector<int32_t>{}, "the dims")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .View("X", "Out")
      .InferShape(SqueezeInferShape)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input("XShape", g.Output("XShape"))
            .Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

tide::OpSchema SqueezeGradSchema(const std::string& type) {
  return tide::OpSchema(type)
      .Input("XShape")
      .Input(GradVarName("Out"))
      .Output(GradVarName("X"))
      .Attr("axes", std::vector<int32_t>{})
      .Attr("mkldnn_data_type", std::string("float32"))
      .KernelDataTypeFrom(GradVarName("Out"))
      .View(GradVarName("Out"), GradVarName("X"))
      .InferShape([](tide::InferShapeContext& c) {
        const Dims xs = c.InputDims("XShape");
        c.SetOutputDims(GradVarName("X").c_str(), Dims(xs.begin() + 1, xs.end()));
        c.SetOutputDataType(GradVarName("X").c_str(), c.InputDataType(GradVarName("Out").c_str()));
      });
}

// ---------------------------------------------------------------------------------------------
// stack: inputs [pre, post] each; Out [pre, n, post].
template <typename T>
void StackKernel(KernelContext& ctx) {
  tide::kernels::Join(tide::ops::GetStackArgs<T>(ctx));
}

// unstack: X [pre, n, post] -> n outputs [pre, post] (also stack's grad).
template <typename T>
void UnstackKernel(KernelContext& ctx) {
  tide::kernels::Cut(tide::ops::GetUnstackArgs<T>(ctx));
}

// unbind (Paddle 2.x's paddle.unbind): unstack with the pieces in Out and their count from it.
template <typename T>
void UnbindKernel(KernelContext& ctx) {
  tide::kernels::Cut(tide::ops::GetUnstackArgs<T>(ctx, ctx.Input("X"), ctx.Outputs("Out")));
}

void UnbindInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", op, "': X must have rank >= 1");
  const int a = NormAxis(op, ctx.Attr<int32_t>("axis"), x.size());
  const size_t n = ctx.OutputCount("Out");
  TIDE_CHECK(x[a] < 0 || static_cast<size_t>(x[a]) == n, "op '", op, "': ", n,
             " outputs Out for X ", tide::ToString(x), " with ", x[a], " at axis ", a);
  Dims od = x;
  od.erase(od.begin() + a);
  for (size_t i = 0; i < n; ++i) {
    ctx.SetOutputDims("Out", od, i);
    ctx.SetOutputDataType("Out", ctx.InputDataType("X"), i);
  }
}

template <typename T>
void StackGradKernel(KernelContext& ctx) {
  tide::kernels::Cut(tide::ops::GetStackGradArgs<T>(ctx));
}

void StackInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims(
      "Y", tide::ops::StackDims(ctx.op_type(), ctx.InputsDims("X"), ctx.Attr<int32_t>("axis")));
  ctx.SetOutputDataType("Y", ctx.InputDataType("X"));
}

void UnstackInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  const int a = NormAxis(op, ctx.Attr<int32_t>("axis"), x.size());
  const int32_t num = ctx.Attr<int32_t>("num");
  TIDE_CHECK(x[a] < 0 || x[a] == num, "op '", op, "': num (", num, ") must equal X's dim ", a, " (",
             x[a], ")");
  TIDE_CHECK(static_cast<int32_t>(ctx.OutputCount("Y")) == num, "op '", op,
             "': ", ctx.OutputCount("Y"), " outputs Y for num = ", num);
  Dims od = x;
  od.erase(od.begin() + a);
  for (int32_t i = 0; i < num; ++i) {
    ctx.SetOutputDims("Y", od, i);
    ctx.SetOutputDataType("Y", ctx.InputDataType("X"), i);
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(SqueezeSchema("squeeze2",
                               "Out = X without the listed size-1 dims (every "
                               "size-1 dim when axes is empty; others are kept)."));
TIDE_REGISTER_OP(SqueezeGradSchema("squeeze2_grad"));
TIDE_REGISTER_OP(SqueezeSchema("unsqueeze2",
                               "Out = X with a dim of 1 inserted at each of axes "
                               "in turn (Paddle: AxesTensor or AxesTensorList, "
                               "when given, override axes).")
                     .Input("AxesTensor", "Paddle: the axes as a 1-D int tensor (optional)")
                     .AsDispensable()
                     .Input("AxesTensorList",
                            "Paddle: the axes as one-element int tensors "
                            "(optional)")
                     .AsDuplicable()
                     .AsDispensable());
TIDE_REGISTER_OP(SqueezeGradSchema("unsqueeze2_grad"));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("squeeze2", "cpu", tide::kernels::Squeeze, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("squeeze2_grad", "cpu", SqueezeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("unsqueeze2", "cpu", tide::kernels::Squeeze, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("unsqueeze2_grad", "cpu", SqueezeGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("stack")
        .Comment("Y = the X tensors (all of one shape) stacked along a new dim at axis.")
        .Input("X", "tensors of one shape")
        .AsDuplicable()
        .Output("Y", "the stack")
        .Attr("axis", int32_t(0), "where the new dim goes (negative: from the end)")
        .InferShape(StackInferShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("stack_grad")
              .Input(GradVarName("Y"), g.OutputGrad("Y"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("stack_grad")
                     .Input(GradVarName("Y"))
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .Attr("axis", int32_t(0))
                     .InferShape([](tide::InferShapeContext& c) {
                       Dims y = c.InputDims(GradVarName("Y").c_str());
                       const std::string g = GradVarName("X");
                       const int a = NormAxis(c.op_type(), c.Attr<int32_t>("axis"), y.size());
                       y.erase(y.begin() + a);
                       for (size_t i = 0; i < c.OutputCount(g.c_str()); ++i) {
                         c.SetOutputDims(g.c_str(), y, i);
                         c.SetOutputDataType(g.c_str(), c.InputDataType(GradVarName("Y").c_str()),
                                             i);
                       }
                     }));
TIDE_REGISTER_OP(tide::OpSchema("unstack")
                     .Comment("Y = X split along axis into num tensors without that dim.")
                     .Input("X", "the input")
                     .Output("Y", "the pieces")
                     .AsDuplicable()
                     .Attr("axis", int32_t(0), "the split dim")
                     .Attr("num", int32_t(0), "X's dim at axis")
                     .InferShape(UnstackInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("stack")
                           .Input("X", g.OutputGrad("Y"))
                           .Output("Y", g.InputGrad("X"))
                           .Attr("axis", g.Attr<int32_t>("axis"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("unbind")
                     .Comment("Out = X split along axis into X's dim of pieces without that dim "
                              "(paddle.unbind).")
                     .Input("X", "the input")
                     .Output("Out", "the pieces, one per index of the axis")
                     .AsDuplicable()
                     .Attr("axis", int32_t(0), "the split dim (negative: from the end)")
                     .InferShape(UnbindInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("stack")
                           .Input("X", g.OutputGrad("Out"))
                           .Output("Y", g.InputGrad("X"))
                           .Attr("axis", g.Attr<int32_t>("axis"));
                     }));
TIDE_REGISTER_KERNEL("unbind", "cpu", UnbindKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES);
TIDE_REGISTER_KERNEL("stack", "cpu", StackKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("stack_grad", "cpu", StackGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("unstack", "cpu", UnstackKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
