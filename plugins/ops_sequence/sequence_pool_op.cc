// sequence_pool_op.cc: sequence_pool (each sequence of the last LoD level pooled to one row:
// SUM, AVERAGE, SQRT, MAX, LAST, FIRST; an empty sequence gives pad_value) and its grad.
#include <cmath>
#include <limits>

#include "common.h"

namespace ops_sequence {
namespace {

enum class Pool { kSum, kAverage, kSqrt, kMax, kLast, kFirst };

Pool PoolOf(const char* op, const std::string& s) {
  if (s == "SUM") return Pool::kSum;
  if (s == "AVERAGE") return Pool::kAverage;
  if (s == "SQRT") return Pool::kSqrt;
  if (s == "MAX") return Pool::kMax;
  if (s == "LAST") return Pool::kLast;
  if (s == "FIRST") return Pool::kFirst;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': pooltype '", s,
             "' is not one of SUM, AVERAGE, SQRT, MAX, LAST, FIRST");
}

// Out's LoD: the levels above the pooled one.
LoD OuterLoD(const LoD& lod) { return LoD(lod.begin(), lod.end() - 1); }

template <typename T>
void SequencePoolKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const LoD lod = InputLoD(ctx, "X", 2);
  const Level& level = lod.back();
  const Pool pool = PoolOf(op, ctx.Attr<std::string>("pooltype"));
  const T pad = static_cast<T>(ctx.Attr<float>("pad_value"));
  const int64_t n = static_cast<int64_t>(level.size()) - 1, w = RowWidth(x.dims());
  const Dims od = WithRows(x.dims(), n);
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(od, ctx.place());
  out.set_lod(OuterLoD(lod));
  int32_t* idx = nullptr;
  if (pool == Pool::kMax) {
    TIDE_CHECK(ctx.HasOutput("MaxIndex"), "op '", op, "': pooltype MAX needs output MaxIndex");
    Tensor mi = ctx.Output("MaxIndex");
    idx = mi.mutable_data<int32_t>(od, ctx.place());
  }
  for (int64_t s = 0; s < n; ++s) {
    const int64_t b = static_cast<int64_t>(level[s]), e = static_cast<int64_t>(level[s + 1]);
    T* row = o + s * w;
    if (b == e) {  // an empty sequence
      std::fill(row, row + w, pad);
      if (idx) std::fill(idx + s * w, idx + (s + 1) * w, -1);
      continue;
    }
    switch (pool) {
      case Pool::kSum:
      case Pool::kAverage:
      case Pool::kSqrt: {
        std::fill(row, row + w, T(0));
        for (int64_t r = b; r < e; ++r)
          for (int64_t k = 0; k < w; ++k) row[k] += xd[r * w + k];
        T div = pool == Pool::kSum ? T(1) : pool == Pool::kAverage ? T(e - b) : std::sqrt(T(e - b));
        if (pool != Pool::kSum)
          for (int64_t k = 0; k < w; ++k) row[k] /= div;
        break;
      }
      case Pool::kMax:
        for (int64_t k = 0; k < w; ++k) {
          int64_t best = b;
          for (int64_t r = b + 1; r < e; ++r)
            if (xd[r * w + k] > xd[best * w + k]) best = r;
          row[k] = xd[best * w + k];
          idx[s * w + k] = static_cast<int32_t>(best);
        }
        break;
      case Pool::kLast:
        std::copy(xd + (e - 1) * w, xd + e * w, row);
        break;
      case Pool::kFirst:
        std::copy(xd + b * w, xd + (b + 1) * w, row);
        break;
    }
  }
}

template <typename T>
void SequencePoolGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const LoD lod = InputLoD(ctx, "X", 2);
  const Level& level = lod.back();
  const Pool pool = PoolOf(op, ctx.Attr<std::string>("pooltype"));
  const int64_t n = static_cast<int64_t>(level.size()) - 1, w = RowWidth(x.dims());
  TIDE_CHECK(dout.numel() == n * w, "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not hold ", n, " rows of ", w, " (one per sequence of X's LoD ", LoDString(lod),
             ")");
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  std::fill(d, d + x.numel(), T(0));
  const int32_t* idx = nullptr;
  if (pool == Pool::kMax) {
    TIDE_CHECK(ctx.HasInput("MaxIndex"), "op '", op, "': pooltype MAX needs input MaxIndex");
    Tensor mi = ctx.Input("MaxIndex");
    TIDE_CHECK(mi.numel() == n * w, "op '", op, "': MaxIndex ", tide::ToString(mi.dims()),
               " does not match ", n, " sequences of width ", w);
    idx = mi.data<int32_t>();
  }
  for (int64_t s = 0; s < n; ++s) {
    const int64_t b = static_cast<int64_t>(level[s]), e = static_cast<int64_t>(level[s + 1]);
    if (b == e) continue;
    const T* gr = g + s * w;
    switch (pool) {
      case Pool::kSum:
      case Pool::kAverage:
      case Pool::kSqrt: {
        T scale = pool == Pool::kSum       ? T(1)
                  : pool == Pool::kAverage ? T(1) / T(e - b)
                                           : T(1) / std::sqrt(T(e - b));
        for (int64_t r = b; r < e; ++r)
          for (int64_t k = 0; k < w; ++k) d[r * w + k] = gr[k] * scale;
        break;
      }
      case Pool::kMax:
        for (int64_t k = 0; k < w; ++k) {
          const int64_t r = idx[s * w + k];
          TIDE_CHECK(r >= b && r < e, "op '", op, "': MaxIndex ", r, " of sequence ", s,
                     " is outside its rows [", b, ", ", e, ")");
          d[r * w + k] += gr[k];
        }
        break;
      case Pool::kLast:
        std::copy(gr, gr + w, d + (e - 1) * w);
        break;
      case Pool::kFirst:
        std::copy(gr, gr + w, d + b * w);
        break;
    }
  }
}

void SequencePoolShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  PoolOf(op, ctx.Attr<std::string>("pooltype"));
  Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", op, "': X ('", ctx.InputName("X"), "') must have rank >= 1");
  if (ctx.IsRuntime()) return;  // the kernel sizes Out from X's LoD
  // Rows: the number of sequences, known only at run time.
  ctx.SetOutputDims("Out", WithRows(x, -1));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("MaxIndex")) {
    ctx.SetOutputDims("MaxIndex", WithRows(x, -1));
    ctx.SetOutputDataType("MaxIndex", TIDE_INT32);
  }
}

tide::OpSchema PoolAttrs(tide::OpSchema s) {
  return s.Attr("pooltype", std::string("AVERAGE"), "SUM, AVERAGE, SQRT, MAX, LAST or FIRST")
      .InSet({"SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"})
      .Attr("is_test", false, "accepted for Fluid compatibility")
      .Attr("pad_value", 0.0f, "Out's row for an empty sequence");
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(PoolAttrs(tide::OpSchema("sequence_pool"))
                     .Comment("Out[i] = pool of the rows of sequence i of X's last LoD level; Out "
                              "keeps the levels above it.")
                     .Input("X", "a LoDTensor with 1 or 2 LoD levels")
                     .Output("Out", "one row per sequence")
                     .Output("MaxIndex", "int32: the row each MAX came from (needed for MAX)")
                     .AsIntermediate()
                     .AsDispensable()
                     .InferShape(SequencePoolShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("sequence_pool_grad");
                       op.Input("X", g.Input("X"));
                       if (g.Attr<std::string>("pooltype") == "MAX")
                         op.Input("MaxIndex", g.Output("MaxIndex"));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(PoolAttrs(tide::OpSchema("sequence_pool_grad"))
                     .Input("X")
                     .Input("MaxIndex")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_pool", "cpu", SequencePoolKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sequence_pool_grad", "cpu", SequencePoolGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
