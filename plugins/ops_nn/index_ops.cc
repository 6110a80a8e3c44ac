// index_ops.cc: Fluid's index ops: gather / scatter (rows by an int Index, with grads),
// gather_nd, one_hot (and Paddle's one_hot_v2), arg_max / arg_min, argsort (with grad),
// where_index, range, shape and cumsum (with grad). Indices out of range are errors naming the op,
// the input and the value.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <tide/ops/argsort.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/ops/index_shape.hpp>
#include <tide/ops/range.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <type_traits>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

using tide::ops::ArgFlatOutDims;
using tide::ops::ArgOutDims;
using tide::ops::GatherNdDims;

void CheckIndex(const KernelContext& ctx, const char* param, int64_t v, int64_t bound) {
  TIDE_CHECK(v >= 0 && v < bound, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') holds ", v, ", outside [0, ", bound, ")");
}

// ---------------------------------------------------------------------------------------------
// gather: Out[.., i, ..] = X[.., Index[i], ..] along `axis` (Paddle 2.x; Fluid's is axis 0); an
// Axis input (one int) overrides the attribute at run time.
// The attribute's axis at compile time (Axis, an input, is known at run time only).
int GatherAxis(const tide::InferShapeContext& ctx, size_t rank) {
  return NormAxis(ctx.op_type(), ctx.Attr<int32_t>("axis"), rank);
}

template <typename T>
void GatherKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetGatherArgs<T>(ctx);
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  const auto& s = a.s;
  for (int64_t i = 0; i < a.m; ++i) CheckIndex(ctx, "Index", idx[i], s.n);
  for (int64_t p = 0; p < s.pre; ++p)
    for (int64_t i = 0; i < a.m; ++i)
      std::memcpy(a.out + (p * a.m + i) * s.post, a.x + (p * s.n + idx[i]) * s.post,
                  sizeof(T) * s.post);
}

// X@GRAD[.., Index[i], ..] += Out@GRAD[.., i, ..].
template <typename T>
void GatherGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetGatherGradArgs<T>(ctx);
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  const auto& s = a.s;
  std::fill(a.dx, a.dx + a.x_numel, T(0));
  for (int64_t i = 0; i < a.m; ++i) CheckIndex(ctx, "Index", idx[i], s.n);
  for (int64_t p = 0; p < s.pre; ++p)
    for (int64_t i = 0; i < a.m; ++i)
      for (int64_t k = 0; k < s.post; ++k)
        a.dx[(p * s.n + idx[i]) * s.post + k] += a.dout[(p * a.m + i) * s.post + k];
}

// scatter: Out = X with rows Ids replaced by (overwrite) or added to (else) Updates' rows. With
// overwrite and repeated ids, the last update wins.
template <typename T>
void ScatterKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetScatterArgs<T>(ctx);
  const std::vector<int64_t> ids = IntValues(ctx, "Ids");
  const int64_t row = a.row;
  for (int64_t id : ids) CheckIndex(ctx, "Ids", id, a.rows);
  T* o = a.out;
  if (o != a.x) std::memcpy(o, a.x, sizeof(T) * a.x_numel);
  if (!a.overwrite)  // Fluid: the listed rows are zeroed, then every update added
    for (int64_t id : ids) std::fill(o + id * row, o + (id + 1) * row, T(0));
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t k = 0; k < row; ++k) {
      T& dst = o[ids[i] * row + k];
      dst = a.overwrite ? a.updates[i * row + k] : dst + a.updates[i * row + k];
    }
}

// X@GRAD = Out@GRAD with the scattered rows zeroed; Updates@GRAD = Out@GRAD's rows at Ids.
template <typename T>
void ScatterGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetScatterGradArgs<T>(ctx);
  const std::vector<int64_t> ids = IntValues(ctx, "Ids");
  const int64_t row = a.row;
  for (int64_t id : ids) CheckIndex(ctx, "Ids", id, a.rows);
  if (a.dx) {
    std::memcpy(a.dx, a.dout, sizeof(T) * a.numel);
    for (int64_t id : ids) std::fill(a.dx + id * row, a.dx + (id + 1) * row, T(0));
  }
  if (a.dupdates)
    for (size_t i = 0; i < ids.size(); ++i)
      std::memcpy(a.dupdates + i * row, a.dout + ids[i] * row, sizeof(T) * row);
}

// X's offset of Index row i (its k ids, each checked).
int64_t GatherNdOffset(const KernelContext& ctx, const std::vector<int64_t>& idx, int64_t i,
                       int64_t k, const Dims& xd, const std::vector<int64_t>& xs) {
  int64_t off = 0;
  for (int64_t j = 0; j < k; ++j) {
    CheckIndex(ctx, "Index", idx[i * k + j], xd[j]);
    off += idx[i * k + j] * xs[j];
  }
  return off;
}

template <typename T, bool kGrad>
void GatherNd(KernelContext& ctx) {
  const auto a = tide::ops::GetGatherNdArgsOf<T, kGrad>(ctx);
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  const int64_t k = a.k, inner = a.inner;
  // One gathered slice per index tuple: Index's dims but the last (of size k; k = 0 takes all of
  // X each time).
  const Dims& id = a.index.dims();
  const int64_t n = id.empty() ? 1 : DimsProduct(id, 0, id.size() - 1);
  const std::vector<int64_t> xs = Strides(a.x_dims);
  if constexpr (!kGrad) {
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(a.out + i * inner, a.x + GatherNdOffset(ctx, idx, i, k, a.x_dims, xs),
                  sizeof(T) * inner);
  } else {
    std::fill(a.dx, a.dx + DimsProduct(a.x_dims), T(0));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t off = GatherNdOffset(ctx, idx, i, k, a.x_dims, xs);
      for (int64_t j = 0; j < inner; ++j) a.dx[off + j] += a.dout[i * inner + j];
    }
  }
}
template <typename T>
void GatherNdKernel(KernelContext& c) {
  GatherNd<T, false>(c);
}
template <typename T>
void GatherNdGradKernel(KernelContext& c) {
  GatherNd<T, true>(c);
}

// ---------------------------------------------------------------------------------------------
// one_hot: X int [..., 1] -> Out [..., depth] of dtype; allow_out_of_range gives a zero row.
template <typename T>
void OneHotKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetOneHotArgs<T>(ctx);
  const std::vector<int64_t> ids = IntValues(ctx, "X");
  std::fill(a.out, a.out + a.out_numel, T(0));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (a.allow && (ids[i] < 0 || ids[i] >= a.depth)) continue;
    CheckIndex(ctx, "X", ids[i], a.depth);
    a.out[i * a.depth + ids[i]] = T(1);
  }
}

void OneHotInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", tide::ops::OneHotOutDims(ctx.op_type(), ctx.InputDims("X"),
                                                    ctx.Attr<int32_t>("depth")));
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
  ctx.ShareLoD("X", "Out");
}

// one_hot_v2 (Paddle 2.x's F.one_hot): X int [...] -> Out [..., depth], depth from depth_tensor
// (one int) over the attribute; the rows as one_hot's.
int64_t OneHotV2Depth(const KernelContext& ctx) {
  const int64_t depth =
      ctx.HasInput("depth_tensor") ? IntScalar(ctx, "depth_tensor") : ctx.Attr<int32_t>("depth");
  TIDE_CHECK(depth > 0, "op '", ctx.op_type(), "': depth must be > 0, got ", depth);
  return depth;
}

template <typename T>
void OneHotV2Kernel(KernelContext& ctx) {
  const int64_t depth = OneHotV2Depth(ctx);
  const bool allow = ctx.Attr<bool>("allow_out_of_range");
  Dims od = ctx.Input("X").dims();
  od.push_back(depth);
  const std::vector<int64_t> ids = IntValues(ctx, "X");
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  std::fill(out, out + DimsProduct(od), T(0));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (allow && (ids[i] < 0 || ids[i] >= depth)) continue;
    CheckIndex(ctx, "X", ids[i], depth);
    out[i * depth + ids[i]] = T(1);
  }
}

void OneHotV2InferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", op, "': X ('",
             ctx.InputName("X"), "') must be int32 or int64, got ", tide::DataTypeName(t));
  Dims od = ctx.InputDims("X");
  const int32_t depth = ctx.Attr<int32_t>("depth");
  if (!ctx.HasInput("depth_tensor"))
    TIDE_CHECK(depth > 0, "op '", op, "': depth must be > 0, got ", depth);
  od.push_back(ctx.HasInput("depth_tensor") ? -1 : depth);
  if (!ctx.HasInput("depth_tensor") || !ctx.IsRuntime()) ctx.SetOutputDims("Out", od);
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
}

// ---------------------------------------------------------------------------------------------
// arg_max / arg_min along axis (the first of equal extremes), int64 (or dtype int32) output.
template <typename T, bool kMax, typename I>
void ArgExtreme(KernelContext& ctx, const tide::ops::AxisSplit& s, const T* x, I* o) {
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      int64_t best = 0;
      for (int64_t j = 1; j < s.n; ++j) {
        const T v = x[(i * s.n + j) * s.post + k], b = x[(i * s.n + best) * s.post + k];
        if (kMax ? v > b : v < b) best = j;
      }
      o[i * s.post + k] = static_cast<I>(best);
    }
}

// Paddle's flatten: the index into the flattened X, Out [1] (keepdims: X's rank of 1s).
template <typename Ctx>
bool ArgFlatten(const Ctx& ctx) {
  return ctx.HasAttr("flatten") && ctx.template Attr<bool>("flatten");
}

// Out's type: dtype int32 or int64 (Paddle's -1: int64).
template <typename Ctx>
TideDataType ArgOutType(const Ctx& ctx) {
  return tide::ops::ArgOutType(ctx.op_type(), ctx.template Attr<int32_t>("dtype"));
}

template <typename T, bool kMax>
void ArgKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetArgArgs<T>(ctx);
  tide::ops::ArgOutput(ctx, a, [&](auto* out) { ArgExtreme<T, kMax>(ctx, a.s, a.x, out); });
}
template <typename T>
void ArgMaxKernel(KernelContext& c) {
  ArgKernel<T, true>(c);
}
template <typename T>
void ArgMinKernel(KernelContext& c) {
  ArgKernel<T, false>(c);
}

void ArgInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const bool keep = ctx.Attr<bool>("keepdims");
  ctx.SetOutputDims("Out", ArgFlatten(ctx)
                               ? ArgFlatOutDims(x, keep)
                               : ArgOutDims(ctx.op_type(), x, ctx.Attr<int64_t>("axis"), keep));
  ctx.SetOutputDataType("Out", ArgOutType(ctx));
}

// ---------------------------------------------------------------------------------------------
// argsort: Out = X sorted along axis in tide/ops/argsort.hpp's order (stable, NaN last, also
// when descending), Indices where from.
template <typename T>
void ArgsortKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetArgsortArgs<T>(ctx);
  const auto& s = a.s;
  std::vector<int64_t> perm(static_cast<size_t>(s.n));
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      auto at = [&](int64_t j) { return (i * s.n + j) * s.post + k; };
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t p, int64_t q) {
        return tide::ops::ArgsortBefore(a.x[at(p)], a.x[at(q)], a.descending);
      });
      for (int64_t j = 0; j < s.n; ++j) {
        a.out[at(j)] = a.x[at(perm[j])];
        a.indices[at(j)] = perm[j];
      }
    }
}

// X@GRAD[Indices[j]] = Out@GRAD[j] along axis (Indices from argsort: a permutation of each line).
template <typename T>
void ArgsortGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetArgsortGradArgs<T>(ctx);
  const auto& s = a.s;
  std::fill(a.dx, a.dx + s.pre * s.n * s.post, T(0));
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k)
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = (i * s.n + j) * s.post + k;
        CheckIndex(ctx, "Indices", a.indices[e], s.n);
        a.dx[(i * s.n + a.indices[e]) * s.post + k] = a.dout[e];
      }
}

// ---------------------------------------------------------------------------------------------
// where_index: the coordinates of Condition's nonzero elements (true, for bool), int64
// [count, rank]. Paddle's nonzero takes any dense type (paddle.vision.ops.nms calls
// paddle.where of an int32 mask).
template <typename T>
void WhereIndexKernelT(KernelContext& ctx) {
  Tensor c = ctx.Input("Condition");
  const T* cd = c.data<T>();
  std::vector<int64_t> coords;
  int64_t count = 0;
  ForEachIndex(c.dims(), [&](const std::vector<int64_t>& idx, int64_t i) {
    if (cd[i] == T(0)) return;
    coords.insert(coords.end(), idx.begin(), idx.end());
    ++count;
  });
  int64_t* o =
      ctx.Output("Out").mutable_data<int64_t>({count, static_cast<int64_t>(c.rank())}, ctx.place());
  std::copy(coords.begin(), coords.end(), o);
}

// range: [Start, End) by Step (one element each), 1-D (tide/ops/range.hpp).
template <typename T>
void RangeKernel(KernelContext& ctx) {
  tide::ops::CheckRangeInputs(ctx);
  const T start = ctx.Input("Start").data<T>()[0], end = ctx.Input("End").data<T>()[0];
  const T step = ctx.Input("Step").data<T>()[0];
  const int64_t n = tide::ops::RangeSize(ctx.op_type(), start, end, step, ctx.InputName("Step"));
  T* o = ctx.Output("Out").mutable_data<T>({n}, ctx.place());
  for (int64_t i = 0; i < n; ++i) o[i] = tide::ops::RangeValue(start, step, i);
}

// shape: Input's dims as int32.
template <typename T>
void ShapeKernel(KernelContext& ctx) {
  const Dims d = ctx.Input("Input").dims();
  int32_t* o =
      ctx.Output("Out").mutable_data<int32_t>({static_cast<int64_t>(d.size())}, ctx.place());
  for (size_t i = 0; i < d.size(); ++i) o[i] = static_cast<int32_t>(d[i]);
}

// cumsum along axis; exclusive leaves each element out of its own sum; reverse sums from the end.
template <typename T>
void Cumsum(const tide::ops::AxisSplit& s, const T* x, T* o, bool exclusive, bool reverse) {
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      T acc = 0;
      for (int64_t jj = 0; jj < s.n; ++jj) {
        const int64_t j = reverse ? s.n - 1 - jj : jj;
        const int64_t e = (i * s.n + j) * s.post + k;
        const T v = x[e];
        if (exclusive) {
          o[e] = acc;
          acc += v;
        } else {
          acc += v;
          o[e] = acc;
        }
      }
    }
}

template <typename T>
void CumsumKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetCumsumArgs<T>(ctx);
  Cumsum(a.s, a.x, a.out, a.exclusive, a.reverse);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("gather")
                     .Comment("Out = X[Index] (rows of X).")
                     .Input("X", "the source")
                     .Input("Index", "int32/int64 row ids, 1-D")
                     .Output("Out", "[len(Index)] + X's dims after the first")
                     .Input("Axis",
                            "Paddle: the axis as a one-element int tensor (optional; "
                            "overrides `axis`)")
                     .AsDispensable()
                     .Attr("overwrite", true, "Fluid's grad option (the grad always adds repeats)")
                     .Attr("axis", int32_t(0), "the gathered axis (negative: from the end)")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X"), idx = c.InputDims("Index");
                       if (c.HasInput("Axis")) {  // known at run time only
                         tide::ops::GatherDims(c.op_type(), x, idx);
                         c.SetOutputDims("Out", Dims(x.size(), -1));
                       } else {
                         c.SetOutputDims("Out", tide::ops::GatherAxisDims(c.op_type(), x, idx,
                                                                          GatherAxis(c, x.size())));
                       }
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("gather_grad");
                       op.Input("X", g.Input("X")).Input("Index", g.Input("Index"));
                       if (!g.Input("Axis").empty()) op.Input("Axis", g.Input("Axis"));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("gather_grad")
                     .Input("X")
                     .Input("Index")
                     .Input("Axis")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("overwrite", true)
                     .Attr("axis", int32_t(0))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("gather", "cpu", GatherKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES);
TIDE_REGISTER_KERNEL("gather_grad", "cpu", GatherGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("scatter")
        .Comment("Out = X with rows Ids set to (overwrite) or summed from Updates' rows.")
        .Input("X", "the target")
        .Input("Ids", "int32/int64 row ids, 1-D")
        .Input("Updates", "[len(Ids)] + X's dims after the first")
        .Output("Out", "X's dims")
        .Attr("overwrite", true, "replace rows (else the updates of a row are summed)")
        .KernelDataTypeFrom("X")
        .InferShape([](tide::InferShapeContext& c) {
          c.SetOutputDims("Out", c.InputDims("X"));
          c.SetOutputDataType("Out", c.InputDataType("X"));
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("scatter_grad")
              .Input("Ids", g.Input("Ids"))
              .Input("Updates", g.Input("Updates"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .Output(GradVarName("Updates"), g.InputGrad("Updates"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("scatter_grad")
                     .Input("Ids")
                     .Input("Updates")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Updates"))
                     .AsDispensable()
                     .Attr("overwrite", true)
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape([](tide::InferShapeContext& c) {
                       const std::string gx = GradVarName("X"), gu = GradVarName("Updates");
                       const std::string go = GradVarName("Out");
                       if (c.HasOutput(gx.c_str())) {
                         c.SetOutputDims(gx.c_str(), c.InputDims(go.c_str()));
                         c.SetOutputDataType(gx.c_str(), c.InputDataType(go.c_str()));
                       }
                       if (c.HasOutput(gu.c_str())) {
                         c.SetOutputDims(gu.c_str(), c.InputDims("Updates"));
                         c.SetOutputDataType(gu.c_str(), c.InputDataType("Updates"));
                       }
                     }));
TIDE_REGISTER_KERNEL("scatter", "cpu", ScatterKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("scatter_grad", "cpu", ScatterGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("gather_nd")
        .Comment("Out[i...] = X[Index[i..., :]] (Index's last dim indexes X's first dims).")
        .Input("X", "the source")
        .Input("Index", "int32/int64 [..., k]")
        .Output("Out", "Index's dims[:-1] + X's dims[k:]")
        .KernelDataTypeFrom("X")
        .InferShape([](tide::InferShapeContext& c) {
          c.SetOutputDims("Out", GatherNdDims(c.op_type(), c.InputDims("X"), c.InputDims("Index")));
          c.SetOutputDataType("Out", c.InputDataType("X"));
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("gather_nd_grad")
              .Input("X", g.Input("X"))
              .Input("Index", g.Input("Index"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"));
        }));
TIDE_REGISTER_OP(tide::OpSchema("gather_nd_grad")
                     .Input("X")
                     .Input("Index")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("gather_nd", "cpu", GatherNdKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES);
TIDE_REGISTER_KERNEL("gather_nd_grad", "cpu", GatherNdGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("one_hot")
                     .NoGradient()
                     .Comment("Out[..., X] = 1, else 0: X's int ids [..., 1] as [..., depth].")
                     .Input("X", "int32/int64 ids, [..., 1]")
                     .Output("Out", "[..., depth]")
                     .RequiredAttr("depth", TIDE_ATTR_INT, "the number of classes")
                     .Attr("dtype", int32_t(TIDE_FP32), "Out's type (TideDataType)")
                     .Attr("allow_out_of_range", false, "an id outside [0, depth) gives a zero row")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(OneHotInferShape));
TIDE_REGISTER_KERNEL("one_hot", "cpu", OneHotKernel, float, double, int32_t, int64_t);
TIDE_REGISTER_OP(
    tide::OpSchema("one_hot_v2")
        .NoGradient()
        .Comment("Out[..., X] = 1, else 0: X's int ids [...] as [..., depth] (F.one_hot).")
        .Input("X", "int32/int64 ids, any dims")
        .Input("depth_tensor", "depth as an int tensor of one value (optional; over depth)")
        .AsDispensable()
        .Output("Out", "X's dims and [depth]")
        .Attr("depth", int32_t(-1), "the number of classes")
        .Attr("dtype", int32_t(TIDE_FP32), "Out's type (TideDataType)")
        .Attr("allow_out_of_range", false, "an id outside [0, depth) gives a zero row")
        .KernelDataTypeFrom("attr:dtype")
        .InferShape(OneHotV2InferShape));
TIDE_REGISTER_KERNEL("one_hot_v2", "cpu", OneHotV2Kernel, float, double, int32_t, int64_t);

TIDE_REGISTER_OP(
    tide::OpSchema("arg_max")
        .NoGradient()
        .Comment("Out = the index of the largest element along axis (the first of ties).")
        .Input("X", "the input")
        .Output("Out", "the indices")
        .Attr("axis", int64_t(-1), "the axis")
        .Attr("keepdims", false, "keep axis as 1")
        .Attr("dtype", int32_t(TIDE_INT64), "int32 or int64 (TideDataType; -1: int64)")
        .Attr("flatten", false, "Paddle: the index into the flattened X")
        .KernelDataTypeFrom("X")
        .InferShape(ArgInferShape));
TIDE_REGISTER_OP(
    tide::OpSchema("arg_min")
        .NoGradient()
        .Comment("Out = the index of the smallest element along axis (the first of ties).")
        .Input("X", "the input")
        .Output("Out", "the indices")
        .Attr("axis", int64_t(-1), "the axis")
        .Attr("keepdims", false, "keep axis as 1")
        .Attr("dtype", int32_t(TIDE_INT64), "int32 or int64 (TideDataType; -1: int64)")
        .Attr("flatten", false, "Paddle: the index into the flattened X")
        .KernelDataTypeFrom("X")
        .InferShape(ArgInferShape));
TIDE_REGISTER_KERNEL("arg_max", "cpu", ArgMaxKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("arg_min", "cpu", ArgMinKernel, OPS_NN_MOVE_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("argsort")
                     .Comment("Out = X sorted along axis (stable), Indices = where each came from.")
                     .Input("X", "the input")
                     .Output("Out", "sorted X")
                     .Output("Indices", "int64 positions")
                     .Attr("axis", int32_t(-1), "the axis")
                     .Attr("descending", false, "largest first")
                     .InferShape([](tide::InferShapeContext& c) {
                       NormAxis(c.op_type(), c.Attr<int32_t>("axis"), c.InputDims("X").size());
                       c.SetOutputDims("Out", c.InputDims("X"));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.SetOutputDims("Indices", c.InputDims("X"));
                       c.SetOutputDataType("Indices", TIDE_INT64);
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("argsort_grad")
                           .Input("X", g.Input("X"))
                           .Input("Indices", g.Output("Indices"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("argsort_grad")
                     .Input("X")
                     .Input("Indices")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", int32_t(-1))
                     .Attr("descending", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("argsort", "cpu", ArgsortKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("argsort_grad", "cpu", ArgsortGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("where_index")
        .NoGradient()
        .Comment("Out = the coordinates of Condition's nonzero (true) elements, int64 [count, "
                 "rank].")
        .Input("Condition", "bool, uint8, int8, int32, int64, float or double")
        .Output("Out", "int64 [count, rank(Condition)]")
        .InferShape([](tide::InferShapeContext& c) {
          c.SetOutputDims("Out", {-1, static_cast<int64_t>(c.InputDims("Condition").size())});
          c.SetOutputDataType("Out", TIDE_INT64);
        }));
TIDE_REGISTER_KERNEL("where_index", "cpu", WhereIndexKernelT, OPS_NN_BYTE_TYPES, OPS_NN_MOVE_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("range")
        .NoGradient()
        .Comment("Out = [Start, Start + Step, ...) below End (above, for a negative Step).")
        .Input("Start", "one element")
        .Input("End", "one element")
        .Input("Step", "one element")
        .Output("Out", "1-D")
        .InferShape([](tide::InferShapeContext& c) {
          c.SetOutputDims("Out", {-1});
          c.SetOutputDataType("Out", c.InputDataType("Start"));
        }));
TIDE_REGISTER_KERNEL("range", "cpu", RangeKernel, OPS_NN_MOVE_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("shape")
                     .NoGradient()
                     .Comment("Out = Input's dims, int32.")
                     .Input("Input", "any tensor")
                     .Output("Out", "int32 [rank]")
                     .Attr("mkldnn_data_type", std::string("float32"),
                           "Paddle oneDNN hint "
                           "(ignored)")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {static_cast<int64_t>(c.InputDims("Input").size())});
                       c.SetOutputDataType("Out", TIDE_INT32);
                     }));
TIDE_REGISTER_KERNEL("shape", "cpu", ShapeKernel, float, double, int32_t, int64_t, bool,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("cumsum")
        .Comment("Out = the running sum of X along axis (exclusive: without the element "
                 "itself; reverse: from the end; flatten: over all of X, 1-D).")
        .Input("X", "the input")
        .Output("Out", "the running sums")
        .Attr("axis", int32_t(-1), "the axis")
        .Attr("exclusive", false, "leave each element out")
        .Attr("reverse", false, "sum from the end")
        .Attr("flatten", false, "over the flattened X")
        .InferShape([](tide::InferShapeContext& c) {
          Dims x = c.InputDims("X");
          if (c.Attr<bool>("flatten"))
            x = {DimsProductOrUnknown(x)};
          else
            NormAxis(c.op_type(), c.Attr<int32_t>("axis"), x.size());
          c.SetOutputDims("Out", x);
          c.SetOutputDataType("Out", c.InputDataType("X"));
        })
        .Grad([](tide::GradMaker& g) {  // the adjoint: the same sum run the other way
          g.NewOp("cumsum")
              .Input("X", g.OutputGrad("Out"))
              .Output("Out", g.InputGrad("X"))
              .Attr("axis", g.Attr<int32_t>("axis"))
              .Attr("exclusive", g.Attr<bool>("exclusive"))
              .Attr("reverse", !g.Attr<bool>("reverse"))
              .Attr("flatten", g.Attr<bool>("flatten"));
        }));
TIDE_REGISTER_KERNEL("cumsum", "cpu", CumsumKernel, OPS_NN_MOVE_TYPES);
