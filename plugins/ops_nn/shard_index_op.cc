// shard_index_op.cc: Paddle's shard_index (paddle.shard_index): the integer labels X in
// [0, index_num) split into nshards shards of ceil(index_num / nshards) labels; a label in shard
// shard_id becomes its offset in the shard, any other ignore_value. No grad (integer op).
#include "common.h"

namespace ops_nn {
namespace {

struct ShardGeom {
  int64_t index_num, nshards, shard_id, ignore_value, shard_size;
};

template <typename Ctx>
ShardGeom GetShard(const Ctx& ctx) {
  const char* op = ctx.op_type();
  ShardGeom g{ctx.template Attr<int32_t>("index_num"), ctx.template Attr<int32_t>("nshards"),
              ctx.template Attr<int32_t>("shard_id"), ctx.template Attr<int32_t>("ignore_value"),
              0};
  TIDE_CHECK(g.index_num > 0, "op '", op, "': index_num must be > 0, got ", g.index_num);
  TIDE_CHECK(g.nshards > 0, "op '", op, "': nshards must be > 0, got ", g.nshards);
  TIDE_CHECK(g.shard_id >= 0 && g.shard_id < g.nshards, "op '", op, "': shard_id must be in [0, ",
             g.nshards, ") (nshards), got ", g.shard_id);
  g.shard_size = (g.index_num + g.nshards - 1) / g.nshards;
  return g;
}

void ShardIndexShape(tide::InferShapeContext& ctx) {
  GetShard(ctx);
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(x.size() >= 2 && DimsCompatible(x.back(), 1), "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') must be at least 2-D with a last dim of 1, got ",
             tide::ToString(x));
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': X ('", ctx.InputName("X"), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", t);
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void ShardIndexKernel(KernelContext& ctx) {
  const ShardGeom g = GetShard(ctx);
  Tensor x = ctx.Input("X");
  const T* in = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const int64_t v = in[i];
    TIDE_CHECK(v >= 0 && v < g.index_num, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
               "') holds ", v, " at ", i, ", outside [0, ", g.index_num, ") (index_num)");
    out[i] = v / g.shard_size == g.shard_id ? static_cast<T>(v % g.shard_size)
                                            : static_cast<T>(g.ignore_value);
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("shard_index")
                     .Comment("Out = X mod shard_size where X / shard_size == shard_id, else "
                              "ignore_value; shard_size = ceil(index_num / nshards).")
                     .Input("X", "int32 / int64 labels in [0, index_num), [..., 1]")
                     .Output("Out", "X's dims and dtype")
                     .RequiredAttr("index_num", TIDE_ATTR_INT, "the number of labels (> 0)")
                     .RequiredAttr("nshards", TIDE_ATTR_INT, "the number of shards (> 0)")
                     .RequiredAttr("shard_id", TIDE_ATTR_INT, "this shard, in [0, nshards)")
                     .Attr("ignore_value", int32_t(-1), "the value of labels of other shards")
                     .KernelDataTypeFrom("X")
                     .InferShape(ShardIndexShape));
TIDE_REGISTER_KERNEL("shard_index", "cpu", ShardIndexKernel, int32_t, int64_t);
