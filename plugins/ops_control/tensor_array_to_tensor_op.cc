// tensor_array_to_tensor_op.cc: Fluid's tensor_array_to_tensor (Paddle 3.x's PIR array_to_tensor,
// what paddle.stack / paddle.concat of a list built in a loop become): Out = the array's elements
// concatenated along `axis`, or stacked on a new dim `axis` (use_stack); OutIndex (int32, one per
// element) = each element's dim `axis`, as Fluid and Paddle give it. Its gradient splits Out@GRAD
// back into the elements. Kernel-less, as the other array ops: the elements are assembled on the
// host and Out copied to the op's place.
#include <cstring>
#include <string>
#include <vector>

#include "array_views.h"
#include "control_util.h"

namespace ops_control {
namespace {

// Every element as an [outer, mid, inner] block of Out [outer, sum of mids, inner]: element i's
// block starts at mid offset offset[i].
struct ArrayLayout {
  int axis = 0;  // normalised
  tide::Dims out;
  std::vector<tide::Dims> dims;  // each element's
  std::vector<int64_t> mid, offset;
  int64_t outer = 1, inner = 1, total_mid = 0;
  TideDataType dtype = TIDE_FP32;
};

int64_t Product(const tide::Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

// The layout of array `name`'s elements; errors name the op, the array and the element.
ArrayLayout GetArrayLayout(const char* op, const std::string& name, const tide::TensorArray& arr,
                           int axis, bool stack) {
  const size_t n = arr.size();
  TIDE_CHECK(n > 0, "op '", op, "': array '", name, "' is empty; there is nothing to ",
             stack ? "stack" : "concatenate");
  ArrayLayout l;
  for (size_t i = 0; i < n; ++i) {
    const tide::Tensor e = arr.at(i);
    TIDE_CHECK(e.initialized(), "op '", op, "': element ", i, " of array '", name,
               "' was never written");
    l.dims.push_back(e.dims());
  }
  const tide::Dims& d0 = l.dims[0];
  const int rank = static_cast<int>(d0.size());
  const int lo = stack ? -(rank + 1) : -rank, hi = stack ? rank : rank - 1;
  TIDE_CHECK(axis >= lo && axis <= hi, "op '", op, "': axis ", axis, " is outside [", lo, ", ", hi,
             "] for ", stack ? "stacking" : "concatenating", " elements of dims ",
             tide::ToString(d0), " (array '", name, "')");
  l.axis = axis < 0 ? axis + rank + (stack ? 1 : 0) : axis;
  l.dtype = arr.at(0).dtype();
  const size_t a = static_cast<size_t>(l.axis);
  for (size_t i = 0; i < n; ++i) {
    const tide::Dims& d = l.dims[i];
    bool fits = d.size() == d0.size() && arr.at(i).dtype() == l.dtype;
    for (size_t k = 0; fits && k < d.size(); ++k) fits = d[k] == d0[k] || (!stack && k == a);
    TIDE_CHECK(fits, "op '", op, "': element ", i, " of array '", name, "' is ",
               tide::DataTypeName(arr.at(i).dtype()), " ", tide::ToString(d), ", element 0 ",
               tide::DataTypeName(l.dtype), " ", tide::ToString(d0), "; ",
               stack ? "stacked elements have one dims"
                     : "concatenated elements differ in dim " + std::to_string(a) + " only");
    l.mid.push_back(stack ? 1 : d[a]);
    l.offset.push_back(l.total_mid);
    l.total_mid += l.mid.back();
  }
  l.outer = Product(d0, 0, a);
  l.inner = Product(d0, stack ? a : a + 1, d0.size());
  l.out = d0;
  if (stack)
    l.out.insert(l.out.begin() + l.axis, static_cast<int64_t>(n));
  else
    l.out[a] = l.total_mid;
  return l;
}

// Copies element i's block between its own buffer and Out's: into_out, from the element (src)
// into Out (dst); else from Out (src) into the element (dst).
void CopyBlock(const ArrayLayout& l, size_t i, const char* src, char* dst, bool into_out) {
  const size_t es = tide::DataTypeSize(l.dtype);
  const size_t bytes = static_cast<size_t>(l.mid[i] * l.inner) * es;
  if (bytes == 0) return;
  for (int64_t o = 0; o < l.outer; ++o) {
    const size_t at_out = static_cast<size_t>((o * l.total_mid + l.offset[i]) * l.inner) * es;
    const size_t at_elem = static_cast<size_t>(o) * bytes;
    if (into_out)
      std::memcpy(dst + at_out, src + at_elem, bytes);
    else
      std::memcpy(dst + at_elem, src + at_out, bytes);
  }
}

tide::TensorArray InputArray(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = Lookup(ctx, name);
  TIDE_CHECK(v.IsTensorArray(), "op '", ctx.op_type(), "': X ('", name,
             "') does not hold a tensor array");
  MaterializeView(v);  // a while_grad step's gradient array: read whole
  return v.GetTensorArray();
}

void TensorArrayToTensorRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const std::string x_name = OnlyInput(ctx, "X");
  const tide::TensorArray arr = InputArray(ctx, x_name);
  const bool stack = ctx.Attr<bool>("use_stack");
  const ArrayLayout l = GetArrayLayout(op, x_name, arr, ctx.Attr<int32_t>("axis"), stack);
  const tide::Place cpu("cpu", 0);
  tide::OwnedTensor out;
  out.Resize(l.out);
  char* dst = static_cast<char*>(out.mutable_data(l.dtype, cpu));
  tide::OwnedTensor index;
  int32_t* idx = index.mutable_data<int32_t>({static_cast<int64_t>(arr.size())}, cpu);
  for (size_t i = 0; i < arr.size(); ++i) {
    tide::OwnedTensor staged;
    const tide::Tensor e = OnHost(arr.at(i), staged);
    CopyBlock(l, i, static_cast<const char*>(e.raw_data()), dst, true);
    // The element's dim `axis`; past a stacked element's last dim Paddle reads 0.
    const tide::Dims& d = l.dims[i];
    idx[i] = static_cast<int32_t>(static_cast<size_t>(l.axis) < d.size() ? d[l.axis] : 0);
  }
  Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor().CopyFrom(out, ctx.place(), ctx.device_context());
  const auto index_out = ctx.Outputs("OutIndex");
  if (!index_out.empty())
    Lookup(ctx, index_out[0]).GetTensor().CopyFrom(index, ctx.place(), ctx.device_context());
}

// X@GRAD[i] = element i's part of Out@GRAD (its dims).
void TensorArrayToTensorGradRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const std::string x_name = OnlyInput(ctx, "X");
  const tide::TensorArray arr = InputArray(ctx, x_name);
  const ArrayLayout l =
      GetArrayLayout(op, x_name, arr, ctx.Attr<int32_t>("axis"), ctx.Attr<bool>("use_stack"));
  const std::string dout_name = OnlyInput(ctx, "Out@GRAD");
  tide::OwnedTensor staged;
  const tide::Tensor dout = OnHost(InputTensor(ctx, dout_name), staged);
  TIDE_CHECK(dout.dims() == l.out && dout.dtype() == l.dtype, "op '", op, "': Out@GRAD ('",
             dout_name, "') is ", tide::DataTypeName(dout.dtype()), " ",
             tide::ToString(dout.dims()), ", expected ", tide::DataTypeName(l.dtype), " ",
             tide::ToString(l.out));
  const char* src = static_cast<const char*>(dout.raw_data());
  tide::Variable dxv = Lookup(ctx, OnlyOutput(ctx, "X@GRAD"));
  MaterializeView(dxv);
  tide::TensorArray dx = dxv.GetTensorArray();
  dx.resize(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    tide::OwnedTensor e;
    e.Resize(l.dims[i]);
    CopyBlock(l, i, src, static_cast<char*>(e.mutable_data(l.dtype, tide::Place("cpu", 0))), false);
    dx.at(i).CopyFrom(e, ctx.place(), ctx.device_context());
  }
}

// Build time: Out is X's element dims with the new dim (stack) or the concatenated one unknown,
// as Paddle's ArrayToTensorInferMeta declares it.
void TensorArrayToTensorShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime()) return;
  tide::Dims d = ctx.InputDims("X");
  const int rank = static_cast<int>(d.size());
  const bool stack = ctx.Attr<bool>("use_stack");
  int axis = ctx.Attr<int32_t>("axis");
  if (axis < 0) axis += rank + (stack ? 1 : 0);
  if (stack && axis >= 0 && axis <= rank)
    d.insert(d.begin() + axis, -1);
  else if (!stack && axis >= 0 && axis < rank)
    d[axis] = -1;
  else
    d = {-1};  // checked at run time
  ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("OutIndex")) {
    ctx.SetOutputDims("OutIndex", {-1});
    ctx.SetOutputDataType("OutIndex", TIDE_INT32);
  }
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(
    tide::OpSchema("tensor_array_to_tensor")
        .Comment("Out = the elements of tensor array X concatenated along `axis`, or stacked on "
                 "a new dim `axis` (use_stack); OutIndex = each element's dim `axis` (int32).")
        .Input("X", "the tensor array (at least one element, of one data type and rank)")
        .Output("Out", "the elements joined")
        .Output("OutIndex", "int32 [number of elements]: each element's dim `axis`")
        .AsDispensable()
        .Attr("axis", int32_t(0),
              "the dim the elements are joined along (stacked: the new dim); negative counts "
              "from the end")
        .Attr("use_stack", false, "stack the elements on a new dim instead of concatenating")
        .InferShape(ops_control::TensorArrayToTensorShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("tensor_array_to_tensor_grad")
              .Input("X", g.Input("X"))
              .Input("Out@GRAD", g.OutputGrad("Out"))
              .Output("X@GRAD", g.InputGrad("X"))
              .CopyAttrs();
        })
        .Run(ops_control::TensorArrayToTensorRun));

TIDE_REGISTER_OP(tide::OpSchema("tensor_array_to_tensor_grad")
                     .NoGradient()
                     .Comment("X@GRAD[i] = element i's part of Out@GRAD.")
                     .Input("X", "the forward tensor array (its elements' dims)")
                     .Input("Out@GRAD", "the gradient of Out")
                     .Output("X@GRAD", "a tensor array of X's element dims")
                     .Attr("axis", int32_t(0), "as the forward op's")
                     .Attr("use_stack", false, "as the forward op's")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       ctx.SetOutputVarType("X@GRAD", TIDE_VAR_LOD_TENSOR_ARRAY);
                       ctx.SetOutputDims("X@GRAD", ctx.InputDims("X"));
                       ctx.SetOutputDataType("X@GRAD", ctx.InputDataType("X"));
                     })
                     .Run(ops_control::TensorArrayToTensorGradRun));
