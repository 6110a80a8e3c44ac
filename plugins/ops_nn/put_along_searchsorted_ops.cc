// put_along_searchsorted_ops.cc: Paddle's put_along_axis (paddle.put_along_axis: Result = Input
// with Value scattered at Index along Axis; Reduce assign / add / mul / mean / amin / amax,
// include_self whether Input's element takes part) and its grad (assign and add, as Paddle's), and
// searchsorted (paddle.searchsorted: per value its insertion index in the sorted last dim).
#include <algorithm>
#include <string>
#include <type_traits>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// ---------------------------------------------------------------------------------------------
// put_along_axis
std::string PutReduce(const char* op, std::string r) {
  if (r == "multiply") r = "mul";
  TIDE_CHECK(r == "assign" || r == "add" || r == "mul" || r == "mean" || r == "amin" || r == "amax",
             "op '", op, "': Reduce must be assign, add, mul (multiply), mean, amin or amax, got '",
             r, "'");
  return r;
}

// Index: Input's rank, each dim but Axis at most Input's; Value: one element, or Index's rank
// with each dim at least Index's (read at the same position, as Paddle's kernel).
int PutAlongAxis(const char* op, const Dims& input, const Dims& index, const Dims& value,
                 int axis) {
  TIDE_CHECK(input.size() == index.size(), "op '", op, "': Index ", tide::ToString(index),
             " must have Input's rank (", tide::ToString(input), ")");
  const int a = NormAxis(op, axis, input.size());
  for (size_t i = 0; i < input.size(); ++i)
    TIDE_CHECK(static_cast<int>(i) == a || input[i] < 0 || index[i] <= input[i], "op '", op,
               "': Index ", tide::ToString(index), " is larger than Input ", tide::ToString(input),
               " at dim ", i);
  if (DimsProductOrUnknown(value) == 1) return a;
  TIDE_CHECK(value.size() == index.size(), "op '", op, "': Value ", tide::ToString(value),
             " must have one element or Index's rank (Index ", tide::ToString(index), ")");
  for (size_t i = 0; i < value.size(); ++i)
    TIDE_CHECK(value[i] < 0 || index[i] < 0 || value[i] >= index[i], "op '", op, "': Value ",
               tide::ToString(value), " is smaller than Index ", tide::ToString(index), " at dim ",
               i);
  return a;
}

void PutAlongAxisInferShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("Index");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': Index ('", ctx.InputName("Index"), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
  PutAlongAxis(ctx.op_type(), ctx.InputDims("Input"), ctx.InputDims("Index"),
               ctx.InputDims("Value"), ctx.Attr<int32_t>("Axis"));
  PutReduce(ctx.op_type(), ctx.Attr<std::string>("Reduce"));
  ctx.SetOutputDims("Result", ctx.InputDims("Input"));
  ctx.SetOutputDataType("Result", ctx.InputDataType("Input"));
}

// fn(i, v, off): Index element i (Value element v) scatters to Input element off.
template <typename F>
void ForEachPut(const KernelContext& ctx, const Dims& in, const Dims& id, const Dims& val, int a,
                F&& fn) {
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  const std::vector<int64_t> st = Strides(in), vst = Strides(val);
  const bool one = DimsProduct(val) == 1;
  ForEachIndex(id, [&](const std::vector<int64_t>& p, int64_t i) {
    int64_t off = 0, v = 0;
    for (size_t k = 0; k < p.size(); ++k) {
      int64_t at = p[k];
      if (static_cast<int>(k) == a) {
        at = idx[i];
        TIDE_CHECK(at >= -in[a] && at < in[a], "op '", ctx.op_type(), "': Index ('",
                   ctx.InputName("Index"), "')[", i, "] = ", at, " is out of range [", -in[a], ", ",
                   in[a], ")");
        if (at < 0) at += in[a];
      }
      off += at * st[k];
      if (!one) v += p[k] * vst[k];
    }
    fn(i, v, off);
  });
}

template <typename T>
void PutAlongAxisKernel(KernelContext& ctx) {
  Tensor input = ctx.Input("Input"), index = ctx.Input("Index"), value = ctx.Input("Value");
  const Dims in = input.dims(), id = index.dims(), val = value.dims();
  const int a = PutAlongAxis(ctx.op_type(), in, id, val, ctx.Attr<int32_t>("Axis"));
  const std::string reduce = PutReduce(ctx.op_type(), ctx.Attr<std::string>("Reduce"));
  const bool self = ctx.Attr<bool>("Include_self");
  const T* x = input.data<T>();
  const T* v = value.data<T>();
  T* o = ctx.Output("Result").mutable_data<T>(in, ctx.place());
  std::copy(x, x + input.numel(), o);
  if (reduce == "assign") {
    ForEachPut(ctx, in, id, val, a, [&](int64_t, int64_t vi, int64_t off) { o[off] = v[vi]; });
    return;
  }
  // Without include_self a touched element starts from its first value; count for mean.
  std::vector<int64_t> count(input.numel(), 0);
  ForEachPut(ctx, in, id, val, a, [&](int64_t, int64_t vi, int64_t off) {
    const T y = v[vi];
    if (count[off]++ == 0 && !self) {
      o[off] = y;
      return;
    }
    if (reduce == "add" || reduce == "mean")
      o[off] += y;
    else if (reduce == "mul")
      o[off] *= y;
    else if (reduce == "amin")
      o[off] = std::min(o[off], y);
    else
      o[off] = std::max(o[off], y);
  });
  if (reduce != "mean") return;
  for (int64_t i = 0; i < input.numel(); ++i) {
    if (count[i] == 0) continue;
    const T n = static_cast<T>(count[i] + (self ? 1 : 0));
    T q = o[i] / n;
    if constexpr (std::is_integral_v<T>)
      if (q * n != o[i] && (o[i] < 0) != (n < 0)) --q;  // Paddle's integer mean floors
    o[i] = q;
  }
}

// Paddle's grads for assign and add: Input@GRAD is Result@GRAD, zero where an element was
// replaced (assign, or add without include_self); Value@GRAD reads Result@GRAD at its index (for
// assign only the last write of an element, which is the one that shows).
template <typename T>
void PutAlongAxisGradKernel(KernelContext& ctx) {
  Tensor input = ctx.Input("Input"), index = ctx.Input("Index"), value = ctx.Input("Value");
  const Dims in = input.dims(), id = index.dims(), val = value.dims();
  const int a = PutAlongAxis(ctx.op_type(), in, id, val, ctx.Attr<int32_t>("Axis"));
  const std::string reduce = PutReduce(ctx.op_type(), ctx.Attr<std::string>("Reduce"));
  TIDE_CHECK(reduce == "assign" || reduce == "add", "op '", ctx.op_type(),
             "': the gradient of Reduce '", reduce, "' is not implemented (assign and add are)");
  const bool self = ctx.Attr<bool>("Include_self");
  Tensor dout = ctx.Input(GradVarName("Result").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Result@GRAD", dout.dims(), in);
  const T* g = dout.data<T>();
  const std::string gi = GradVarName("Input"), gv = GradVarName("Value");
  if (ctx.HasOutput(gi.c_str())) {
    T* dx = ctx.Output(gi.c_str()).mutable_data<T>(in, ctx.place());
    std::copy(g, g + input.numel(), dx);
    if (reduce == "assign" || !self)
      ForEachPut(ctx, in, id, val, a, [&](int64_t, int64_t, int64_t off) { dx[off] = T(0); });
  }
  if (ctx.HasOutput(gv.c_str())) {
    T* dv = ctx.Output(gv.c_str()).mutable_data<T>(val, ctx.place());
    std::fill(dv, dv + value.numel(), T(0));
    std::vector<int64_t> last(input.numel(), -1);  // assign: the element's last writer
    if (reduce == "assign")
      ForEachPut(ctx, in, id, val, a, [&](int64_t i, int64_t, int64_t off) { last[off] = i; });
    ForEachPut(ctx, in, id, val, a, [&](int64_t i, int64_t vi, int64_t off) {
      if (reduce == "add" || last[off] == i) dv[vi] += g[off];
    });
  }
}

// ---------------------------------------------------------------------------------------------
// searchsorted: SortedSequence [..., M] (1-D, or Values' leading dims), Values [..., K] -> Out
// of Values' dims: the first index whose element is >= the value (> with right).
void SearchsortedDims(const char* op, const Dims& seq, const Dims& values) {
  TIDE_CHECK(!seq.empty(), "op '", op, "': SortedSequence must have at least 1 dim, got ",
             tide::ToString(seq));
  if (seq.size() == 1) return;
  bool same = seq.size() == values.size();
  for (size_t i = 0; same && i + 1 < seq.size(); ++i) same = DimsCompatible(seq[i], values[i]);
  TIDE_CHECK(same, "op '", op, "': SortedSequence ", tide::ToString(seq),
             " must be 1-D or have Values' leading dims (Values ", tide::ToString(values), ")");
}

template <typename T>
void SearchsortedKernel(KernelContext& ctx) {
  Tensor seq = ctx.Input("SortedSequence"), values = ctx.Input("Values");
  SearchsortedDims(ctx.op_type(), seq.dims(), values.dims());
  TIDE_CHECK(values.dtype() == seq.dtype(), "op '", ctx.op_type(), "': Values ('",
             ctx.InputName("Values"), "') must have SortedSequence's dtype ",
             tide::DataTypeName(seq.dtype()), ", got ", tide::DataTypeName(values.dtype()));
  const bool right = ctx.Attr<bool>("right");
  const bool i32 = ctx.Attr<bool>("out_int32");
  const int64_t m = seq.dims().back();
  const int64_t k = values.dims().empty() ? 1 : values.dims().back();
  const T* s = seq.data<T>();
  const T* v = values.data<T>();
  Tensor out = ctx.Output("Out");
  int32_t* o32 = i32 ? out.mutable_data<int32_t>(values.dims(), ctx.place()) : nullptr;
  int64_t* o64 = i32 ? nullptr : out.mutable_data<int64_t>(values.dims(), ctx.place());
  const bool shared = seq.dims().size() == 1;
  for (int64_t i = 0; i < values.numel(); ++i) {
    const T* row = s + (shared || k == 0 ? 0 : (i / k) * m);
    const T* at =
        right ? std::upper_bound(row, row + m, v[i]) : std::lower_bound(row, row + m, v[i]);
    const int64_t r = at - row;
    if (i32)
      o32[i] = static_cast<int32_t>(r);
    else
      o64[i] = r;
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("put_along_axis")
                     .Comment("Result = Input with Value put at Index along Axis "
                              "(paddle.put_along_axis): Reduce assign, add, mul, mean, amin or "
                              "amax; Include_self: Input's element takes part.")
                     .Input("Input", "the input")
                     .Input("Index", "int32/int64, Input's rank, each other dim at most Input's")
                     .Input("Value", "one element, or Index's rank with dims at least Index's")
                     .Output("Result", "Input's dims")
                     .Attr("Axis", int32_t(0), "the axis put along (negative: from the end)")
                     .Attr("Reduce", std::string("assign"),
                           "assign, add, mul (multiply), mean, amin or amax")
                     .Attr("Include_self", true, "Input's element takes part in the reduction")
                     .KernelDataTypeFrom("Input")
                     .InferShape(PutAlongAxisInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("put_along_axis_grad")
                           .Input("Input", g.Input("Input"))
                           .Input("Index", g.Input("Index"))
                           .Input("Value", g.Input("Value"))
                           .Input(GradVarName("Result"), g.OutputGrad("Result"))
                           .Output(GradVarName("Input"), g.InputGrad("Input"))
                           .Output(GradVarName("Value"), g.InputGrad("Value"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("put_along_axis_grad")
                     .Input("Input")
                     .Input("Index")
                     .Input("Value")
                     .Input(GradVarName("Result"))
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("Value"))
                     .AsDispensable()
                     .Attr("Axis", int32_t(0))
                     .Attr("Reduce", std::string("assign"))
                     .Attr("Include_self", true)
                     .KernelDataTypeFrom("Input")
                     .InferShape(GradLike({"Input", "Value"})));
TIDE_REGISTER_KERNEL("put_along_axis", "cpu", PutAlongAxisKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("put_along_axis_grad", "cpu", PutAlongAxisGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("searchsorted")
                     .Comment("Out = per value of Values its insertion index in SortedSequence's "
                              "last dim (paddle.searchsorted): the first element >= it, or > it "
                              "with right.")
                     .Input("SortedSequence", "[..., M], sorted ascending along the last dim")
                     .Input("Values", "[..., K] (SortedSequence 1-D, or its leading dims)")
                     .Output("Out", "int64 (int32 with out_int32), Values' dims")
                     .Attr("out_int32", false, "Out is int32")
                     .Attr("right", false, "the last matching position (upper bound)")
                     .KernelDataTypeFrom("SortedSequence")
                     .InferShape([](tide::InferShapeContext& c) {
                       SearchsortedDims(c.op_type(), c.InputDims("SortedSequence"),
                                        c.InputDims("Values"));
                       c.SetOutputDims("Out", c.InputDims("Values"));
                       c.SetOutputDataType("Out",
                                           c.Attr<bool>("out_int32") ? TIDE_INT32 : TIDE_INT64);
                     }));
TIDE_REGISTER_KERNEL("searchsorted", "cpu", SearchsortedKernel, OPS_NN_MOVE_TYPES);
