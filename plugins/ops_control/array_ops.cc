// array_ops.cc: tensor arrays (LoDTensorArray variables): write_to_array, read_from_array and
// array_length, kernel-less as in Fluid (an array is no tensor), and the gradients' helpers. The
// index I is a one-element int64 (or int32) tensor on any place; elements are copied on the op's
// place with their LoD. A while_grad step's gradient arrays may be views (array_views.h): these
// ops read, write and clear their elements one at a time; tensor_array_sum materializes them.
#include "array_views.h"
#include "control_util.h"
#include "grad_util.h"

namespace ops_control {
namespace {

int64_t ReadIndex(tide::OpRunContext& ctx) {
  const std::string name = OnlyInput(ctx, "I");
  tide::Tensor t = InputTensor(ctx, name);
  TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_INT64 || t.dtype() == TIDE_INT32), "op '",
             ctx.op_type(), "': the index '", name, "' must be a one-element int64 tensor, got ",
             tide::DataTypeName(t.dtype()), " ", tide::ToString(t.dims()));
  tide::OwnedTensor tmp;
  tide::Tensor h = OnHost(t, tmp);
  const int64_t i = h.dtype() == TIDE_INT64 ? *h.data<int64_t>() : *h.data<int32_t>();
  TIDE_CHECK(i >= 0, "op '", ctx.op_type(), "': the index '", name, "' is negative (", i, ")");
  return i;
}

void WriteToArrayRun(tide::OpRunContext& ctx) {
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  const int64_t i = ReadIndex(ctx);
  tide::Variable out = Lookup(ctx, OnlyOutput(ctx, "Out"));
  if (ArrayView* view = FindView(out)) {
    view->Set(static_cast<size_t>(i)).CopyFrom(x, ctx.place(), ctx.device_context());
    return;
  }
  tide::TensorArray arr = out.GetTensorArray();
  if (arr.size() <= static_cast<size_t>(i)) arr.resize(i + 1);
  arr.at(i).CopyFrom(x, ctx.place(), ctx.device_context());
}

void ReadFromArrayRun(tide::OpRunContext& ctx) {
  const std::string arr_name = OnlyInput(ctx, "X");
  tide::Variable av = Lookup(ctx, arr_name);
  TIDE_CHECK(av.IsTensorArray(), "op 'read_from_array': variable '", arr_name,
             "' does not hold a tensor array");
  const int64_t i = ReadIndex(ctx);
  tide::Tensor out = Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor();
  ArrayView* view = FindView(av);
  const size_t size = view ? view->size() : av.GetTensorArray().size();
  tide::Tensor elem;
  if (view)
    elem = view->Get(static_cast<size_t>(i));
  else if (static_cast<size_t>(i) < size)
    elem = av.GetTensorArray().at(i);
  const bool held = elem && elem.initialized();
  const auto written = ctx.Inputs("X_W");
  if (!held && !written.empty()) {  // write_to_array's gradient: an element nothing read is 0
    ZerosLike(ctx, InputTensor(ctx, written[0]), out);
    return;
  }
  TIDE_CHECK(static_cast<size_t>(i) < size, "op 'read_from_array': index ", i,
             " is past the end of array '", arr_name, "' (", size, " element(s))");
  TIDE_CHECK(held, "op 'read_from_array': element ", i, " of array '", arr_name,
             "' was never written");
  out.CopyFrom(elem, ctx.place(), ctx.device_context());
}

// Out = X without element I's data (the element is kept, holding nothing: a zero gradient to
// what reads it). The gradient of the array's value before write_to_array replaced element I.
void ClearArrayElementRun(tide::OpRunContext& ctx) {
  const std::string in_name = OnlyInput(ctx, "X"), out_name = OnlyOutput(ctx, "Out");
  tide::Variable in = Lookup(ctx, in_name);
  TIDE_CHECK(in.IsTensorArray(), "op 'clear_array_element': variable '", in_name,
             "' does not hold a tensor array");
  const size_t i = static_cast<size_t>(ReadIndex(ctx));
  tide::Variable outv = Lookup(ctx, out_name);
  if (out_name == in_name) {
    if (ArrayView* view = FindView(in)) return view->Clear(i);
  } else {
    MaterializeView(in);
    MaterializeView(outv);
  }
  tide::TensorArray x = in.GetTensorArray(), out = outv.GetTensorArray();
  if (out_name != in_name) {
    out.resize(0);
    out.resize(x.size());
    for (size_t k = 0; k < x.size(); ++k)
      if (k != i && x.at(k).initialized())
        out.at(k).CopyFrom(x.at(k), ctx.place(), ctx.device_context());
  }
  if (i < out.size()) out.at(i).ShareDataWith(tide::OwnedTensor());  // no holder: no data
}

void ArrayLengthRun(tide::OpRunContext& ctx) {
  const std::string arr_name = OnlyInput(ctx, "X");
  tide::Variable av = Lookup(ctx, arr_name);
  TIDE_CHECK(av.IsTensorArray(), "op '", ctx.op_type(), "': variable '", arr_name,
             "' does not hold a tensor array");
  const ArrayView* view = FindView(av);
  tide::OwnedTensor n;
  *n.mutable_data<int64_t>({1}, tide::Place("cpu", 0)) =
      static_cast<int64_t>(view ? view->size() : av.GetTensorArray().size());
  Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor().CopyFrom(n, ctx.place(), ctx.device_context());
}

// Out[i] = the sum of X_k[i] over the inputs that hold element i: the gradient of an array
// read more than once (append_backward sums its parts with it).
void TensorArraySumRun(tide::OpRunContext& ctx) {
  std::vector<tide::OwnedTensor> sums;
  for (const auto& name : ctx.Inputs("X")) {
    tide::Variable v = Lookup(ctx, name);
    TIDE_CHECK(v.IsTensorArray(), "op 'tensor_array_sum': variable '", name,
               "' does not hold a tensor array");
    MaterializeView(v);
    tide::TensorArray arr = v.GetTensorArray();
    if (sums.size() < arr.size()) sums.resize(arr.size());
    for (size_t i = 0; i < arr.size(); ++i)
      if (arr.at(i).initialized()) Accumulate(ctx, sums[i], arr.at(i), name);
  }
  tide::Variable outv = Lookup(ctx, OnlyOutput(ctx, "Out"));
  MaterializeView(outv);
  tide::TensorArray out = outv.GetTensorArray();
  out.resize(sums.size());
  for (size_t i = 0; i < sums.size(); ++i)
    if (sums[i].initialized()) out.at(i).CopyFrom(sums[i], ctx.place(), ctx.device_context());
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("write_to_array")
                     .Comment("Out[I] = a copy of X; the array grows to hold index I.")
                     .Input("X", "the tensor to write")
                     .Input("I", "a one-element int64 index (>= 0)")
                     .Output("Out", "the tensor array")
                     .InferShape(ops_control::ArrayOfXShape)
                     // X's gradient is element I of the array's (zeros when nothing read it, as
                     // Fluid's X_W); the array before the write gets the rest, element I cleared.
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("read_from_array")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("I", g.Input("I"))
                           .Input("X_W", g.Input("X"))
                           .Output("Out", g.InputGrad("X"));
                       g.NewOp("clear_array_element")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("I", g.Input("I"))
                           .Output("Out", g.OutputGrad("Out"));
                     })
                     .Run(ops_control::WriteToArrayRun));

TIDE_REGISTER_OP(tide::OpSchema("read_from_array")
                     .Comment("Out = a copy of X[I].")
                     .Input("X", "the tensor array")
                     .Input("I", "a one-element int64 index (>= 0)")
                     .Input("X_W",
                            "as write_to_array's gradient: the tensor it wrote; Out is "
                            "zeros of its dims where X[I] is past the end or holds nothing")
                     .AsDispensable()
                     .Output("Out", "the element")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       ctx.SetOutputDims("Out", ctx.InputDims("X"));
                       ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("write_to_array")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("I", g.Input("I"))
                           .Output("Out", g.InputGrad("X"));
                     })
                     .Run(ops_control::ReadFromArrayRun));

TIDE_REGISTER_OP(tide::OpSchema("clear_array_element")
                     .NoGradient()
                     .Comment("Out = X with element I holding nothing (write_to_array's gradient "
                              "of the array before the write); Out may be X.")
                     .Input("X", "the tensor array")
                     .Input("I", "a one-element int64 index (>= 0)")
                     .Output("Out", "the tensor array")
                     .InferShape(ops_control::ArrayOfXShape)
                     .Run(ops_control::ClearArrayElementRun));

namespace ops_control {
namespace {
tide::OpSchema ArrayLengthSchema(const char* type, const char* comment) {
  return tide::OpSchema(type)
      .NoGradient()
      .Comment(comment)
      .Input("X", "the tensor array")
      .Output("Out", "int64 [1]")
      .InferShape([](tide::InferShapeContext& ctx) {
        if (ctx.IsRuntime()) return;
        ctx.SetOutputDims("Out", {1});
        ctx.SetOutputDataType("Out", TIDE_INT64);
      })
      .Run(ArrayLengthRun);
}
}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(ops_control::ArrayLengthSchema(
    "array_length", "Out = the number of elements of the tensor array X (int64 [1])."));
// Fluid's and Paddle 2.x's name of the op (paddle.tensor.array_length, len() of a list in a
// dynamic-to-static loop); Paddle 3.x's PIR programs write array_length.
TIDE_REGISTER_OP(ops_control::ArrayLengthSchema(
    "lod_array_length", "array_length under Fluid's name: the number of elements of X."));

TIDE_REGISTER_OP(tide::OpSchema("tensor_array_sum")
                     .Comment("Out[i] = the sum of X_k[i] over the arrays holding element i.")
                     .Input("X", "tensor arrays")
                     .AsDuplicable()
                     .Output("Out", "their element-wise sum")
                     .InferShape(ops_control::ArrayOfXShape)
                     .Run(ops_control::TensorArraySumRun));
