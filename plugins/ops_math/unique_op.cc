// unique_op.cc: Paddle's unique (paddle.unique): Out = X's distinct elements (axis empty: of X
// flattened) or distinct slices along axis[0], sorted ascending (is_sorted; slices compared
// lexicographically) or, is_sorted false (Fluid's old unique), in order of first appearance.
// Indices: where each first appears in X; Index: which Out element each X element (slice) is;
// Counts: how often each occurs. The three are `dtype` (int32 or int64). And unique_consecutive
// (paddle.unique_consecutive): Out = X's elements (slices along axis) with each run of equal
// consecutive ones kept once (NaN equals nothing), in order; Index: which Out element each X
// element (slice) is; Counts: each run's length. No gradient (Paddle has none).
#include <initializer_list>
#include <map>
#include <numeric>
#include <tide/ops/axis.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <utility>

#include "common.h"

namespace ops_math {
namespace {

template <typename Ctx>
TideDataType IndexType(const Ctx& ctx) {
  const TideDataType t = tide::ops::DataTypeAttr(ctx, "dtype");
  TIDE_CHECK(t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': attribute 'dtype' (the indices' type) must be int32 or int64, got ",
             tide::DataTypeName(t));
  return t;
}

// The axis of the slices compared, or -1 for X's elements.
template <typename Ctx>
int UniqueAxis(const Ctx& ctx, const Dims& x) {
  const auto axis = ctx.template Attr<std::vector<int32_t>>("axis");
  TIDE_CHECK(axis.size() <= 1, "op '", ctx.op_type(), "': axis must hold at most one dim, got ",
             axis.size());
  if (axis.empty()) return -1;
  return tide::ops::NormAxis(ctx.op_type(), axis[0], x.size());
}

// Out's dims: m elements, or X's with m slices along axis `a`.
Dims OutDims(const Dims& xd, int a, int64_t m) {
  if (a < 0) return {m};
  Dims od = xd;
  od[a] = m;
  return od;
}

void UniqueInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const int a = UniqueAxis(ctx, x);
  const TideDataType it = IndexType(ctx);
  ctx.SetOutputDims("Out", OutDims(x, a, -1));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  const int64_t n = a >= 0 ? x[a] : tide::ops::DimsProductOrUnknown(x);
  ctx.SetOutputDims("Index", {n});
  ctx.SetOutputDataType("Index", it);
  for (const char* p : {"Indices", "Counts"})
    if (ctx.HasOutput(p)) {
      ctx.SetOutputDims(p, {-1});
      ctx.SetOutputDataType(p, it);
    }
}

// X as `n` slices of `len` elements, slice k's j-th element at x[pre-block ...]: X viewed
// [pre, n, post] around the axis (n = numel, pre = post = 1 without one).
struct Slices {
  int64_t pre = 1, n = 0, post = 1;
  template <typename T>
  std::vector<T> Get(const T* x, int64_t k) const {
    std::vector<T> s;
    s.reserve(static_cast<size_t>(pre * post));
    for (int64_t p = 0; p < pre; ++p)
      s.insert(s.end(), x + (p * n + k) * post, x + (p * n + k + 1) * post);
    return s;
  }
};

template <typename I>
void WriteInts(KernelContext& ctx, const char* param, const std::vector<int64_t>& v) {
  if (!ctx.HasOutput(param)) return;
  I* o = ctx.Output(param).mutable_data<I>({static_cast<int64_t>(v.size())}, ctx.place());
  for (size_t i = 0; i < v.size(); ++i) o[i] = static_cast<I>(v[i]);
}

// The integer outputs given, each 1-D in `dtype`.
void WriteIndexOutputs(
    KernelContext& ctx,
    std::initializer_list<std::pair<const char*, const std::vector<int64_t>*>> outs) {
  const bool i32 = IndexType(ctx) == TIDE_INT32;
  for (const auto& [param, v] : outs) {
    if (i32)
      WriteInts<int32_t>(ctx, param, *v);
    else
      WriteInts<int64_t>(ctx, param, *v);
  }
}

// X's slices along axis `a` (its elements when a < 0).
Slices XSlices(const char* op, const Dims& xd, int a) {
  Slices s;
  if (a < 0) {
    s.n = DimsProduct(xd);
    return s;
  }
  const auto sp = tide::ops::SplitAt(op, xd, a);
  s.pre = sp.pre;
  s.n = sp.n;
  s.post = sp.post;
  return s;
}

template <typename T>
void UniqueKernel(KernelContext& ctx) {
  Tensor xt = ctx.Input("X");
  const Dims xd = xt.dims();
  const T* x = xt.data<T>();
  const int a = UniqueAxis(ctx, xd);
  const Slices s = XSlices(ctx.op_type(), xd, a);
  std::vector<std::vector<T>> slices(static_cast<size_t>(s.n));
  for (int64_t k = 0; k < s.n; ++k) slices[k] = s.Get(x, k);
  // Groups of equal slices: `order` lists the slice indices by group, each group's first
  // appearance first.
  std::vector<int64_t> order(static_cast<size_t>(s.n));
  std::iota(order.begin(), order.end(), 0);
  const bool sorted = ctx.Attr<bool>("is_sorted");
  if (sorted) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t l, int64_t r) { return slices[l] < slices[r]; });
  } else {  // by first appearance: each slice's group is the first equal one's
    std::map<std::vector<T>, int64_t> first;
    std::vector<int64_t> group(static_cast<size_t>(s.n));
    for (int64_t k = 0; k < s.n; ++k) group[k] = first.emplace(slices[k], k).first->second;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t l, int64_t r) { return group[l] < group[r]; });
  }
  std::vector<int64_t> firsts, counts, inverse(static_cast<size_t>(s.n));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || slices[order[i]] != slices[order[i - 1]]) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
  }
  const int64_t m = static_cast<int64_t>(firsts.size());
  const Dims od = OutDims(xd, a, m);
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (int64_t p = 0; p < s.pre; ++p)
    for (int64_t j = 0; j < m; ++j)
      std::copy(slices[firsts[j]].begin() + p * s.post,
                slices[firsts[j]].begin() + (p + 1) * s.post, o + (p * m + j) * s.post);
  WriteIndexOutputs(ctx, {{"Indices", &firsts}, {"Index", &inverse}, {"Counts", &counts}});
}

void UniqueConsecutiveInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const int a = UniqueAxis(ctx, x);
  const TideDataType it = IndexType(ctx);
  ctx.SetOutputDims("Out", OutDims(x, a, -1));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("Index")) {
    ctx.SetOutputDims("Index", {a >= 0 ? x[a] : tide::ops::DimsProductOrUnknown(x)});
    ctx.SetOutputDataType("Index", it);
  }
  if (ctx.HasOutput("Counts")) {
    ctx.SetOutputDims("Counts", {-1});
    ctx.SetOutputDataType("Counts", it);
  }
}

template <typename T>
void UniqueConsecutiveKernel(KernelContext& ctx) {
  Tensor xt = ctx.Input("X");
  const Dims xd = xt.dims();
  const T* x = xt.data<T>();
  const int a = UniqueAxis(ctx, xd);
  const Slices s = XSlices(ctx.op_type(), xd, a);
  // Each run's first slice, its length, and each slice's run.
  std::vector<int64_t> firsts, counts, inverse(static_cast<size_t>(s.n));
  std::vector<T> prev;
  for (int64_t k = 0; k < s.n; ++k) {
    std::vector<T> cur = s.Get(x, k);
    if (k == 0 || cur != prev) {
      firsts.push_back(k);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[k] = static_cast<int64_t>(firsts.size()) - 1;
    prev = std::move(cur);
  }
  const int64_t m = static_cast<int64_t>(firsts.size());
  const Dims od = OutDims(xd, a, m);
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (int64_t p = 0; p < s.pre; ++p)
    for (int64_t j = 0; j < m; ++j)
      std::copy(x + (p * s.n + firsts[j]) * s.post, x + (p * s.n + firsts[j] + 1) * s.post,
                o + (p * m + j) * s.post);
  WriteIndexOutputs(ctx, {{"Index", &inverse}, {"Counts", &counts}});
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("unique")
        .Comment("Out = X's distinct elements (or slices along axis), with where each first "
                 "appears (Indices), which each X element is (Index) and their counts "
                 "(paddle.unique).")
        .Input("X", "the input")
        .Output("Out", "the distinct elements (1-D) or slices (X's dims, fewer along axis)")
        .Output("Indices", "`dtype`: each Out element's first position in X")
        .AsDispensable()
        .Output("Index", "`dtype`: each X element's (slice's) position in Out")
        .Output("Counts", "`dtype`: how often each Out element occurs")
        .AsDispensable()
        .Attr("return_index", false, "Paddle's request for Indices (Tide writes it when present)")
        .Attr("return_inverse", false, "Paddle's request for Index")
        .Attr("return_counts", false, "Paddle's request for Counts")
        .Attr("axis", std::vector<int32_t>{}, "the axis of the slices compared (empty: elements)")
        .Attr("dtype", int32_t{TIDE_INT64}, "Indices', Index's and Counts' type: int32 or int64")
        .Attr("is_sorted", false, "sort Out ascending (false: Fluid's order of first appearance)")
        .KernelDataTypeFrom("X")
        .InferShape(UniqueInferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("unique", "cpu", UniqueKernel, OPS_MATH_NUMERIC_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("unique_consecutive")
        .Comment("Out = X with each run of equal consecutive elements (or slices along axis) "
                 "kept once, with which Out element each X element is (Index) and the runs' "
                 "lengths (Counts) (paddle.unique_consecutive).")
        .Input("X", "float32, float64, int32 or int64")
        .Output("Out", "the runs' elements (1-D) or slices (X's dims, fewer along axis)")
        .Output("Index", "`dtype`: each X element's (slice's) position in Out")
        .AsDispensable()
        .Output("Counts", "`dtype`: each run's length")
        .AsDispensable()
        .Attr("return_inverse", false, "Paddle's request for Index (Tide writes it when present)")
        .Attr("return_counts", false, "Paddle's request for Counts (Tide writes it when present)")
        .Attr("axis", std::vector<int32_t>{}, "the axis of the slices compared (empty: elements)")
        .Attr("dtype", int32_t{TIDE_INT64}, "Index's and Counts' type: int32 or int64")
        .KernelDataTypeFrom("X")
        .InferShape(UniqueConsecutiveInferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("unique_consecutive", "cpu", UniqueConsecutiveKernel, OPS_MATH_NUMERIC_TYPES);
