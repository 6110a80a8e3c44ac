// reindex_graph_op.cc: Paddle's graph_reindex (paddle.geometric.reindex_graph, PIR
// pd_op.reindex_graph): a sampled subgraph renumbered from 0. Out_Nodes is X (the centre nodes,
// in order) then each neighbour not seen before, in order of appearance; Reindex_Src is each
// neighbour's new number, Reindex_Dst the new number of the centre node it was sampled for
// (X[i] repeated Count[i] times). As Paddle's CPU kernel, a node repeated in X keeps its last
// position's number. The hash-table buffers (Paddle's GPU kernel's) are not read. No gradient.
#include <unordered_map>

#include "common.h"

namespace ops_graph {
namespace {

template <typename T>
void ReindexGraphKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), nb = ctx.Input("Neighbors");
  TIDE_CHECK(nb.dtype() == x.dtype(), "op '", ctx.op_type(), "': Neighbors ('",
             ctx.InputName("Neighbors"), "') must have X's type ", tide::DataTypeName(x.dtype()),
             ", got ", tide::DataTypeName(nb.dtype()));
  const int64_t bs = x.numel(), e = nb.numel();
  const std::vector<int64_t> count = IntValues(ctx, "Count");
  TIDE_CHECK(static_cast<int64_t>(count.size()) == bs, "op '", ctx.op_type(), "': Count ('",
             ctx.InputName("Count"), "') has ", count.size(), " values but X ('",
             ctx.InputName("X"), "') has ", bs, " nodes");
  int64_t total = 0;
  for (size_t i = 0; i < count.size(); ++i) {
    TIDE_CHECK(count[i] >= 0, "op '", ctx.op_type(), "': Count ('", ctx.InputName("Count"), "')[",
               i, "] = ", count[i], " is negative");
    total += count[i];
  }
  TIDE_CHECK(total == e, "op '", ctx.op_type(), "': Count ('", ctx.InputName("Count"),
             "') adds up to ", total, " but Neighbors ('", ctx.InputName("Neighbors"), "') has ", e,
             " nodes");
  const T *xs = x.data<T>(), *ns = nb.data<T>();
  std::unordered_map<T, T> id;
  std::vector<T> nodes(xs, xs + bs);
  for (int64_t i = 0; i < bs; ++i) id[xs[i]] = static_cast<T>(i);
  T* src = ctx.Output("Reindex_Src").mutable_data<T>(Dims{e}, ctx.place());
  for (int64_t i = 0; i < e; ++i) {
    auto it = id.emplace(ns[i], static_cast<T>(nodes.size())).first;
    if (it->second == static_cast<T>(nodes.size())) nodes.push_back(ns[i]);
    src[i] = it->second;
  }
  T* dst = ctx.Output("Reindex_Dst").mutable_data<T>(Dims{e}, ctx.place());
  for (int64_t i = 0, k = 0; i < bs; ++i)
    for (int64_t j = 0; j < count[i]; ++j) dst[k++] = id[xs[i]];
  T* out = ctx.Output("Out_Nodes")
               .mutable_data<T>(Dims{static_cast<int64_t>(nodes.size())}, ctx.place());
  std::copy(nodes.begin(), nodes.end(), out);
}

void ReindexGraphInferShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': X ('", ctx.InputName("X"), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
  for (const char* p : {"X", "Neighbors", "Count"}) {
    const Dims d = ctx.InputDims(p);
    TIDE_CHECK(d.size() == 1, "op '", ctx.op_type(), "': ", p, " ('", ctx.InputName(p),
               "') must be 1-D, but its dims are ", tide::ToString(d));
  }
  const int64_t e = ctx.InputDims("Neighbors")[0];
  for (const char* p : {"Reindex_Src", "Reindex_Dst", "Out_Nodes"}) {
    ctx.SetOutputDims(p, Dims{std::string(p) == "Out_Nodes" ? -1 : e});
    ctx.SetOutputDataType(p, t);
  }
}

}  // namespace
}  // namespace ops_graph

using namespace ops_graph;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("graph_reindex")
        .Comment("A sampled subgraph renumbered from 0 (paddle.geometric.reindex_graph).")
        .Input("X", "int32/int64 [B]: the centre nodes")
        .Input("Neighbors", "X's type [E]: their sampled neighbours, node by node")
        .Input("Count", "int32 [B]: each centre node's number of neighbours")
        .Input("HashTable_Value", "GPU buffer, not read")
        .AsDispensable()
        .Input("HashTable_Index", "GPU buffer, not read")
        .AsDispensable()
        .Output("Reindex_Src", "[E]: the neighbours' new numbers")
        .Output("Reindex_Dst", "[E]: their centre nodes' new numbers")
        .Output("Out_Nodes", "X, then the new neighbours in order")
        .Attr("flag_buffer_hashtable", false, "use the GPU buffers (not read)")
        .KernelDataTypeFrom("X")
        .InferShape(ReindexGraphInferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("graph_reindex", "cpu", ReindexGraphKernel, int32_t, int64_t);
