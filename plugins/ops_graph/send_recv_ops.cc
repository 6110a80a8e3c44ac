// send_recv_ops.cc: Paddle's message passing to nodes, send_u_recv (paddle.geometric.send_u_recv:
// the message of edge e is X[Src_index[e]]) and send_ue_recv (paddle.geometric.send_ue_recv: X's
// row times / plus the edge's row Y[e], their feature dims broadcast numpy-style), each message
// reduced into Out[Dst_index[e]] by SUM, MEAN, MAX or MIN; rows no edge reaches are 0. Out has
// Out_size's (or attribute out_size's) rows, X's when that is <= 0. Dst_count [rows] (int32) holds
// each row's number of messages (Paddle writes it for MEAN). The grads: each message's share of
// Out@GRAD (1, 1 / count for MEAN, and for MAX / MIN 1 where the message equals the result, every
// tie getting it, as Paddle's) back to X's row (times Y for MUL) and to Y's row (times X for MUL),
// summed over broadcast dims. Indices out of range are refused naming the input and position.
#include "common.h"

namespace ops_graph {
namespace {

// Everything a send_*_recv kernel reads, checked: the indices, the rows of Out and the pairing of
// X's and Y's features (X with itself for send_u_recv).
struct SendRecvArgs {
  Dims x, y, out;
  std::vector<int64_t> src, dst;
  int64_t rows = 0;
  FeaturePairing f;
  Reduce reduce = Reduce::kSum;
  bool mul = false;
};

SendRecvArgs ReadSendRecv(const KernelContext& ctx, bool with_y, int64_t rows_if_known = -1) {
  SendRecvArgs a;
  a.x = ctx.Input("X").dims();
  TIDE_CHECK(!a.x.empty(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') must have at least one dim (rows), but it is 0-D");
  a.y = with_y ? ctx.Input("Y").dims() : a.x;
  a.reduce = ParseReduce(ctx.Attr<std::string>("reduce_op"));
  a.mul = with_y && ctx.Attr<std::string>("message_op") == "MUL";
  a.rows = rows_if_known >= 0 ? rows_if_known : OutRows(ctx, a.x[0]);
  a.src = ReadIndex(ctx, "Src_index", a.x[0], "X");
  a.dst = ReadIndex(ctx, "Dst_index", a.rows, "Out");
  TIDE_CHECK(a.src.size() == a.dst.size(), "op '", ctx.op_type(), "': Src_index ('",
             ctx.InputName("Src_index"), "') has ", a.src.size(), " edges but Dst_index ('",
             ctx.InputName("Dst_index"), "') has ", a.dst.size());
  if (with_y)
    TIDE_CHECK(!a.y.empty() && a.y[0] == static_cast<int64_t>(a.src.size()), "op '", ctx.op_type(),
               "': Y ('", ctx.InputName("Y"), "') ", tide::ToString(a.y),
               " must have one row per edge (", a.src.size(), ")");
  a.f = PairFeatures(ctx.op_type(), "X", a.x, "Y", a.y);
  a.out = a.f.out;
  a.out.insert(a.out.begin(), a.rows);
  return a;
}

template <typename T>
T Message(const SendRecvArgs& a, bool with_y, T xv, T yv) {
  return !with_y ? xv : a.mul ? xv * yv : xv + yv;
}

template <typename T, bool kWithY>
void SendRecvKernel(KernelContext& ctx) {
  const SendRecvArgs a = ReadSendRecv(ctx, kWithY);
  const T* x = ctx.Input("X").data<T>();
  const T* y = kWithY ? ctx.Input("Y").data<T>() : x;
  const FeaturePairing& f = a.f;
  T* out = ctx.Output("Out").mutable_data<T>(a.out, ctx.place());
  std::vector<int32_t> count(a.rows);
  ReduceMessages<T>(
      a.reduce, a.dst, a.rows, f.out_len,
      [&](int64_t e, int64_t j) {
        return Message<T>(a, kWithY, x[a.src[e] * f.x_len + f.xo[j]],
                          y[(kWithY ? e : a.src[e]) * f.y_len + f.yo[j]]);
      },
      out, count.data());
  if (Tensor c = ctx.OptionalOutput("Dst_count"))
    std::copy(count.begin(), count.end(), c.mutable_data<int32_t>(Dims{a.rows}, ctx.place()));
}

template <typename T, bool kWithY>
void SendRecvGradKernel(KernelContext& ctx) {
  Tensor out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(!out.dims().empty(), "op '", ctx.op_type(), "': Out must have rows");
  const SendRecvArgs a = ReadSendRecv(ctx, kWithY, out.dims()[0]);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), a.out);
  tide::ops::CheckGradDims(ctx.op_type(), "Out", out.dims(), a.out);
  const T* x = ctx.Input("X").data<T>();
  const T* y = kWithY ? ctx.Input("Y").data<T>() : x;
  const T *o = out.data<T>(), *g = dout.data<T>();
  const FeaturePairing& f = a.f;
  T* dx = ZeroedGrad<T>(ctx, "X", a.x);
  T* dy = kWithY ? ZeroedGrad<T>(ctx, "Y", a.y) : nullptr;
  std::vector<int32_t> count(a.rows, 0);
  for (int64_t d : a.dst) ++count[d];
  for (size_t e = 0; e < a.src.size(); ++e) {
    const int64_t xr = a.src[e] * f.x_len, yr = (kWithY ? e : a.src[e]) * f.y_len,
                  orow = a.dst[e] * f.out_len;
    for (int64_t j = 0; j < f.out_len; ++j) {
      const T xv = x[xr + f.xo[j]], yv = y[yr + f.yo[j]];
      const T w = g[orow + j] * MessageWeight(a.reduce, Message<T>(a, kWithY, xv, yv), o[orow + j],
                                              count[a.dst[e]]);
      if (dx) dx[xr + f.xo[j]] += a.mul ? w * yv : w;
      if (dy) dy[yr + f.yo[j]] += a.mul ? w * xv : w;
    }
  }
}

template <typename T>
void SendURecvKernel(KernelContext& ctx) {
  SendRecvKernel<T, false>(ctx);
}
template <typename T>
void SendUERecvKernel(KernelContext& ctx) {
  SendRecvKernel<T, true>(ctx);
}
template <typename T>
void SendURecvGradKernel(KernelContext& ctx) {
  SendRecvGradKernel<T, false>(ctx);
}
template <typename T>
void SendUERecvGradKernel(KernelContext& ctx) {
  SendRecvGradKernel<T, true>(ctx);
}

template <bool kWithY>
void SendRecvInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') must have at least one dim (rows), but it is 0-D");
  const int64_t es = CheckIndexInput(ctx, "Src_index"), ed = CheckIndexInput(ctx, "Dst_index");
  TIDE_CHECK(tide::ops::DimsCompatible(es, ed), "op '", ctx.op_type(), "': Src_index ('",
             ctx.InputName("Src_index"), "') has ", es, " edges but Dst_index ('",
             ctx.InputName("Dst_index"), "') has ", ed);
  Dims feat(x.begin() + 1, x.end());
  if (kWithY) {
    const Dims y = ctx.InputDims("Y");
    TIDE_CHECK(!y.empty() && tide::ops::DimsCompatible(y[0], es), "op '", ctx.op_type(), "': Y ('",
               ctx.InputName("Y"), "') ", tide::ToString(y), " must have one row per edge (", es,
               ")");
    feat = BroadcastFeatureDims(ctx.op_type(), "X", x, "Y", y);
  }
  if (ctx.HasInput("Out_size")) {
    const TideDataType t = ctx.InputDataType("Out_size");
    TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
               "': Out_size ('", ctx.InputName("Out_size"), "') must be int32 or int64, got ",
               tide::DataTypeName(t));
  }
  const int64_t rows = OutRowsAtCompileTime(ctx, x[0]);
  Dims out = feat;
  out.insert(out.begin(), rows);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  if (ctx.HasOutput("Dst_count")) {
    ctx.SetOutputDims("Dst_count", Dims{rows});
    ctx.SetOutputDataType("Dst_count", TIDE_INT32);
  }
}

tide::OpSchema SendRecvSchema(const char* type, bool with_y) {
  tide::OpSchema s(type);
  s.Input("X", "node features [N, ...]");
  if (with_y) s.Input("Y", "edge features [E, ...], broadcast with X's features");
  s.Input("Src_index", "int32/int64 [E]: the row of X each edge sends")
      .Input("Dst_index", "int32/int64 [E]: the row of Out each edge reaches")
      .Input("Out_size", "int32/int64 [1]: Out's rows (<= 0: X's); out_size when absent")
      .AsDispensable()
      .Output("Out", "[out_size or N, features...]")
      .Output("Dst_count", "int32 [rows]: each row's number of messages")
      .AsIntermediate();
  if (with_y) s.Attr("message_op", std::string("ADD"), "ADD or MUL").InSet({"ADD", "MUL"});
  s.Attr("reduce_op", std::string("SUM"), "SUM, MEAN, MAX or MIN")
      .InSet(ReduceNames())
      .Attr("out_size", std::vector<int64_t>{0}, "Out's rows (<= 0: X's), when no Out_size")
      .KernelDataTypeFrom("X")
      .InferShape(with_y ? SendRecvInferShape<true> : SendRecvInferShape<false>);
  const std::string grad = std::string(type) + "_grad";
  s.Grad([grad, with_y](tide::GradMaker& g) {
    auto op = g.NewOp(grad);
    op.Input("X", g.Input("X"));
    if (with_y) op.Input("Y", g.Input("Y"));
    op.Input("Src_index", g.Input("Src_index"))
        .Input("Dst_index", g.Input("Dst_index"))
        .Input("Out", g.Output("Out"))
        .Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"));
    if (with_y) op.Output(GradVarName("Y"), g.InputGrad("Y"));
    op.CopyAttrs();
  });
  return s;
}

tide::OpSchema SendRecvGradSchema(const char* type, bool with_y) {
  tide::OpSchema s(type);
  s.Input("X");
  if (with_y) s.Input("Y");
  s.Input("Src_index").Input("Dst_index").Input("Out").Input(GradVarName("Out"));
  s.Output(GradVarName("X"));
  if (with_y) s.Output(GradVarName("Y"));
  if (with_y) s.Attr("message_op", std::string("ADD")).InSet({"ADD", "MUL"});
  s.Attr("reduce_op", std::string("SUM"))
      .InSet(ReduceNames())
      .KernelDataTypeFrom("X")
      .InferShape(GradsLikeXY);
  return s;
}

}  // namespace
}  // namespace ops_graph

using namespace ops_graph;  // NOLINT: registration macros below

TIDE_REGISTER_OP(SendRecvSchema("send_u_recv", false)
                     .Comment("Out[Dst_index[e]] (reduce_op)= X[Src_index[e]] "
                              "(paddle.geometric.send_u_recv); rows no edge reaches are 0."));
TIDE_REGISTER_OP(SendRecvGradSchema("send_u_recv_grad", false));
TIDE_REGISTER_OP(SendRecvSchema("send_ue_recv", true)
                     .Comment("Out[Dst_index[e]] (reduce_op)= X[Src_index[e]] (message_op) Y[e] "
                              "(paddle.geometric.send_ue_recv); rows no edge reaches are 0."));
TIDE_REGISTER_OP(SendRecvGradSchema("send_ue_recv_grad", true));
TIDE_REGISTER_KERNEL("send_u_recv", "cpu", SendURecvKernel, OPS_GRAPH_FEATURE_TYPES);
TIDE_REGISTER_KERNEL("send_u_recv_grad", "cpu", SendURecvGradKernel, OPS_GRAPH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("send_ue_recv", "cpu", SendUERecvKernel, OPS_GRAPH_FEATURE_TYPES);
TIDE_REGISTER_KERNEL("send_ue_recv_grad", "cpu", SendUERecvGradKernel, OPS_GRAPH_FLOAT_TYPES);
