// split_concat_ops.cc: concat (inputs joined along an axis) with concat_grad, and split (an input
// cut into `num` equal parts or `sections` along an axis) whose grad is a concat; their shape
// rules are tide/ops/split_concat.hpp's. Paddle 2.x's AxisTensor / SectionsTensorList inputs
// override the attributes at run time.
#include <cstring>

#include <tide/ops/split_concat.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::ConcatDims;
using tide::ops::ConcatDimsOf;
using tide::ops::SplitDims;
using tide::ops::SplitDimsOf;

// The axis: AxisTensor's value when given, else the attribute.
int AxisOf(const KernelContext& ctx) {
  return static_cast<int>(ctx.HasInput("AxisTensor") ? IntScalar(ctx, "AxisTensor")
                                                     : ctx.Attr<int32_t>("axis"));
}

// With an AxisTensor (or SectionsTensorList) the dims are known when the kernel runs; at
// compile time only the rank is.
bool TensorValued(tide::InferShapeContext& ctx) {
  return ctx.HasInput("AxisTensor") || ctx.HasInput("SectionsTensorList");
}

// Copies a [pre, n_i, post] block of each part into / out of a [pre, sum n_i, post] whole.
template <typename T>
void JoinOrCut(bool join, int64_t pre, int64_t post, int64_t total,
               const std::vector<int64_t>& sizes, const std::vector<const T*>& parts_in,
               const std::vector<T*>& parts_out, T* whole_out, const T* whole_in) {
  int64_t offset = 0;
  for (size_t p = 0; p < sizes.size(); ++p) {
    const int64_t width = sizes[p] * post;
    for (int64_t i = 0; i < pre; ++i) {
      if (join) {
        if (parts_in[p])
          std::memcpy(whole_out + i * total * post + offset, parts_in[p] + i * width,
                      sizeof(T) * width);
      } else if (parts_out[p]) {
        std::memcpy(parts_out[p] + i * width, whole_in + i * total * post + offset,
                    sizeof(T) * width);
      }
    }
    offset += width;
  }
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

template <typename T>
void ConcatKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  Dims od = ConcatDims(op, dims, AxisOf(ctx), &axis);
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  std::vector<int64_t> sizes;
  std::vector<const T*> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    TIDE_CHECK(xs[i].dtype() == xs[0].dtype(), "op '", op, "': X[", i, "] ('",
               ctx.InputName("X", i), "') is ", tide::DataTypeName(xs[i].dtype()), ", X[0] is ",
               tide::DataTypeName(xs[0].dtype()));
    sizes.push_back(dims[i][axis]);
    parts.push_back(xs[i].data<T>());
  }
  JoinOrCut<T>(true, DimsProduct(od, 0, axis), DimsProduct(od, axis + 1, od.size()), od[axis],
               sizes, parts, {}, out, nullptr);
}

// X@GRAD[i] = the slice of Out@GRAD that X[i] filled (only where wanted).
template <typename T>
void ConcatGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  Dims od = ConcatDims(op, dims, AxisOf(ctx), &axis);
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), od);
  const std::string g = GradVarName("X");
  std::vector<int64_t> sizes;
  std::vector<T*> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    sizes.push_back(dims[i][axis]);
    Tensor dx = i < ctx.OutputCount(g.c_str()) ? ctx.OptionalOutput(g.c_str(), i) : Tensor();
    parts.push_back(dx ? dx.mutable_data<T>(dims[i], ctx.place()) : nullptr);
  }
  JoinOrCut<T>(false, DimsProduct(od, 0, axis), DimsProduct(od, axis + 1, od.size()), od[axis],
               sizes, {}, parts, nullptr, dout.data<T>());
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
  Tensor x = ctx.Input("X");
  int axis = 0;
  std::vector<int32_t> sections = ctx.Attr<std::vector<int32_t>>("sections");
  if (ctx.HasInput("SectionsTensorList")) {
    const std::vector<int64_t> v = IntScalars(ctx, "SectionsTensorList");
    sections.assign(v.begin(), v.end());
  }
  auto dims = SplitDims(ctx.op_type(), x.dims(), AxisOf(ctx), ctx.Attr<int32_t>("num"), sections,
                        ctx.OutputCount("Out"), &axis);
  std::vector<int64_t> sizes;
  std::vector<T*> parts;
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes.push_back(dims[i][axis]);
    Tensor o = ctx.OptionalOutput("Out", i);
    parts.push_back(o ? o.mutable_data<T>(dims[i], ctx.place()) : nullptr);
  }
  const Dims& xd = x.dims();
  JoinOrCut<T>(false, DimsProduct(xd, 0, axis), DimsProduct(xd, axis + 1, xd.size()), xd[axis],
               sizes, {}, parts, nullptr, x.data<T>());
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("concat")
                     .Comment("Out = the inputs joined along `axis`; other dims must agree.")
                     .Input("X", "the inputs, same rank")
                     .AsDuplicable()
                     .Output("Out", "the joined tensor")
                     .Input("AxisTensor", "Paddle: the axis as a one-element int tensor "
                            "(optional; overrides `axis`)")
                     .AsDispensable()
                     .Attr("axis", int32_t(0),
                           "the axis to join along (negative counts from the end)")
                     .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint "
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
TIDE_REGISTER_KERNEL("concat", "cpu", ConcatKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("concat_grad", "cpu", ConcatGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("split")
                     .Comment("Cuts X along `axis` into `num` equal parts or parts of `sections` "
                              "sizes (one -1 takes the rest).")
                     .Input("X", "the input")
                     .Input("AxisTensor", "Paddle: the axis as a one-element int tensor "
                            "(optional; overrides `axis`)")
                     .AsDispensable()
                     .Input("SectionsTensorList", "Paddle: the sections as one-element int "
                            "tensors (optional; override `sections`)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the parts, in order")
                     .AsDuplicable()
                     .Attr("axis", int32_t(0), "the axis to cut (negative counts from the end)")
                     .Attr("num", int32_t(0), "number of equal parts (0: use sections)")
                     .Attr("sections", std::vector<int32_t>{}, "sizes of the parts (when num is 0)")
                     .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint "
                           "(ignored)")
                     .InferShape(SplitInferShape)
                     .Grad([](tide::GradMaker& g) {  // the parts' grads joined back
                       auto op = g.NewOp("concat");
                       op.Input("X", g.OutputGrad("Out"));
                       if (!g.Input("AxisTensor").empty())
                         op.Input("AxisTensor", g.Input("AxisTensor"));
                       op.Output("Out", g.InputGrad("X")).Attr("axis", g.Attr<int32_t>("axis"));
                     }));
TIDE_REGISTER_KERNEL("split", "cpu", SplitKernel, OPS_NN_MOVE_TYPES);
