// segment_pool_op.cc: Paddle's segment_pool (paddle.geometric.segment_sum / _mean / _max / _min):
// the rows of X [N, ...] pooled by sorted SegmentIds [N] into Out [SegmentIds[N - 1] + 1, ...];
// a segment without rows is 0 (MAX / MIN too). SummedIds [segments, 1] holds each segment's number
// of rows (Paddle's GPU kernel writes it for MEAN; its CPU kernel leaves it unset). The grad:
// Out@GRAD of its segment to each row (divided by the segment's rows for MEAN; for MAX / MIN only
// to the rows equal to the result, every tie getting it, as Paddle's). Unsorted or negative ids
// are refused naming the position.
#include "common.h"

namespace ops_graph {
namespace {

// The checked segment ids of X's rows (sorted, >= 0, one per row).
std::vector<int64_t> ReadSegmentIds(const KernelContext& ctx, const Dims& x) {
  Tensor ids = ctx.Input("SegmentIds");
  const Dims d = ids.dims();
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", ctx.op_type(),
             "': SegmentIds ('", ctx.InputName("SegmentIds"),
             "') must be 1-D (or [N, 1]), but its dims are ", tide::ToString(d));
  TIDE_CHECK(d[0] == x[0], "op '", ctx.op_type(), "': SegmentIds ('", ctx.InputName("SegmentIds"),
             "') has ", d[0], " ids but X ('", ctx.InputName("X"), "') ", tide::ToString(x),
             " has ", x[0], " rows");
  std::vector<int64_t> v = IntValues(ctx, "SegmentIds");
  for (size_t i = 0; i < v.size(); ++i) {
    TIDE_CHECK(v[i] >= 0, "op '", ctx.op_type(), "': SegmentIds ('", ctx.InputName("SegmentIds"),
               "')[", i, "] = ", v[i], " is negative");
    TIDE_CHECK(i == 0 || v[i] >= v[i - 1], "op '", ctx.op_type(), "': SegmentIds ('",
               ctx.InputName("SegmentIds"), "') must be sorted, but [", i - 1, "] = ", v[i - 1],
               " > [", i, "] = ", v[i]);
  }
  return v;
}

void CheckX(const char* op, const Dims& x) {
  TIDE_CHECK(!x.empty(), "op '", op, "': X must have at least one dim (rows), but it is 0-D");
}

template <typename T>
void SegmentPoolKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims xd = x.dims();
  CheckX(ctx.op_type(), xd);
  const std::vector<int64_t> ids = ReadSegmentIds(ctx, xd);
  const Reduce reduce = ParseReduce(ctx.Attr<std::string>("pooltype"));
  const int64_t segments = ids.empty() ? 0 : ids.back() + 1, len = DimsProduct(xd, 1, xd.size());
  Dims od = xd;
  od[0] = segments;
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  std::vector<int32_t> count(segments);
  const T* xs = x.data<T>();
  ReduceMessages<T>(
      reduce, ids, segments, len, [&](int64_t i, int64_t j) { return xs[i * len + j]; }, out,
      count.data());
  if (Tensor summed = ctx.OptionalOutput("SummedIds")) {
    T* s = summed.mutable_data<T>(Dims{segments, 1}, ctx.place());
    for (int64_t i = 0; i < segments; ++i) s[i] = static_cast<T>(count[i]);
  }
}

template <typename T>
void SegmentPoolGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  const Dims xd = x.dims();
  CheckX(ctx.op_type(), xd);
  const std::vector<int64_t> ids = ReadSegmentIds(ctx, xd);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), out.dims());
  const Reduce reduce = ParseReduce(ctx.Attr<std::string>("pooltype"));
  const int64_t len = DimsProduct(xd, 1, xd.size());
  const int64_t segments = ids.empty() ? 0 : ids.back() + 1;
  TIDE_CHECK(out.dims().size() == xd.size() && out.dims()[0] == segments, "op '", ctx.op_type(),
             "': Out ", tide::ToString(out.dims()), " does not hold the ", segments,
             " segments of SegmentIds");
  std::vector<int32_t> count(segments, 0);
  for (int64_t id : ids) ++count[id];
  const T *xs = x.data<T>(), *os = out.data<T>(), *g = dout.data<T>();
  T* dx = ZeroedGrad<T>(ctx, "X", xd);
  if (!dx) return;
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t j = 0; j < len; ++j) {
      const int64_t o = ids[i] * len + j;
      dx[i * len + j] = g[o] * MessageWeight(reduce, xs[i * len + j], os[o], count[ids[i]]);
    }
}

void SegmentPoolInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  CheckX(ctx.op_type(), x);
  const TideDataType t = ctx.InputDataType("SegmentIds");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': SegmentIds ('", ctx.InputName("SegmentIds"), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
  const Dims ids = ctx.InputDims("SegmentIds");
  TIDE_CHECK(ids.size() == 1 || (ids.size() == 2 && (ids[1] == 1 || ids[1] < 0)), "op '",
             ctx.op_type(), "': SegmentIds ('", ctx.InputName("SegmentIds"),
             "') must be 1-D (or [N, 1]), but its dims are ", tide::ToString(ids));
  TIDE_CHECK(tide::ops::DimsCompatible(ids[0], x[0]), "op '", ctx.op_type(), "': SegmentIds ('",
             ctx.InputName("SegmentIds"), "') ", tide::ToString(ids),
             " must have one id per row of X ('", ctx.InputName("X"), "') ", tide::ToString(x));
  Dims od = x;
  od[0] = -1;  // the last id + 1, known when the kernel runs
  ctx.SetOutputDims("Out", od);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("SummedIds")) {
    ctx.SetOutputDims("SummedIds", Dims{-1, 1});
    ctx.SetOutputDataType("SummedIds", ctx.InputDataType("X"));
  }
}

}  // namespace
}  // namespace ops_graph

using namespace ops_graph;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("segment_pool")
                     .Comment("Out[s] = the pooled rows of X whose SegmentIds are s "
                              "(paddle.geometric.segment_sum / mean / max / min); an empty "
                              "segment is 0.")
                     .Input("X", "[N, ...]")
                     .Input("SegmentIds", "int32/int64 [N], sorted, >= 0")
                     .Output("Out", "[SegmentIds[N - 1] + 1, ...]")
                     .Output("SummedIds", "[segments, 1]: each segment's number of rows")
                     .AsIntermediate()
                     .Attr("pooltype", std::string("SUM"), "SUM, MEAN, MAX or MIN")
                     .InSet(ReduceNames())
                     .KernelDataTypeFrom("X")
                     .InferShape(SegmentPoolInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("segment_pool_grad")
                           .Input("X", g.Input("X"))
                           .Input("SegmentIds", g.Input("SegmentIds"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("segment_pool_grad")
                     .Input("X")
                     .Input("SegmentIds")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("pooltype", std::string("SUM"))
                     .InSet(ReduceNames())
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       GradsLikeInputs(ctx, {"X"});
                     }));
TIDE_REGISTER_KERNEL("segment_pool", "cpu", SegmentPoolKernel, OPS_GRAPH_FEATURE_TYPES);
TIDE_REGISTER_KERNEL("segment_pool_grad", "cpu", SegmentPoolGradKernel, OPS_GRAPH_FLOAT_TYPES);
