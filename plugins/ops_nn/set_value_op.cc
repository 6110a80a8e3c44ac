// set_value_op.cc: Paddle's set_value, the op a slice assignment (`x[:, 0] = v`, `x[1:3, ::2] =
// 0.5`) becomes in a static program: Out = Input with the box Input[starts:ends:steps] on `axes`
// (Python's slice rules) set to a value broadcast to the box. The value is ValueTensor, else the
// constants of the attributes (Paddle 2.6+ writes `values`, older releases one typed list).
// decrease_axes / none_axes only reshape the box the value broadcasts to (x[0] = v drops axis
// 0, x[None, 0] adds a 1). A complex constant (x[0] = 1 + 2j on a complex x) has its imaginary
// parts in `values_imag` (the PIR reader splits Paddle's complex Scalars so). set_value_grad:
// Input@GRAD is Out@GRAD with the box zeroed, ValueTensor@GRAD the box of Out@GRAD summed to the
// value's dims.
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/complex.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <type_traits>
#include <vector>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

using tide::ToString;
using tide::ops::SliceGeom;

const char* const kBoundLists[] = {"StartsTensorList", "EndsTensorList", "StepsTensorList"};
// The typed value lists of Paddle 2.0-2.5, in the order Paddle's kernel signature reads them.
const char* const kTypedValues[] = {"fp32_values",  "fp64_values", "int32_values",
                                    "int64_values", "fp16_values", "bool_values"};

std::vector<int32_t> ToInt32(const std::vector<int64_t>& v) {
  // Beyond int32 a start or end means "from the start" / "to the end" (Paddle writes INT64_MAX
  // for an open end); no dim here is that large.
  std::vector<int32_t> out;
  for (int64_t x : v)
    out.push_back(static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX)));
  return out;
}

// One bound kind: its tensor list (one one-element int tensor per axis) over its attribute.
std::vector<int64_t> Bound(const KernelContext& ctx, const char* list, const char* attr) {
  if (ctx.HasInput(list)) return IntScalars(ctx, list);
  return ctx.Attr<std::vector<int64_t>>(attr);
}

// The assigned box of Input (per dim of Input: first index, step, count) and the dims the value
// broadcasts to, as Paddle's SetValueImpl makes them: the box's dims without decrease_axes, a 1
// before the dim at each position of none_axes. `src[p]`: the Input dim of assign position p
// (-1 for a none axis).
struct Box {
  SliceGeom g;
  Dims assign;
  std::vector<int> src;
  bool empty = false;
};

Box BoxOf(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const std::vector<int64_t> axes = ctx.Attr<std::vector<int64_t>>("axes");
  const std::vector<int64_t> starts = Bound(ctx, "StartsTensorList", "starts");
  const std::vector<int64_t> ends = Bound(ctx, "EndsTensorList", "ends");
  std::vector<int64_t> steps = Bound(ctx, "StepsTensorList", "steps");
  if (steps.empty()) steps.assign(axes.size(), 1);  // Paddle 2.0's programs have no steps
  TIDE_CHECK(
      starts.size() == axes.size() && ends.size() == axes.size() && steps.size() == axes.size(),
      "op '", op, "': axes, starts, ends and steps must have one value per axis (", axes.size(),
      " axes, ", starts.size(), " starts, ", ends.size(), " ends, ", steps.size(), " steps)");
  const int64_t rank = static_cast<int64_t>(x.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    TIDE_CHECK(axes[i] >= -rank && axes[i] < rank, "op '", op, "': axes[", i, "] = ", axes[i],
               " is out of range for Input '", ctx.InputName("Input"), "' of dims ", ToString(x));
    TIDE_CHECK(steps[i] != 0, "op '", op, "': steps[", i, "] (axis ", axes[i], ") is 0");
  }
  Box b;
  b.g = tide::ops::GetSliceGeom(op, x, ToInt32(axes), ToInt32(starts), ToInt32(ends),
                                ToInt32(steps), {});
  for (int64_t c : b.g.count) b.empty = b.empty || c == 0;

  std::vector<bool> dropped(x.size(), false);
  for (int64_t d : ctx.Attr<std::vector<int64_t>>("decrease_axes")) {
    TIDE_CHECK(d >= 0 && d < rank, "op '", op, "': decrease_axes holds ", d,
               ", out of range for Input '", ctx.InputName("Input"), "' of dims ", ToString(x));
    TIDE_CHECK(b.g.count[d] == 1 || b.empty, "op '", op, "': decrease_axes holds ", d,
               ", whose slice takes ", b.g.count[d], " elements; a dropped axis takes exactly 1");
    dropped[d] = true;
  }
  std::vector<int64_t> ones = ctx.Attr<std::vector<int64_t>>("none_axes");
  for (int64_t n : ones) TIDE_CHECK(n >= 0, "op '", op, "': none_axes holds ", n, " (< 0)");
  std::sort(ones.begin(), ones.end());
  size_t next = 0;
  auto add = [&b](int64_t dim, int src) {
    b.assign.push_back(dim);
    b.src.push_back(src);
  };
  for (int64_t i = 0; i < rank; ++i) {
    for (; next < ones.size() && ones[next] <= i; ++next) add(1, -1);
    if (!dropped[i]) add(b.g.count[i], static_cast<int>(i));
  }
  for (; next < ones.size(); ++next) add(1, -1);
  return b;
}

// Per dim of Input, the stride in the value of the box's index along it (0 where the value
// repeats). Paddle's rule (CheckIsDimsMatch): the value's dims, leading 1s aside, align with the
// end of the assign dims, each equal to it or 1.
std::vector<int64_t> ValueStrides(const char* op, const Box& b, const Dims& x, const Dims& v,
                                  const std::string& value_name) {
  size_t lead = 0;
  while (lead < v.size() && v[lead] == 1) ++lead;
  const Dims vt(v.begin() + lead, v.end());
  const Dims& a = b.assign;
  bool ok = vt.size() <= a.size();
  for (size_t j = 0; ok && j < vt.size(); ++j) {
    const int64_t have = vt[vt.size() - 1 - j], want = a[a.size() - 1 - j];
    ok = have == want || have == 1;
  }
  TIDE_CHECK(ok, "op '", op, "': the value ", value_name, " of dims ", ToString(v),
             " cannot be broadcast to the assigned slice of dims ", ToString(a), " (Input ",
             ToString(x), ")");
  std::vector<int64_t> out(x.size(), 0);
  const std::vector<int64_t> vs = Strides(vt);
  const size_t shift = a.size() - vt.size();
  for (size_t j = 0; j < vt.size(); ++j) {
    const int src = b.src[shift + j];
    if (src >= 0 && vt[j] != 1) out[src] = vs[j];
  }
  return out;
}

// fn(offset in Input, offset in the value) for every element of the box.
template <typename F>
void ForEachBoxElement(const Box& b, const Dims& x, const std::vector<int64_t>& vstride, F&& fn) {
  const std::vector<int64_t> xs = Strides(x);
  ForEachIndex(b.g.count, [&](const std::vector<int64_t>& idx, int64_t) {
    int64_t off = 0, voff = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      off += (b.g.start[d] + idx[d] * b.g.step[d]) * xs[d];
      voff += idx[d] * vstride[d];
    }
    fn(off, voff);
  });
}

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<T, tide::float16> || std::is_same_v<T, tide::bfloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T, typename S>
std::vector<T> CastAll(const std::vector<S>& v) {
  std::vector<T> out;
  for (const S& x : v) out.push_back(FromDouble<T>(static_cast<double>(x)));
  return out;
}

// The constant value (no ValueTensor): `values` (Paddle 2.6+, and PIR's), else the first typed
// list that is set (`from` names it); its dims are `shape`.
template <typename T>
std::vector<T> ConstantValues(const KernelContext& ctx, Dims* dims, std::string* from) {
  const char* op = ctx.op_type();
  std::vector<T> v;
  *from = "values";
  const auto values = ctx.Attr<std::vector<double>>("values");
  const auto imag = ctx.Attr<std::vector<double>>("values_imag");
  if (!values.empty()) {
    v = CastAll<T>(values);
    TIDE_CHECK(imag.empty() || imag.size() == values.size(), "op '", op, "': values_imag has ",
               imag.size(), " elements, values ", values.size());
    if constexpr (tide::ops::kIsComplex<T>) {
      using R = tide::ops::RealType<T>;
      for (size_t i = 0; i < imag.size(); ++i) v[i] = T(R(values[i]), R(imag[i]));
    } else {
      TIDE_CHECK(std::all_of(imag.begin(), imag.end(), [](double x) { return x == 0; }), "op '", op,
                 "': a complex value (values_imag) for Input '", ctx.InputName("Input"), "' of ",
                 tide::DataTypeName(tide::DataTypeOf<T>()), "; cast Input to complex");
    }
  } else {
    for (const char* name : kTypedValues) {
      const std::string n = name;
      if (n == "fp64_values") {
        v = CastAll<T>(ctx.Attr<std::vector<double>>(name));
      } else if (n == "int64_values") {
        const auto l = ctx.Attr<std::vector<int64_t>>(name);
        if constexpr (std::is_same_v<T, int64_t>)
          v = l;  // exact beyond 2^53
        else
          v = CastAll<T>(l);
      } else if (n == "int32_values" || n == "bool_values") {
        v = CastAll<T>(ctx.Attr<std::vector<int32_t>>(name));
      } else {
        v = CastAll<T>(ctx.Attr<std::vector<float>>(name));
      }
      *from = n;
      if (!v.empty()) break;
    }
  }
  TIDE_CHECK(!v.empty(), "op '", op,
             "': no value to assign: neither ValueTensor nor any of the "
             "attributes values, fp32_values, fp64_values, int32_values, int64_values, "
             "fp16_values, bool_values is set");
  *dims = ctx.Attr<std::vector<int64_t>>("shape");
  TIDE_CHECK(DimsProduct(*dims) == static_cast<int64_t>(v.size()), "op '", op,
             "': attribute shape ", ToString(*dims), " holds ", DimsProduct(*dims),
             " elements, but ", *from, " has ", v.size());
  return v;
}

template <typename T>
void SetValueKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor in = ctx.Input("Input");
  const Dims x = in.dims();
  const Box b = BoxOf(ctx, x);
  // The value first: Out may be Input's own variable (Paddle before 2.5 wrote set_value in place).
  std::vector<T> value;
  Dims vdims;
  std::string vname;
  if (ctx.HasInput("ValueTensor")) {
    Tensor vt = ctx.Input("ValueTensor");
    TIDE_CHECK(vt.dtype() == in.dtype(), "op '", op, "': ValueTensor '",
               ctx.InputName("ValueTensor"), "' is ", tide::DataTypeName(vt.dtype()), ", Input '",
               ctx.InputName("Input"), "' ", tide::DataTypeName(in.dtype()),
               "; they must be the same type");
    vdims = vt.dims();
    value.assign(vt.data<T>(), vt.data<T>() + vt.numel());
    vname = "ValueTensor '" + ctx.InputName("ValueTensor") + "'";
  } else {
    value = ConstantValues<T>(ctx, &vdims, &vname);
    vname = "of attribute " + vname;
  }
  const T* src = in.data<T>();
  Tensor out = ctx.Output("Out");
  T* o = out.mutable_data<T>(x, ctx.place());
  if (o != src) std::memcpy(o, src, sizeof(T) * static_cast<size_t>(DimsProduct(x)));
  if (b.empty) return;  // nothing is assigned (and, as in Paddle, the value is not checked)
  const std::vector<int64_t> vstride = ValueStrides(op, b, x, vdims, vname);
  ForEachBoxElement(b, x, vstride, [&](int64_t off, int64_t voff) { o[off] = value[voff]; });
}

template <typename T>
void SetValueGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Dims x = dout.dims();
  const Box b = BoxOf(ctx, x);
  const T* g = dout.data<T>();
  const std::string dx_name = GradVarName("Input"), dv_name = GradVarName("ValueTensor");
  if (ctx.HasOutput(dx_name.c_str())) {
    T* dx = ctx.Output(dx_name.c_str()).mutable_data<T>(x, ctx.place());
    std::memcpy(dx, g, sizeof(T) * static_cast<size_t>(DimsProduct(x)));
    if (!b.empty)
      ForEachBoxElement(b, x, std::vector<int64_t>(x.size(), 0),
                        [&](int64_t off, int64_t) { dx[off] = T(0); });
  }
  if (ctx.HasOutput(dv_name.c_str())) {
    const Dims vdims = ctx.Input("ValueTensor").dims();
    T* dv = ctx.Output(dv_name.c_str()).mutable_data<T>(vdims, ctx.place());
    std::fill(dv, dv + DimsProduct(vdims), T(0));
    if (b.empty) return;
    const std::vector<int64_t> vstride =
        ValueStrides(op, b, x, vdims, "ValueTensor '" + ctx.InputName("ValueTensor") + "'");
    ForEachBoxElement(b, x, vstride, [&](int64_t off, int64_t voff) { dv[voff] += g[off]; });
  }
}

void SetValueInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", ctx.InputDims("Input"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

void SetValueGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("Input"), dv = GradVarName("ValueTensor");
  const std::string dout = GradVarName("Out");
  if (ctx.HasOutput(dx.c_str())) {
    ctx.SetOutputDims(dx.c_str(), ctx.InputDims(dout.c_str()));
    ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
  }
  if (ctx.HasOutput(dv.c_str())) {
    ctx.SetOutputDims(dv.c_str(), ctx.InputDims("ValueTensor"));
    ctx.SetOutputDataType(dv.c_str(), ctx.InputDataType("ValueTensor"));
  }
}

// The attributes of set_value and set_value_grad (Paddle's SetValueMaker, with 2.6's `values`).
tide::OpSchema& SetValueAttrs(tide::OpSchema& s) {
  return s
      .Attr("dtype", int32_t{5},
            "the value's data type as Paddle's VarType (5: float32); the kernel follows Input's")
      .RequiredAttr("axes", TIDE_ATTR_LONGS, "the sliced axes")
      .Attr("starts", std::vector<int64_t>{}, "first index per axis (negative: from the end)")
      .Attr("ends", std::vector<int64_t>{}, "end (exclusive) per axis (negative: from the end)")
      .Attr("steps", std::vector<int64_t>{}, "step per axis (negative: backwards; none: 1)")
      .Attr("decrease_axes", std::vector<int64_t>{},
            "axes indexed by a single integer: dropped from the dims the value broadcasts to")
      .Attr("none_axes", std::vector<int64_t>{},
            "positions of None in the index: a 1 in the dims the value broadcasts to")
      .Attr("values", std::vector<double>{}, "the value's elements (Paddle 2.6+; Scalars)")
      .Attr("values_imag", std::vector<double>{},
            "the imaginary parts of a complex constant's elements (PIR's complex Scalars; Tide's)")
      .Attr("bool_values", std::vector<int32_t>{}, "the value's elements (Paddle < 2.6, bool)")
      .Attr("fp32_values", std::vector<float>{}, "the value's elements (Paddle < 2.6, float32)")
      .Attr("int32_values", std::vector<int32_t>{}, "the value's elements (Paddle < 2.6, int32)")
      .Attr("int64_values", std::vector<int64_t>{}, "the value's elements (Paddle < 2.6, int64)")
      .Attr("fp64_values", std::vector<double>{}, "the value's elements (Paddle < 2.6, float64)")
      .Attr("fp16_values", std::vector<float>{}, "the value's elements (Paddle < 2.6, float16)")
      .Attr("shape", std::vector<int64_t>{}, "the dims of the constant value");
}

tide::OpSchema& BoundListInputs(tide::OpSchema& s, bool described) {
  for (const char* in : kBoundLists) {
    if (described)
      s.Input(in,
              "the bounds as one-element int tensors, one per axis (optional; over the "
              "attribute)");
    else
      s.Input(in);
    s.AsDuplicable().AsDispensable();
  }
  return s;
}

tide::OpSchema SetValueSchema() {
  auto s = tide::OpSchema("set_value")
               .Comment(
                   "Out = Input with Input[starts:ends:steps] on `axes` (Python's slice "
                   "rules) set to ValueTensor, else to the constant of the attributes, "
                   "broadcast to the slice (Paddle's x[...] = v).")
               .Input("Input", "the tensor assigned into")
               .Input("ValueTensor", "the value (optional; else the attributes' constant)")
               .AsDispensable();
  BoundListInputs(s, true)
      .Output("Out", "Input with the slice assigned")
      .KernelDataTypeFrom("Input")
      .InferShape(SetValueInferShape)
      .Grad([](tide::GradMaker& g) {
        // Unlike Paddle's legacy grad maker, which passes Out@GRAD whole to Input@GRAD when
        // the value is a constant, Input@GRAD always has the assigned slice zeroed.
        auto op = g.NewOp("set_value_grad");
        op.Input(GradVarName("Out"), g.OutputGrad("Out"));
        if (!g.Input("ValueTensor").empty()) {
          op.Input("ValueTensor", g.Input("ValueTensor"))
              .Output(GradVarName("ValueTensor"), g.InputGrad("ValueTensor"));
        }
        for (const char* in : kBoundLists)
          if (!g.Input(in).empty()) op.Input(in, g.Input(in));
        op.Output(GradVarName("Input"), g.InputGrad("Input")).CopyAttrs();
      });
  return SetValueAttrs(s);
}

tide::OpSchema SetValueGradSchema() {
  auto s = tide::OpSchema("set_value_grad")
               .Input(GradVarName("Out"))
               .Input("ValueTensor")
               .AsDispensable();
  BoundListInputs(s, false)
      .Output(GradVarName("Input"))
      .AsDispensable()
      .Output(GradVarName("ValueTensor"))
      .AsDispensable()
      .KernelDataTypeFrom(GradVarName("Out"))
      .InferShape(SetValueGradInferShape);
  return SetValueAttrs(s);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(SetValueSchema());
TIDE_REGISTER_OP(SetValueGradSchema());
// float16 / bfloat16 get kernels of their own: the op only moves values (as slice).
TIDE_REGISTER_KERNEL("set_value", "cpu", SetValueKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     bool, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("set_value_grad", "cpu", SetValueGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
