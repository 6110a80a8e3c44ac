// send_uv_op.cc: Paddle's send_uv (paddle.geometric.send_uv): an edge's feature from its two
// nodes, Out[e] = X[Src_index[e]] (message_op ADD or MUL) Y[Dst_index[e]], X's and Y's feature
// dims broadcast numpy-style; Out [E, features...]. The grad: Out@GRAD back to X's row (times Y's
// for MUL) and to Y's row (times X's for MUL), summed over edges and broadcast dims. Indices out of
// range are refused naming the input and position.
#include "common.h"

namespace ops_graph {
namespace {

struct SendUVArgs {
  Dims x, y, out;
  std::vector<int64_t> src, dst;
  FeaturePairing f;
  bool mul = false;
};

SendUVArgs ReadSendUV(const KernelContext& ctx) {
  SendUVArgs a;
  a.x = ctx.Input("X").dims();
  a.y = ctx.Input("Y").dims();
  a.f = PairFeatures(ctx.op_type(), "X", a.x, "Y", a.y);
  a.mul = ctx.Attr<std::string>("message_op") == "MUL";
  a.src = ReadIndex(ctx, "Src_index", a.x[0], "X");
  a.dst = ReadIndex(ctx, "Dst_index", a.y[0], "Y");
  TIDE_CHECK(a.src.size() == a.dst.size(), "op '", ctx.op_type(), "': Src_index ('",
             ctx.InputName("Src_index"), "') has ", a.src.size(), " edges but Dst_index ('",
             ctx.InputName("Dst_index"), "') has ", a.dst.size());
  a.out = a.f.out;
  a.out.insert(a.out.begin(), static_cast<int64_t>(a.src.size()));
  return a;
}

template <typename T>
void SendUVKernel(KernelContext& ctx) {
  const SendUVArgs a = ReadSendUV(ctx);
  const T *x = ctx.Input("X").data<T>(), *y = ctx.Input("Y").data<T>();
  const FeaturePairing& f = a.f;
  T* out = ctx.Output("Out").mutable_data<T>(a.out, ctx.place());
  for (size_t e = 0; e < a.src.size(); ++e) {
    const T *xr = x + a.src[e] * f.x_len, *yr = y + a.dst[e] * f.y_len;
    T* o = out + e * f.out_len;
    for (int64_t j = 0; j < f.out_len; ++j)
      o[j] = a.mul ? xr[f.xo[j]] * yr[f.yo[j]] : xr[f.xo[j]] + yr[f.yo[j]];
  }
}

template <typename T>
void SendUVGradKernel(KernelContext& ctx) {
  const SendUVArgs a = ReadSendUV(ctx);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), a.out);
  const T *x = ctx.Input("X").data<T>(), *y = ctx.Input("Y").data<T>(), *g = dout.data<T>();
  const FeaturePairing& f = a.f;
  T* dx = ZeroedGrad<T>(ctx, "X", a.x);
  T* dy = ZeroedGrad<T>(ctx, "Y", a.y);
  for (size_t e = 0; e < a.src.size(); ++e) {
    const int64_t xr = a.src[e] * f.x_len, yr = a.dst[e] * f.y_len;
    for (int64_t j = 0; j < f.out_len; ++j) {
      const T w = g[e * f.out_len + j];
      if (dx) dx[xr + f.xo[j]] += a.mul ? w * y[yr + f.yo[j]] : w;
      if (dy) dy[yr + f.yo[j]] += a.mul ? w * x[xr + f.xo[j]] : w;
    }
  }
}

void SendUVInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  Dims out = BroadcastFeatureDims(ctx.op_type(), "X", x, "Y", y);
  const int64_t es = CheckIndexInput(ctx, "Src_index"), ed = CheckIndexInput(ctx, "Dst_index");
  TIDE_CHECK(tide::ops::DimsCompatible(es, ed), "op '", ctx.op_type(), "': Src_index ('",
             ctx.InputName("Src_index"), "') has ", es, " edges but Dst_index ('",
             ctx.InputName("Dst_index"), "') has ", ed);
  out.insert(out.begin(), es >= 0 ? es : ed);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_graph

using namespace ops_graph;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("send_uv")
                     .Comment("Out[e] = X[Src_index[e]] (message_op) Y[Dst_index[e]] "
                              "(paddle.geometric.send_uv).")
                     .Input("X", "source node features [N, ...]")
                     .Input("Y", "destination node features [M, ...], broadcast with X's")
                     .Input("Src_index", "int32/int64 [E]: rows of X")
                     .Input("Dst_index", "int32/int64 [E]: rows of Y")
                     .Output("Out", "[E, features...]")
                     .Attr("message_op", std::string("ADD"), "ADD or MUL")
                     .InSet({"ADD", "MUL"})
                     .KernelDataTypeFrom("X")
                     .InferShape(SendUVInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("send_uv_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Src_index", g.Input("Src_index"))
                           .Input("Dst_index", g.Input("Dst_index"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("send_uv_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Src_index")
                     .Input("Dst_index")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Output(GradVarName("Y"))
                     .Attr("message_op", std::string("ADD"))
                     .InSet({"ADD", "MUL"})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradsLikeXY));
TIDE_REGISTER_KERNEL("send_uv", "cpu", SendUVKernel, OPS_GRAPH_FEATURE_TYPES);
TIDE_REGISTER_KERNEL("send_uv_grad", "cpu", SendUVGradKernel, OPS_GRAPH_FLOAT_TYPES);
