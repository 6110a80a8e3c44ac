// sequence_concat_op.cc: sequence_concat (sequence i of every X, in order, makes sequence i of
// Out; all X hold the same number of sequences) and its grad (Out@GRAD split back).
#include "common.h"

namespace ops_sequence {
namespace {

// The one-level LoD of each X, checked: same sequence count, same row width.
std::vector<Level> ConcatLevels(const KernelContext& ctx, int64_t* width) {
  const char* op = ctx.op_type();
  const size_t n = ctx.InputCount("X");
  TIDE_CHECK(n > 0, "op '", op, "' needs at least one input X");
  std::vector<Level> levels;
  for (size_t i = 0; i < n; ++i) {
    Tensor x = ctx.Input("X", i);
    levels.push_back(InputLoD(ctx, "X", 1, i)[0]);
    const int64_t w = RowWidth(x.dims());
    if (i == 0) *width = w;
    TIDE_CHECK(w == *width, "op '", op, "': X[", i, "] ('", ctx.InputName("X", i), "') dims ",
               tide::ToString(x.dims()), " have row width ", w, ", X[0] ('", ctx.InputName("X", 0),
               "') ", *width);
    TIDE_CHECK(levels[i].size() == levels[0].size(), "op '", op, "': X[", i, "] ('",
               ctx.InputName("X", i), "') has ", levels[i].size() - 1, " sequences (LoD ",
               LevelString(levels[i]), "), X[0] ('", ctx.InputName("X", 0), "') has ",
               levels[0].size() - 1, " (LoD ", LevelString(levels[0]), ")");
  }
  return levels;
}

template <typename T>
void SequenceConcatKernel(KernelContext& ctx) {
  int64_t w = 0;
  const std::vector<Level> levels = ConcatLevels(ctx, &w);
  std::vector<Tensor> xs = ctx.Inputs("X");
  Tensor out = ctx.Output("Out");
  int64_t rows = 0;
  for (const Tensor& x : xs) rows += x.dim(0);
  T* o = out.mutable_data<T>(WithRows(xs[0].dims(), rows), ctx.place());
  Level out_level{0};
  for (size_t s = 0; s + 1 < levels[0].size(); ++s) {
    uint64_t len = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const T* xd = xs[i].data<T>();
      o = std::copy(xd + levels[i][s] * w, xd + levels[i][s + 1] * w, o);
      len += levels[i][s + 1] - levels[i][s];
    }
    out_level.push_back(out_level.back() + len);
  }
  out.set_lod({out_level});
}

template <typename T>
void SequenceConcatGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  int64_t w = 0;
  const std::vector<Level> levels = ConcatLevels(ctx, &w);
  std::vector<Tensor> xs = ctx.Inputs("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  int64_t rows = 0;
  for (const Tensor& x : xs) rows += x.dim(0);
  TIDE_CHECK(dout.numel() == rows * w, "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not hold the ", rows, " rows of Out");
  const std::string gname = GradVarName("X");
  std::vector<T*> d(xs.size(), nullptr);
  for (size_t i = 0; i < xs.size(); ++i) {
    Tensor dx = ctx.OptionalOutput(gname.c_str(), i);
    if (!dx) continue;  // X[i] needs no gradient
    d[i] = dx.mutable_data<T>(xs[i].dims(), ctx.place());
    SetGradLoD(ctx, dx, xs[i]);
  }
  const T* g = dout.data<T>();
  for (size_t s = 0; s + 1 < levels[0].size(); ++s)
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t n = static_cast<int64_t>(levels[i][s + 1] - levels[i][s]) * w;
      if (d[i]) std::copy(g, g + n, d[i] + levels[i][s] * w);
      g += n;
    }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_concat")
                     .Comment("Out's sequence i = sequence i of X[0], X[1], ... in order.")
                     .Input("X", "LoDTensors with 1 LoD level and the same number of sequences")
                     .AsDuplicable()
                     .Output("Out", "the concatenated sequences")
                     .InferShape([](tide::InferShapeContext& c) {
                       if (c.IsRuntime()) return;  // the kernel sizes Out
                       std::vector<Dims> xs = c.InputsDims("X");
                       TIDE_CHECK(!xs.empty(), "op '", c.op_type(), "' needs at least one input X");
                       int64_t rows = 0;
                       for (size_t i = 0; i < xs.size(); ++i) {
                         TIDE_CHECK(!xs[i].empty() && xs[i].size() == xs[0].size(), "op '",
                                    c.op_type(), "': X[", i, "] ('", c.InputName("X", i),
                                    "') dims ", tide::ToString(xs[i]), " do not match X[0]'s rank");
                         rows = (rows < 0 || xs[i][0] < 0) ? -1 : rows + xs[i][0];
                       }
                       c.SetOutputDims("Out", WithRows(xs[0], rows));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("sequence_concat_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_concat_grad")
                     .Input("X")
                     .AsDuplicable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_concat", "cpu", SequenceConcatKernel, OPS_SEQUENCE_FLOAT_TYPES,
                     int32_t, int64_t);
TIDE_REGISTER_KERNEL("sequence_concat_grad", "cpu", SequenceConcatGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
