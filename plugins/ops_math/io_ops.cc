// io_ops.cc: feed and fetch, the operators without kernels that move data between the
// executor's feed/fetch lists and the program's variables (Fluid's feed_op / fetch_op).
#include <tide/plugin.hpp>

namespace {

// The most fetch targets one run may have: a larger `col` is a corrupt program, refused before
// the fetch list grows to it.
constexpr int32_t kMaxFetchColumns = 1 << 16;

tide::Variable Lookup(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = ctx.scope().FindVar(name);
  TIDE_CHECK(v, "op '", ctx.op_type(), "': variable '", name, "' is not in the scope");
  return v;
}

// Out = feed[col]: shares the memory when it is already on the run's place.
void FeedRun(tide::OpRunContext& ctx) {
  int col = ctx.Attr<int32_t>("col");
  tide::TensorArray list = Lookup(ctx, ctx.Inputs("X").at(0)).GetTensorArray();
  TIDE_CHECK(col >= 0 && static_cast<size_t>(col) < list.size(), "op 'feed': column ", col,
             " is past the ", list.size(), " fed tensor(s)");
  tide::Tensor src = list.at(col);
  tide::Tensor dst = Lookup(ctx, ctx.Outputs("Out").at(0)).GetTensor();
  if (src.place() == ctx.place()) {
    dst.ShareDataWith(src);
    dst.set_lod(src.lod());
  } else {
    dst.CopyFrom(src, ctx.place(), ctx.device_context());
  }
}

// fetch[col] = a host copy of X.
void FetchRun(tide::OpRunContext& ctx) {
  int col = ctx.Attr<int32_t>("col");
  TIDE_CHECK(col >= 0 && col < kMaxFetchColumns, "op 'fetch': column ", col, " is outside [0, ",
             kMaxFetchColumns, ")");
  const std::string name = ctx.Inputs("X").at(0);
  tide::Variable var = Lookup(ctx, name);
  TIDE_CHECK(var.IsTensor(), "op 'fetch': variable '", name, "' does not hold a LoDTensor");
  tide::Tensor src = var.GetTensor();
  TIDE_CHECK(src.initialized(), "op 'fetch': variable '", name, "' holds no data");
  tide::TensorArray list = Lookup(ctx, ctx.Outputs("Out").at(0)).GetTensorArray();
  if (list.size() <= static_cast<size_t>(col)) list.resize(col + 1);
  list.at(col).CopyFrom(src, tide::Place("cpu", 0));
}

}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("feed")
                     .Comment("Copies column `col` of the feed list X into Out.")
                     .Input("X", "the executor's feed list")
                     .Output("Out", "the fed variable")
                     .Attr("col", int32_t(0), "position in the feed list")
                     .Run(FeedRun));

TIDE_REGISTER_OP(tide::OpSchema("fetch")
                     .Comment("Copies X to the host, into column `col` of the fetch list Out.")
                     .Input("X", "the variable to fetch")
                     .Output("Out", "the executor's fetch list")
                     .Attr("col", int32_t(0), "position in the fetch list")
                     .Run(FetchRun));
