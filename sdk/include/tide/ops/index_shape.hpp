// tide/ops/index_shape.hpp: the shape rules of the index ops and Paddle 2.x's flatten, with their
// errors, for every implementation of them: flatten_contiguous_range, gather along an axis,
// gather_nd, one_hot, arg_max / arg_min (unknown (-1) dims pass through at compile time); and
// gather, scatter, gather_nd, one_hot, arg_max / arg_min and cumsum with the grads as every kernel
// reads their inputs (checked, outputs allocated on the kernel's place). The index values stay
// where they are: each kernel reads them, and checks their range, its own way.
#ifndef TIDE_OPS_INDEX_SHAPE_HPP_
#define TIDE_OPS_INDEX_SHAPE_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// flatten_contiguous_range: dims [start_axis, stop_axis] (negative: from the end) become one; a
// 0-D X becomes [1].
inline Dims FlattenRangeDims(const char* op, const Dims& x, int start, int stop) {
  if (x.empty()) return {1};
  const int r = static_cast<int>(x.size());
  TIDE_CHECK(start >= -r && start < r && stop >= -r && stop < r, "op '", op, "': start_axis ",
             start, " and stop_axis ", stop, " must be in [", -r, ", ", r, ") for X ", ToString(x));
  if (start < 0) start += r;
  if (stop < 0) stop += r;
  TIDE_CHECK(start <= stop, "op '", op, "': start_axis ", start, " is after stop_axis ", stop,
             " (X ", ToString(x), ")");
  Dims out(x.begin(), x.begin() + start);
  out.push_back(DimsProductOrUnknown(Dims(x.begin() + start, x.begin() + stop + 1)));
  out.insert(out.end(), x.begin() + stop + 1, x.end());
  return out;
}

// gather along the (normalised) `axis`: X's dims with that one replaced by Index's length.
inline Dims GatherAxisDims(const char* op, const Dims& x, const Dims& index, int axis) {
  GatherDims(op, x, index);  // checks X and Index
  Dims out = x;
  out[axis] = index[0];
  return out;
}

// gather_nd: Index [..., k] picks X[i0, ..., ik-1, :]; Out = Index's dims[:-1] + X's dims[k:].
inline Dims GatherNdDims(const char* op, const Dims& x, const Dims& index) {
  TIDE_CHECK(!index.empty(), "op '", op, "': Index must have rank >= 1");
  const int64_t k = index.back();
  TIDE_CHECK(k < 0 || k <= static_cast<int64_t>(x.size()), "op '", op, "': Index's last dim (", k,
             ") exceeds X's rank (X ", ToString(x), ")");
  Dims out(index.begin(), index.end() - 1);
  if (k >= 0) out.insert(out.end(), x.begin() + k, x.end());
  return out;
}

// arg_max / arg_min along `axis`: the axis dropped (keepdims: kept as 1); [1] when none is left.
inline Dims ArgOutDims(const char* op, const Dims& x, int64_t axis, bool keepdims) {
  const int a = NormAxis(op, axis, x.size());
  Dims od = x;
  if (keepdims)
    od[a] = 1;
  else
    od.erase(od.begin() + a);
  if (od.empty()) od.push_back(1);
  return od;
}

// Paddle's flatten = true: the index into the flattened X, Out [1] (keepdims: X's rank of 1s).
inline Dims ArgFlatOutDims(const Dims& x, bool keepdims) {
  return keepdims ? Dims(std::max<size_t>(x.size(), 1), 1) : Dims{1};
}

// one_hot: X's ids [..., 1] as [..., depth], depth > 0.
inline Dims OneHotOutDims(const char* op, Dims x, int64_t depth) {
  TIDE_CHECK(!x.empty() && DimsCompatible(x.back(), 1), "op '", op, "': X must be [..., 1], got ",
             ToString(x));
  TIDE_CHECK(depth > 0, "op '", op, "': depth must be > 0, got ", depth);
  x.back() = depth;
  return x;
}

// Out's type from the dtype attribute: int32 or int64 (Paddle's -1: int64).
inline TideDataType ArgOutType(const char* op, int32_t dtype) {
  TIDE_CHECK(dtype == -1 || dtype == TIDE_INT32 || dtype == TIDE_INT64, "op '", op,
             "': dtype must be int32, int64 or -1 (int64), got ", dtype);
  return dtype == TIDE_INT32 ? TIDE_INT32 : TIDE_INT64;
}

// gather's axis: Paddle's Axis input (one int32 / int64, read with `read`, see int_inputs.hpp)
// over the attribute, normalised for X of rank `rank`.
template <typename Read = ReadOnHost>
int GatherAxisOf(const KernelContext& ctx, size_t rank, Read read = {}) {
  int64_t a = ctx.Attr<int32_t>("axis");
  if (ctx.HasInput("Axis")) {
    Tensor t = ctx.Input("Axis");
    TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_INT32 || t.dtype() == TIDE_INT64), "op '",
               ctx.op_type(), "': Axis ('", ctx.InputName("Axis"),
               "') must hold one int32/int64, got ", DataTypeName(t.dtype()), " ",
               ToString(t.dims()));
    a = IntScalar(ctx, "Axis", 0, read);
  }
  return NormAxis(ctx.op_type(), a, rank);
}

// gather: X as [pre, n, post] around the axis, Index (m int32 / int64 ids, 1-D or [m, 1]); Out
// allocated.
template <typename T>
struct GatherArgs {
  AxisSplit s;
  int64_t m;
  Tensor index;
  const T* x;
  T* out;
};

// Both ops' Index, X around the axis and Out's dims (returned) into a.
template <typename Args, typename Read>
Dims ReadGather(const KernelContext& ctx, const Dims& x, Read read, Args* a) {
  a->index = ctx.Input("Index");
  const int axis = GatherAxisOf(ctx, x.size(), read);
  const Dims od = GatherAxisDims(ctx.op_type(), x, a->index.dims(), axis);
  a->s = SplitAt(ctx.op_type(), x, axis);
  a->m = od[axis];
  return od;
}

template <typename T, typename Read = ReadOnHost>
GatherArgs<T> GetGatherArgs(const KernelContext& ctx, Read read = {}) {
  Tensor x = ctx.Input("X");
  GatherArgs<T> a;
  const Dims od = ReadGather(ctx, x.dims(), read, &a);
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

// gather_grad: the same with Out@GRAD (Out's dims), and X@GRAD allocated.
template <typename T>
struct GatherGradArgs {
  AxisSplit s;
  int64_t m, x_numel;
  Tensor index;
  const T* dout;
  T* dx;
};

template <typename T, typename Read = ReadOnHost>
GatherGradArgs<T> GetGatherGradArgs(const KernelContext& ctx, Read read = {}) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  GatherGradArgs<T> a;
  CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), ReadGather(ctx, x.dims(), read, &a));
  a.x_numel = x.numel();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

// scatter: X as `rows` rows of `row` values, Ids (count int32 / int64 ids), Updates (count rows);
// Out allocated with X's dims.
template <typename T>
struct ScatterArgs {
  int64_t count, rows, row;
  bool overwrite;
  Tensor ids;
  int64_t x_numel;
  const T* x;
  const T* updates;
  T* out;
};

template <typename T>
ScatterArgs<T> GetScatterArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), upd = ctx.Input("Updates");
  ScatterArgs<T> a;
  a.ids = ctx.Input("Ids");
  const Dims xd = x.dims();
  a.count = a.ids.numel();
  a.rows = xd.empty() ? 0 : xd[0];
  a.row = DimsProduct(xd, 1, xd.size());
  TIDE_CHECK(upd.numel() == a.count * a.row, "op '", ctx.op_type(), "': Updates ",
             ToString(upd.dims()), " must hold ", a.count, " rows of X ", ToString(xd));
  a.overwrite = ctx.Attr<bool>("overwrite");
  a.x_numel = x.numel();
  a.x = x.data<T>();
  a.updates = upd.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(xd, ctx.place());
  return a;
}

// scatter_grad: Out@GRAD as X's `rows` rows, Ids; X@GRAD (X's dims) and Updates@GRAD (count
// rows) where wanted.
template <typename T>
struct ScatterGradArgs {
  int64_t count, rows, row, numel;
  Tensor ids;
  const T* dout;
  T* dx;
  T* dupdates;
};

template <typename T>
ScatterGradArgs<T> GetScatterGradArgs(const KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  ScatterGradArgs<T> a;
  a.ids = ctx.Input("Ids");
  const Dims xd = dout.dims();
  a.count = a.ids.numel();
  a.rows = xd.empty() ? 0 : xd[0];
  a.row = DimsProduct(xd, 1, xd.size());
  a.numel = dout.numel();
  a.dout = dout.data<T>();
  a.dx = OptionalGrad<T>(ctx, "X", xd);
  Dims ud = xd;
  if (!ud.empty()) ud[0] = a.count;
  a.dupdates = OptionalGrad<T>(ctx, "Updates", ud);
  return a;
}

// gather_nd: Index [..., k] picks X[i0, ..., ik-1, :], `inner` values each; Out allocated.
template <typename T>
struct GatherNdArgs {
  Dims x_dims;
  int64_t k, inner, out_numel;
  Tensor index;
  const T* x;
  T* out;
};

// gather_nd_grad: the same with Out@GRAD (Out's dims), X@GRAD allocated (x null, out unused).
template <typename T>
struct GatherNdGradArgs {
  Dims x_dims;
  int64_t k, inner, out_numel;
  Tensor index;
  const T* dout;
  T* dx;
};

template <typename Args>
Dims ReadGatherNd(const KernelContext& ctx, const Tensor& x, Args* a) {
  a->index = ctx.Input("Index");
  a->x_dims = x.dims();
  const Dims od = GatherNdDims(ctx.op_type(), a->x_dims, a->index.dims());
  a->k = a->index.dims().back();
  a->inner = DimsProduct(a->x_dims, a->k, a->x_dims.size());
  a->out_numel = DimsProduct(od);
  return od;
}

template <typename T>
GatherNdArgs<T> GetGatherNdArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  GatherNdArgs<T> a;
  const Dims od = ReadGatherNd(ctx, x, &a);
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

template <typename T>
GatherNdGradArgs<T> GetGatherNdGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  GatherNdGradArgs<T> a;
  const Dims od = ReadGatherNd(ctx, x, &a);
  CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(a.x_dims, ctx.place());
  return a;
}

// gather_nd's (kGrad false) or its grad's arguments.
template <typename T, bool kGrad>
std::conditional_t<kGrad, GatherNdGradArgs<T>, GatherNdArgs<T>> GetGatherNdArgsOf(
    const KernelContext& ctx) {
  if constexpr (kGrad)
    return GetGatherNdGradArgs<T>(ctx);
  else
    return GetGatherNdArgs<T>(ctx);
}

// one_hot: X's ids (n, int32 / int64), depth, allow_out_of_range; Out allocated.
template <typename T>
struct OneHotArgs {
  int64_t n, depth, out_numel;
  bool allow;
  Tensor ids;
  T* out;
};

template <typename T>
OneHotArgs<T> GetOneHotArgs(const KernelContext& ctx) {
  OneHotArgs<T> a;
  a.ids = ctx.Input("X");
  a.n = a.ids.numel();
  a.depth = ctx.Attr<int32_t>("depth");
  a.allow = ctx.Attr<bool>("allow_out_of_range");
  const Dims od = OneHotOutDims(ctx.op_type(), a.ids.dims(), a.depth);
  a.out_numel = DimsProduct(od);
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

// arg_max / arg_min: X (flattened with Paddle's flatten) as [pre, n, post] around the axis, not
// empty along it; Out's dims and type (ArgOutput allocates it).
template <typename T>
struct ArgArgs {
  AxisSplit s;
  Dims out_dims;
  TideDataType out_type;
  const T* x;
};

template <typename T>
ArgArgs<T> GetArgArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  const bool flat = ctx.HasAttr("flatten") && ctx.Attr<bool>("flatten");
  const int64_t axis = flat ? 0 : ctx.Attr<int64_t>("axis");
  const Dims xd = flat ? Dims{x.numel()} : x.dims();
  ArgArgs<T> a;
  a.s = SplitAt(op, xd, axis);
  TIDE_CHECK(a.s.n > 0, "op '", op, "': X ", ToString(x.dims()), " is empty along axis ", axis);
  const bool keep = ctx.Attr<bool>("keepdims");
  a.out_dims = flat ? ArgFlatOutDims(x.dims(), keep) : ArgOutDims(op, xd, axis, keep);
  a.out_type = ArgOutType(op, ctx.Attr<int32_t>("dtype"));
  a.x = x.data<T>();
  return a;
}

// arg_max / arg_min's Out allocated as its type says: fn(int32_t*) or fn(int64_t*).
template <typename T, typename Fn>
void ArgOutput(const KernelContext& ctx, const ArgArgs<T>& a, Fn&& fn) {
  Tensor out = ctx.Output("Out");
  if (a.out_type == TIDE_INT32)
    fn(out.mutable_data<int32_t>(a.out_dims, ctx.place()));
  else
    fn(out.mutable_data<int64_t>(a.out_dims, ctx.place()));
}

// cumsum: X (flattened with `flatten`) as [pre, n, post] around the axis; Out allocated.
template <typename T>
struct CumsumArgs {
  AxisSplit s;
  bool exclusive, reverse;
  const T* x;
  T* out;
};

template <typename T>
CumsumArgs<T> GetCumsumArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const bool flatten = ctx.Attr<bool>("flatten");
  const Dims xd = flatten ? Dims{x.numel()} : x.dims();
  CumsumArgs<T> a;
  a.s = SplitAt(ctx.op_type(), xd, flatten ? 0 : ctx.Attr<int32_t>("axis"));
  a.exclusive = ctx.Attr<bool>("exclusive");
  a.reverse = ctx.Attr<bool>("reverse");
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(xd, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INDEX_SHAPE_HPP_
