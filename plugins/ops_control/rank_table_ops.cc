// rank_table_ops.cc: the DynamicRNN ops around a LoDRankTable (Fluid 1.x): lod_rank_table (the
// sequences of a LoD level sorted by length, longest first; ties keep their order),
// max_sequence_len (the longest length, int64 [1]) and reorder_lod_tensor_by_rank (the
// sequences of X, or its rows when it has no LoD, in the table's order) with its grad.
#include "rank_table.h"

namespace ops_control {
namespace {

void LoDRankTableRun(tide::OpRunContext& ctx) {
  const std::string name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, name);
  const tide::LoD lod = x.lod();
  const int32_t level = ctx.Attr<int32_t>("level");
  TIDE_CHECK(!lod.empty(), "op 'lod_rank_table': X ('", name, "', dims ", tide::ToString(x.dims()),
             ") has no LoD; the op ranks the sequences of a LoDTensor");
  TIDE_CHECK(level >= 0 && static_cast<size_t>(level) < lod.size(), "op 'lod_rank_table': level ",
             level, " is out of range for X ('", name, "'), which has ", lod.size(),
             " LoD level(s)");
  CheckLoDFits(ctx, "X", name, x);
  TIDE_CHECK(lod[level].size() >= 2, "op 'lod_rank_table': X ('", name,
             "') has no sequence at level ", level);
  WriteRankTable(Lookup(ctx, OnlyOutput(ctx, "Out")), lod, static_cast<size_t>(level));
}

void MaxSequenceLenRun(tide::OpRunContext& ctx) {
  const RankTable table = ReadRankTable(ctx);
  tide::OwnedTensor n;
  *n.mutable_data<int64_t>({1}, tide::Place("cpu", 0)) = table.max_len();
  Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor().CopyFrom(n, ctx.place(), ctx.device_context());
}

// A sequence of the tensor being reordered: its rows and the lengths of its parts below.
struct Piece {
  size_t offset, length;
  tide::LoD lod;
};

// X's sequences at LoD level 0 (its rows when it has none), as reorder_lod_tensor_by_rank sees
// them.
std::vector<Piece> Pieces(tide::OpRunContext& ctx, const std::string& name, const tide::Tensor& x) {
  std::vector<Piece> pieces;
  const tide::LoD lod = x.lod();
  if (lod.empty()) {
    for (int64_t i = 0; i < x.dim(0); ++i) pieces.push_back({static_cast<size_t>(i), 1, {}});
    return pieces;
  }
  CheckLoDFits(ctx, "X", name, x);
  for (size_t i = 0; i + 1 < lod[0].size(); ++i) {
    auto sub = SubLoDAndOffset(lod, i, i + 1, 0);
    pieces.push_back({sub.second.first, sub.second.second - sub.second.first, sub.first});
  }
  return pieces;
}

// Copies X's pieces in the table's order (forward) or back (grad: from Out@GRAD laid out in the
// table's order to X's layout).
void Reorder(tide::OpRunContext& ctx, bool grad) {
  const char* op = ctx.op_type();
  const RankTable table = ReadRankTable(ctx);
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  TIDE_CHECK(x.rank() >= 1, "op '", op, "': X ('", x_name, "') must have rank >= 1");
  const std::vector<Piece> pieces = Pieces(ctx, x_name, x);
  TIDE_CHECK(pieces.size() == table.items.size(), "op '", op, "': X ('", x_name, "') has ",
             pieces.size(), (x.lod().empty() ? " row(s)" : " sequence(s)"), ", the rank table has ",
             table.items.size());
  tide::OwnedTensor staged;
  tide::Tensor src = x;
  std::string out_name = grad ? OnlyOutput(ctx, "X@GRAD") : OnlyOutput(ctx, "Out");
  if (grad) {
    const std::string dout_name = OnlyInput(ctx, "Out@GRAD");
    src = InputTensor(ctx, dout_name);
    TIDE_CHECK(src.numel() == x.numel() && src.dim(0) == x.dim(0), "op '", op, "': Out@GRAD ('",
               dout_name, "', dims ", tide::ToString(src.dims()), ") does not match X's dims ",
               tide::ToString(x.dims()));
  }
  tide::Tensor host = OnHost(src, staged);
  HostRows out(src.dims(), src.dtype());
  tide::LoD out_lod;
  size_t at = 0;
  for (const auto& item : table.items) {
    TIDE_CHECK(item.index >= 0 && static_cast<size_t>(item.index) < pieces.size(), "op '", op,
               "': the rank table names sequence ", item.index, " of ", pieces.size());
    const Piece& p = pieces[item.index];
    if (grad)
      out.PutRange(p.offset, host, at, p.length);
    else
      out.PutRange(at, host, p.offset, p.length);
    AppendLoD(&out_lod, p.lod);
    at += p.length;
  }
  out.set_lod(grad ? x.lod() : out_lod);
  out.CopyTo(ctx, Lookup(ctx, out_name).GetTensor());
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("lod_rank_table")
                     .NoGradient()
                     .Comment("Out = the sequences of X's LoD level `level`, sorted by length "
                              "(longest first; ties in index order).")
                     .Input("X", "a LoDTensor")
                     .Output("Out", "a LoD rank table")
                     .Attr("level", int32_t{0}, "the LoD level ranked")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (!ctx.IsRuntime()) ctx.SetOutputVarType("Out", TIDE_VAR_LOD_RANK_TABLE);
                     })
                     .Run(ops_control::LoDRankTableRun));

TIDE_REGISTER_OP(
    tide::OpSchema("max_sequence_len")
        .NoGradient()
        .Comment("Out = the length of the longest sequence of the rank table (int64 [1]).")
        .Input("RankTable", "a LoD rank table")
        .Output("Out", "int64 [1]")
        .InferShape([](tide::InferShapeContext& ctx) {
          if (ctx.IsRuntime()) return;
          ctx.SetOutputDims("Out", {1});
          ctx.SetOutputDataType("Out", TIDE_INT64);
        })
        .Run(ops_control::MaxSequenceLenRun));

TIDE_REGISTER_OP(tide::OpSchema("reorder_lod_tensor_by_rank")
                     .Comment("Out = X's sequences (level 0; its rows when it has no LoD) in the "
                              "rank table's order.")
                     .Input("X", "a LoDTensor, or a tensor with one row per sequence")
                     .Input("RankTable", "a LoD rank table")
                     .Output("Out", "X reordered")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("reorder_lod_tensor_by_rank_grad")
                           .Input("X", g.Input("X"))
                           .Input("RankTable", g.Input("RankTable"))
                           .Input("Out@GRAD", g.OutputGrad("Out"))
                           .Output("X@GRAD", g.InputGrad("X"));
                     })
                     .Run([](tide::OpRunContext& ctx) { ops_control::Reorder(ctx, false); }));

TIDE_REGISTER_OP(tide::OpSchema("reorder_lod_tensor_by_rank_grad")
                     .Comment("X@GRAD = Out@GRAD's sequences put back in X's order.")
                     .Input("X")
                     .Input("RankTable")
                     .Input("Out@GRAD")
                     .Output("X@GRAD")
                     .InferShape(tide::SameShapeAsInput("X", "X@GRAD"))
                     .Run([](tide::OpRunContext& ctx) { ops_control::Reorder(ctx, true); }));
