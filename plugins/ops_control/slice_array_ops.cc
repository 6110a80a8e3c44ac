// slice_array_ops.cc: Paddle 3.x's slice_array_dense (`list[i]` of a list built in a loop, a
// tensor array: a copy of element i) and slice_array (`list[a:b]`: a new array of copies of
// elements [a, b)), with Paddle's index rules (phi's SliceArrayKernel): a negative index counts
// from the array's end at run time and is clamped at 0; slice_array's end is clamped to the size,
// and an empty range is an error, as Paddle's. The index is the first value of the `starts`
// attribute, of StartsTensor, or of StartsTensorList's first tensor (what Paddle's IntArray operand
// becomes; `ends` likewise). Their gradients, Paddle's too: zeros of each element's dims, Out@GRAD
// in the elements read. Kernel-less, as the other array ops.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "array_views.h"
#include "control_util.h"
#include "grad_util.h"

namespace ops_control {
namespace {

int64_t FirstValue(tide::OpRunContext& ctx, const std::string& name) {
  tide::OwnedTensor staged;
  const tide::Tensor t = OnHost(InputTensor(ctx, name), staged);
  TIDE_CHECK(t.numel() >= 1 && (t.dtype() == TIDE_INT64 || t.dtype() == TIDE_INT32), "op '",
             ctx.op_type(), "': the index '", name, "' must be an int64 or int32 tensor of one ",
             "value, got ", tide::DataTypeName(t.dtype()), " ", tide::ToString(t.dims()));
  return t.dtype() == TIDE_INT64 ? *t.data<int64_t>() : *t.data<int32_t>();
}

// The first value of attribute `attr`, of input `tensor` or of input `list` (which wins).
int64_t ReadBound(tide::OpRunContext& ctx, const char* attr, const char* tensor, const char* list) {
  const auto lists = ctx.Inputs(list);
  if (!lists.empty()) return FirstValue(ctx, lists[0]);
  const auto tensors = ctx.Inputs(tensor);
  if (!tensors.empty()) return FirstValue(ctx, tensors[0]);
  const auto v = ctx.Attr<std::vector<int64_t>>(attr);
  TIDE_CHECK(!v.empty(), "op '", ctx.op_type(), "': no index: the attribute '", attr,
             "' is empty and neither ", tensor, " nor ", list, " is given");
  return v[0];
}
int64_t ReadStart(tide::OpRunContext& ctx) {
  return ReadBound(ctx, "starts", "StartsTensor", "StartsTensorList");
}

// A negative index counts from the end; clamped at 0.
int64_t FromEnd(int64_t i, size_t size) {
  return std::max<int64_t>(i < 0 ? i + static_cast<int64_t>(size) : i, 0);
}

tide::TensorArray InputArray(tide::OpRunContext& ctx, std::string* name) {
  *name = OnlyInput(ctx, "Input");
  tide::Variable v = Lookup(ctx, *name);
  TIDE_CHECK(v.IsTensorArray(), "op '", ctx.op_type(), "': Input ('", *name,
             "') does not hold a tensor array");
  MaterializeView(v);  // a while_grad step's gradient array: read whole
  return v.GetTensorArray();
}

// slice_array_dense's element: starts[0] from the end when negative.
size_t DenseIndex(tide::OpRunContext& ctx, const std::string& name, size_t size) {
  const int64_t given = ReadStart(ctx);
  const int64_t i = FromEnd(given, size);
  TIDE_CHECK(i < static_cast<int64_t>(size), "op '", ctx.op_type(), "': index ", given,
             " is past the end of array '", name, "' (", size, " element(s))");
  return static_cast<size_t>(i);
}

// slice_array's [begin, end).
std::pair<size_t, size_t> SliceRange(tide::OpRunContext& ctx, const std::string& name,
                                     size_t size) {
  const int64_t start = ReadStart(ctx);
  const int64_t end_given = ReadBound(ctx, "ends", "EndsTensor", "EndsTensorList");
  const int64_t begin = FromEnd(start, size);
  int64_t end = std::min<int64_t>(FromEnd(end_given, size), static_cast<int64_t>(size));
  if (start == -1 && end == 0) end = begin + 1;  // Paddle's `list[-1:]`
  TIDE_CHECK(end > begin, "op '", ctx.op_type(), "': the slice [", start, ", ", end_given,
             ") of array '", name, "' (", size, " element(s)) is empty, which Paddle refuses too");
  return {static_cast<size_t>(begin), static_cast<size_t>(end)};
}

const tide::Tensor Written(tide::OpRunContext& ctx, const tide::TensorArray& arr, size_t i,
                           const std::string& name) {
  const tide::Tensor e = arr.at(i);
  TIDE_CHECK(e.initialized(), "op '", ctx.op_type(), "': element ", i, " of array '", name,
             "' was never written");
  return e;
}

void SliceArrayDenseRun(tide::OpRunContext& ctx) {
  std::string name;
  const tide::TensorArray arr = InputArray(ctx, &name);
  const size_t i = DenseIndex(ctx, name, arr.size());
  Lookup(ctx, OnlyOutput(ctx, "Out"))
      .GetTensor()
      .CopyFrom(Written(ctx, arr, i, name), ctx.place(), ctx.device_context());
}

void SliceArrayRun(tide::OpRunContext& ctx) {
  std::string name;
  const tide::TensorArray arr = InputArray(ctx, &name);
  const auto range = SliceRange(ctx, name, arr.size());
  std::vector<tide::OwnedTensor> copies(range.second - range.first);  // Out may be Input
  for (size_t i = range.first; i < range.second; ++i)
    copies[i - range.first].CopyFrom(Written(ctx, arr, i, name), ctx.place(), ctx.device_context());
  tide::TensorArray out = Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensorArray();
  out.resize(0);
  out.resize(copies.size());
  for (size_t k = 0; k < copies.size(); ++k) out.at(k).ShareDataWith(copies[k]);
}

// Input@GRAD: zeros of each element's dims, then `fill(grad)` writes the elements read.
template <typename Fill>
void ZerosThen(tide::OpRunContext& ctx, const tide::TensorArray& arr, const std::string& name,
               Fill fill) {
  tide::Variable gv = Lookup(ctx, OnlyOutput(ctx, "Input@GRAD"));
  MaterializeView(gv);
  tide::TensorArray grad = gv.GetTensorArray();
  grad.resize(0);
  grad.resize(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) ZerosLike(ctx, Written(ctx, arr, i, name), grad.at(i));
  fill(grad);
}

void SliceArrayDenseGradRun(tide::OpRunContext& ctx) {
  std::string name;
  const tide::TensorArray arr = InputArray(ctx, &name);
  const size_t i = DenseIndex(ctx, name, arr.size());
  const tide::Tensor dout = InputTensor(ctx, OnlyInput(ctx, "Out@GRAD"));
  ZerosThen(ctx, arr, name, [&](tide::TensorArray& grad) {
    grad.at(i).CopyFrom(dout, ctx.place(), ctx.device_context());
  });
}

void SliceArrayGradRun(tide::OpRunContext& ctx) {
  std::string name;
  const tide::TensorArray arr = InputArray(ctx, &name);
  const auto range = SliceRange(ctx, name, arr.size());
  const std::string dout_name = OnlyInput(ctx, "Out@GRAD");
  tide::Variable dv = Lookup(ctx, dout_name);
  TIDE_CHECK(dv.IsTensorArray(), "op '", ctx.op_type(), "': Out@GRAD ('", dout_name,
             "') does not hold a tensor array");
  MaterializeView(dv);
  const tide::TensorArray dout = dv.GetTensorArray();
  ZerosThen(ctx, arr, name, [&](tide::TensorArray& grad) {
    for (size_t k = 0; k < dout.size() && range.first + k < range.second; ++k)
      if (dout.at(k).initialized())
        grad.at(range.first + k).CopyFrom(dout.at(k), ctx.place(), ctx.device_context());
  });
}

// Build time: Out has Input's element dims (an array's declared dims are its elements').
void ElementShape(tide::InferShapeContext& ctx, bool array) {
  if (ctx.IsRuntime()) return;
  if (array) ctx.SetOutputVarType("Out", TIDE_VAR_LOD_TENSOR_ARRAY);
  ctx.SetOutputDims("Out", ctx.InputDims("Input"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

void GradShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime()) return;
  ctx.SetOutputVarType("Input@GRAD", TIDE_VAR_LOD_TENSOR_ARRAY);
  ctx.SetOutputDims("Input@GRAD", ctx.InputDims("Input"));
  ctx.SetOutputDataType("Input@GRAD", ctx.InputDataType("Input"));
}

// The index inputs of both ops and their grads; `ends` only for slice_array.
tide::OpSchema WithBounds(tide::OpSchema s, bool ends) {
  s.Input("StartsTensor", "the index as a tensor (its first value), over `starts`")
      .AsDispensable()
      .Input("StartsTensorList", "the index as one-element tensors (the first), over the others")
      .AsDispensable()
      .AsDuplicable()
      .Attr("starts", std::vector<int64_t>{},
            "the index (its first value); negative: from the array's end");
  if (ends)
    s.Input("EndsTensor", "the end as a tensor (its first value), over `ends`")
        .AsDispensable()
        .Input("EndsTensorList", "the end as one-element tensors (the first), over the others")
        .AsDispensable()
        .AsDuplicable()
        .Attr("ends", std::vector<int64_t>{},
              "the end, exclusive (its first value); negative: from the array's end");
  return s;
}

void GradInputs(tide::GradMaker& g, bool ends) {
  auto op = g.NewOp(ends ? "slice_array_grad" : "slice_array_dense_grad");
  op.Input("Input", g.Input("Input"))
      .Input("Out@GRAD", g.OutputGrad("Out"))
      .Input("StartsTensor", g.Input("StartsTensor"))
      .Input("StartsTensorList", g.Input("StartsTensorList"))
      .Output("Input@GRAD", g.InputGrad("Input"))
      .CopyAttrs();
  if (ends)
    op.Input("EndsTensor", g.Input("EndsTensor"))
        .Input("EndsTensorList", g.Input("EndsTensorList"));
}

}  // namespace
}  // namespace ops_control

using ops_control::WithBounds;

TIDE_REGISTER_OP(WithBounds(tide::OpSchema("slice_array_dense")
                                .Comment("Out = a copy of element starts[0] of tensor array Input "
                                         "(negative: from the end, clamped at 0).")
                                .Input("Input", "the tensor array")
                                .Output("Out", "the element"),
                            false)
                     .InferShape([](tide::InferShapeContext& c) {
                       ops_control::ElementShape(c, false);
                     })
                     .Grad([](tide::GradMaker& g) { ops_control::GradInputs(g, false); })
                     .Run(ops_control::SliceArrayDenseRun));

TIDE_REGISTER_OP(WithBounds(tide::OpSchema("slice_array")
                                .Comment("Out = a tensor array of copies of Input's elements "
                                         "[starts[0], ends[0]) (negative: from the end; the end "
                                         "clamped to the size; an empty range is an error).")
                                .Input("Input", "the tensor array")
                                .Output("Out", "the tensor array of the elements sliced"),
                            true)
                     .InferShape([](tide::InferShapeContext& c) {
                       ops_control::ElementShape(c, true);
                     })
                     .Grad([](tide::GradMaker& g) { ops_control::GradInputs(g, true); })
                     .Run(ops_control::SliceArrayRun));

TIDE_REGISTER_OP(WithBounds(tide::OpSchema("slice_array_dense_grad")
                                .NoGradient()
                                .Comment("Input@GRAD = zeros of each element's dims, Out@GRAD at "
                                         "the element slice_array_dense read.")
                                .Input("Input", "the forward tensor array")
                                .Input("Out@GRAD", "the gradient of the element read")
                                .Output("Input@GRAD", "a tensor array of Input's element dims"),
                            false)
                     .InferShape(ops_control::GradShape)
                     .Run(ops_control::SliceArrayDenseGradRun));

TIDE_REGISTER_OP(WithBounds(tide::OpSchema("slice_array_grad")
                                .NoGradient()
                                .Comment("Input@GRAD = zeros of each element's dims, Out@GRAD's "
                                         "elements at those slice_array read.")
                                .Input("Input", "the forward tensor array")
                                .Input("Out@GRAD", "the gradient of the array sliced (an array)")
                                .Output("Input@GRAD", "a tensor array of Input's element dims"),
                            true)
                     .InferShape(ops_control::GradShape)
                     .Run(ops_control::SliceArrayGradRun));
