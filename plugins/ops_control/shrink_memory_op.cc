// shrink_memory_op.cc: shrink_rnn_memory (Fluid 1.x) and its grad. At DynamicRNN step I only the
// sequences longer than I are left (the rank table sorts them longest first): Out = X's first
// rows for them (its first sequences, when X has a LoD). The grad puts Out@GRAD back in those
// rows of X@GRAD; the sequences that had ended get zeros.
#include "rank_table.h"

namespace ops_control {
namespace {

int64_t ReadStep(tide::OpRunContext& ctx) {
  const std::string name = OnlyInput(ctx, "I");
  tide::Tensor t = InputTensor(ctx, name);
  TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_INT64 || t.dtype() == TIDE_INT32), "op '",
             ctx.op_type(), "': the step I ('", name, "') must be a one-element int64 tensor, got ",
             tide::DataTypeName(t.dtype()), " ", tide::ToString(t.dims()));
  tide::OwnedTensor tmp;
  tide::Tensor h = OnHost(t, tmp);
  return h.dtype() == TIDE_INT64 ? *h.data<int64_t>() : *h.data<int32_t>();
}

void ShrinkRun(tide::OpRunContext& ctx) {
  const RankTable table = ReadRankTable(ctx);
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  TIDE_CHECK(x.rank() >= 1, "op 'shrink_rnn_memory': X ('", x_name, "') must have rank >= 1");
  const int64_t keep = table.LongerThan(ReadStep(ctx));
  const tide::LoD lod = x.lod();
  int64_t rows = keep;
  tide::LoD out_lod;
  if (!lod.empty()) {
    CheckLoDFits(ctx, "X", x_name, x);
    TIDE_CHECK(static_cast<int64_t>(lod[0].size()) > keep, "op 'shrink_rnn_memory': X ('", x_name,
               "') has ", lod[0].size() - 1, " sequence(s), fewer than the ", keep,
               " still running");
    auto sub = SubLoDAndOffset(lod, 0, keep, 0);
    rows = static_cast<int64_t>(sub.second.second);
    AppendLoD(&out_lod, sub.first);
  }
  TIDE_CHECK(rows <= x.dim(0), "op 'shrink_rnn_memory': X ('", x_name, "', dims ",
             tide::ToString(x.dims()), ") has fewer rows than the ", rows, " of the ", keep,
             " sequence(s) still running");
  tide::OwnedTensor staged;
  HostRows out(WithRows(x.dims(), rows), x.dtype());
  out.PutRange(0, OnHost(x, staged), 0, rows);
  out.set_lod(out_lod);
  out.CopyTo(ctx, Lookup(ctx, OnlyOutput(ctx, "Out")).GetTensor());
}

void ShrinkGradRun(tide::OpRunContext& ctx) {
  const std::string x_name = OnlyInput(ctx, "X");
  tide::Tensor x = InputTensor(ctx, x_name);
  HostRows dx(x.dims(), x.dtype());
  const auto douts = ctx.Inputs("Out@GRAD");
  if (!douts.empty() && douts[0] != tide::kEmptyVarName) {
    tide::Variable v = Lookup(ctx, douts[0]);
    if (v.IsTensor() && v.GetTensor().initialized()) {
      tide::Tensor dout = v.GetTensor();
      TIDE_CHECK(dout.dim(0) <= x.dim(0) && RowBytes(dout) == RowBytes(x),
                 "op 'shrink_rnn_memory_grad': Out@GRAD ('", douts[0], "', dims ",
                 tide::ToString(dout.dims()), ") does not fit X ('", x_name, "', dims ",
                 tide::ToString(x.dims()), ")");
      dx.Put(0, dout);
    }
  }
  dx.set_lod(x.lod());
  dx.CopyTo(ctx, Lookup(ctx, OnlyOutput(ctx, "X@GRAD")).GetTensor());
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(
    tide::OpSchema("shrink_rnn_memory")
        .Comment("Out = X's rows (sequences) for the sequences of the rank table longer "
                 "than step I.")
        .Input("X", "the memory, one row (sequence) per running sequence, longest first")
        .Input("RankTable", "the LoD rank table")
        .Input("I", "the step, int64 [1]")
        .Output("Out", "X's first rows")
        .InferShape([](tide::InferShapeContext& ctx) {
          ctx.SetOutputDims("Out", ctx.InputDims("X"));
          ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
          if (!ctx.IsRuntime()) ctx.ShareLoD("X", "Out");
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("shrink_rnn_memory_grad")
              .Input("X", g.Input("X"))
              .Input("Out@GRAD", g.OutputGrad("Out"))
              .Output("X@GRAD", g.InputGrad("X"));
        })
        .Run(ops_control::ShrinkRun));

TIDE_REGISTER_OP(tide::OpSchema("shrink_rnn_memory_grad")
                     .Comment("X@GRAD = Out@GRAD in X's first rows, zeros in the others.")
                     .Input("X")
                     .Input("Out@GRAD")
                     .AsDispensable()
                     .Output("X@GRAD")
                     .InferShape(tide::SameShapeAsInput("X", "X@GRAD"))
                     .Run(ops_control::ShrinkGradRun));
