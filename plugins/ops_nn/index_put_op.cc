// index_put_op.cc: Paddle's index_put (paddle.index_put, x[indices] = value): out = x with value
// written (accumulate: added) at the positions `indices` name. indices: one tensor per leading
// dim of x, int32/int64 (broadcast together numpy-style; negative: from the end) or bool (a mask
// over as many dims as it has, read as its non-zero positions); the dims they do not cover are
// taken whole. value broadcasts to the indexed shape (the indices' broadcast dims, then x's
// uncovered dims). A position written twice keeps the last value (accumulate: the sum).
// The grad: x@GRAD = out@GRAD (0 at the written positions unless accumulate), value@GRAD = the
// sum of out@GRAD at those positions over the dims value was broadcast along.
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// The written positions: x's flat offset of each indexed slice, the slice's length, and the
// indexed shape (what value broadcasts to).
struct PutPositions {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
  Dims indexed;
};

// One index per covered dim of x, as int64 values with dims (a bool mask becomes one per dim).
struct DimIndex {
  std::vector<int64_t> values;
  Dims dims;
  std::string name;
};

std::vector<DimIndex> ReadIndices(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  std::vector<DimIndex> out;
  for (size_t i = 0; i < ctx.InputCount("indices"); ++i) {
    Tensor t = ctx.Input("indices", i);
    const std::string name =
        "indices[" + std::to_string(i) + "] ('" + ctx.InputName("indices", i) + "')";
    if (t.dtype() == TIDE_BOOL) {
      const Dims md = t.dims();
      const bool* m = t.data<bool>();
      std::vector<DimIndex> per_dim(md.size());
      std::vector<int64_t> idx(md.size(), 0);
      for (int64_t e = 0; e < t.numel(); ++e) {
        if (m[e])
          for (size_t d = 0; d < md.size(); ++d) per_dim[d].values.push_back(idx[d]);
        for (size_t d = md.size(); d-- > 0;)
          if (++idx[d] < md[d])
            break;
          else
            idx[d] = 0;
      }
      for (auto& p : per_dim) {
        p.dims = {static_cast<int64_t>(p.values.size())};
        p.name = name;
        out.push_back(std::move(p));
      }
      continue;
    }
    TIDE_CHECK(t.dtype() == TIDE_INT32 || t.dtype() == TIDE_INT64, "op '", op, "': ", name,
               " must be int32, int64 or bool, got ", tide::DataTypeName(t.dtype()));
    out.push_back({IntValues(ctx, "indices", i), t.dims(), name});
  }
  return out;
}

PutPositions GetPositions(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const std::vector<DimIndex> ind = ReadIndices(ctx);
  TIDE_CHECK(!ind.empty(), "op '", op, "': indices is empty; expected at least one index tensor");
  TIDE_CHECK(ind.size() <= x.size(), "op '", op, "': indices cover ", ind.size(),
             " dims, more than x ", tide::ToString(x), " has");
  // The indices' broadcast dims, numpy's rule.
  Dims b;
  for (const auto& d : ind) {
    const size_t r = std::max(b.size(), d.dims.size());
    Dims next(r, 1);
    for (size_t i = 0; i < r; ++i) {
      const int64_t p = i + b.size() >= r ? b[i + b.size() - r] : 1;
      const int64_t q = i + d.dims.size() >= r ? d.dims[i + d.dims.size() - r] : 1;
      TIDE_CHECK(p == q || p == 1 || q == 1, "op '", op, "': ", d.name, " ", tide::ToString(d.dims),
                 " does not broadcast with the indices before it (", tide::ToString(b), ")");
      next[i] = p == 1 ? q : p;
    }
    b = next;
  }
  PutPositions pos;
  pos.indexed = b;
  for (size_t d = ind.size(); d < x.size(); ++d) {
    pos.slice *= x[d];
    pos.indexed.push_back(x[d]);
  }
  std::vector<int64_t> stride(x.size(), 1);
  for (size_t d = x.size(); d-- > 1;) stride[d - 1] = stride[d] * x[d];
  const int64_t n = DimsProduct(b);
  pos.offsets.assign(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < ind.size(); ++k) {
    const auto bi = tide::ops::GetNumpyBroadcast(op, b, ind[k].dims);
    int64_t unused, j;
    for (int64_t e = 0; e < n; ++e) {
      bi.Index(e, &unused, &j);
      int64_t v = ind[k].values[j];
      TIDE_CHECK(v >= -x[k] && v < x[k], "op '", op, "': ", ind[k].name, " holds ", v,
                 ", out of range [", -x[k], ", ", x[k], ") of x ", tide::ToString(x), " at dim ",
                 k);
      if (v < 0) v += x[k];
      pos.offsets[e] += v * stride[k];
    }
  }
  return pos;
}

// fn(offset in x, element of value) for each indexed element, in order.
template <typename F>
void ForEachPut(const KernelContext& ctx, const PutPositions& pos, const Dims& value, F&& fn) {
  const char* op = ctx.op_type();
  bool fits = value.size() <= pos.indexed.size();
  for (size_t i = 0; fits && i < value.size(); ++i) {
    const int64_t want = pos.indexed[pos.indexed.size() - value.size() + i];
    fits = value[i] == want || value[i] == 1;
  }
  TIDE_CHECK(fits, "op '", op, "': value ('", ctx.InputName("value"), "') ", tide::ToString(value),
             " does not broadcast to the indexed shape ", tide::ToString(pos.indexed));
  const auto b = tide::ops::GetNumpyBroadcast(op, pos.indexed, value);
  int64_t unused, vi;
  for (size_t k = 0; k < pos.offsets.size(); ++k)
    for (int64_t q = 0; q < pos.slice; ++q) {
      b.Index(static_cast<int64_t>(k) * pos.slice + q, &unused, &vi);
      fn(pos.offsets[k] + q, vi);
    }
}

template <typename T>
void IndexPutKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x"), value = ctx.Input("value");
  const PutPositions pos = GetPositions(ctx, x.dims());
  const bool accumulate = ctx.Attr<bool>("accumulate");
  const T* xd = x.data<T>();
  const T* vd = value.data<T>();
  T* o = ctx.Output("out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(xd, xd + x.numel(), o);
  ForEachPut(ctx, pos, value.dims(), [&](int64_t xi, int64_t vi) {
    if (accumulate)
      o[xi] += vd[vi];
    else
      o[xi] = vd[vi];
  });
}

template <typename T>
void IndexPutGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x"), dout = ctx.Input(GradVarName("out").c_str());
  TIDE_CHECK(dout.dims() == x.dims(), "op '", ctx.op_type(), "': out@GRAD ",
             tide::ToString(dout.dims()), " differs from x ", tide::ToString(x.dims()));
  const PutPositions pos = GetPositions(ctx, x.dims());
  const bool accumulate = ctx.Attr<bool>("accumulate");
  const Dims vdims = ctx.Input("value").dims();
  const T* g = dout.data<T>();
  const std::string dx_name = GradVarName("x"), dv_name = GradVarName("value");
  if (ctx.HasOutput(dv_name.c_str())) {
    T* dv = ctx.Output(dv_name.c_str()).mutable_data<T>(vdims, ctx.place());
    std::fill(dv, dv + DimsProduct(vdims), T(0));
    ForEachPut(ctx, pos, vdims, [&](int64_t xi, int64_t vi) { dv[vi] += g[xi]; });
  }
  if (ctx.HasOutput(dx_name.c_str())) {
    T* dx = ctx.Output(dx_name.c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::copy(g, g + dout.numel(), dx);
    if (!accumulate) ForEachPut(ctx, pos, vdims, [&](int64_t xi, int64_t) { dx[xi] = T(0); });
  }
}

void IndexPutInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType x = ctx.InputDataType("x"), v = ctx.InputDataType("value");
  TIDE_CHECK(x == TIDE_UNDEFINED || v == TIDE_UNDEFINED || x == v, "op '", op, "': value ('",
             ctx.InputName("value"), "') must be x's type ", tide::DataTypeName(x), ", got ",
             tide::DataTypeName(v));
  ctx.SetOutputDims("out", ctx.InputDims("x"));
  ctx.SetOutputDataType("out", x);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("index_put")
                     .Comment("out = x with value written (accumulate: added) at indices "
                              "(paddle.index_put).")
                     .Input("x", "the input")
                     .Input("indices",
                            "int32/int64 (broadcast together) or bool masks, one per "
                            "leading dim of x")
                     .AsDuplicable()
                     .Input("value", "broadcast to the indexed shape")
                     .Output("out", "x's dims")
                     .Attr("accumulate", false, "add value instead of writing it")
                     .KernelDataTypeFrom("x")
                     .InferShape(IndexPutInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("index_put_grad")
                           .Input("x", g.Input("x"))
                           .Input("indices", g.Input("indices"))
                           .Input("value", g.Input("value"))
                           .Input(GradVarName("out"), g.OutputGrad("out"))
                           .Output(GradVarName("x"), g.InputGrad("x"))
                           .Output(GradVarName("value"), g.InputGrad("value"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("index_put_grad")
                     .Comment("x@GRAD = out@GRAD (0 where written unless accumulate); "
                              "value@GRAD = out@GRAD at indices, summed to value's dims.")
                     .Input("x")
                     .Input("indices")
                     .AsDuplicable()
                     .Input("value")
                     .Input(GradVarName("out"))
                     .Output(GradVarName("x"))
                     .Output(GradVarName("value"))
                     .Attr("accumulate", false)
                     .KernelDataTypeFrom("x")
                     .InferShape(GradLike({"x", "value"})));
TIDE_REGISTER_KERNEL("index_put", "cpu", IndexPutKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("index_put_grad", "cpu", IndexPutGradKernel, OPS_NN_FLOAT_TYPES);
