// sequence_slice_op.cc: sequence_slice (rows [Offset[i], Offset[i] + Length[i]) of each sequence
// i of X) and its grad (Out@GRAD into those rows, zeros elsewhere).
#include "common.h"

namespace ops_sequence {
namespace {

// Each sequence's slice as absolute rows [begin, end) of X; checks Offset and Length.
std::vector<std::pair<int64_t, int64_t>> SliceRows(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  const Level level = InputLoD(ctx, "X", 1)[0];
  const size_t n = level.size() - 1;
  Tensor off = ctx.Input("Offset"), len = ctx.Input("Length");
  for (const char* p : {"Offset", "Length"}) {
    Tensor t = ctx.Input(p);
    TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", op, "': ", p, " ('", ctx.InputName(p),
               "') must be int64, got ", tide::DataTypeName(t.dtype()));
    TIDE_CHECK(t.numel() == static_cast<int64_t>(n), "op '", op, "': ", p, " ('", ctx.InputName(p),
               "', dims ", tide::ToString(t.dims()), ") needs one value per sequence of X ('",
               ctx.InputName("X"), "'), which has ", n, " (LoD ", LevelString(level), ")");
  }
  const int64_t* o = off.data<int64_t>();
  const int64_t* l = len.data<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (size_t s = 0; s < n; ++s) {
    const int64_t seq_len = static_cast<int64_t>(level[s + 1] - level[s]);
    TIDE_CHECK(o[s] >= 0 && l[s] >= 0, "op '", op, "': Offset[", s, "] = ", o[s], " and Length[", s,
               "] = ", l[s], " must be >= 0");
    // Compared without the sum, which a huge Offset would overflow.
    TIDE_CHECK(o[s] <= seq_len && l[s] <= seq_len - o[s], "op '", op, "': Offset[", s, "] = ", o[s],
               " plus Length[", s, "] = ", l[s], " exceeds the length ", seq_len, " of sequence ",
               s, " of X ('", ctx.InputName("X"), "', LoD ", LevelString(level), ")");
    const int64_t b = static_cast<int64_t>(level[s]) + o[s];
    rows.emplace_back(b, b + l[s]);
  }
  return rows;
}

template <typename T>
void SequenceSliceKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const auto rows = SliceRows(ctx);
  const int64_t w = RowWidth(x.dims());
  Level level{0};
  for (const auto& r : rows)
    level.push_back(level.back() + static_cast<uint64_t>(r.second - r.first));
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(WithRows(x.dims(), static_cast<int64_t>(level.back())), ctx.place());
  for (const auto& r : rows) o = std::copy(xd + r.first * w, xd + r.second * w, o);
  out.set_lod({level});
}

template <typename T>
void SequenceSliceGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const auto rows = SliceRows(ctx);
  const int64_t w = RowWidth(x.dims());
  int64_t total = 0;
  for (const auto& r : rows) total += r.second - r.first;
  TIDE_CHECK(dout.numel() == total * w, "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not hold the ", total, " rows of Out");
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  std::fill(d, d + x.numel(), T(0));
  for (const auto& r : rows) {
    std::copy(g, g + (r.second - r.first) * w, d + r.first * w);
    g += (r.second - r.first) * w;
  }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_slice")
                     .Comment("Out's sequence i = rows [Offset[i], Offset[i] + Length[i]) of X's "
                              "sequence i.")
                     .Input("X", "a LoDTensor with 1 LoD level")
                     .Input("Offset", "int64 [num_seqs, 1]: the first row of each slice")
                     .Input("Length", "int64 [num_seqs, 1]: the rows of each slice")
                     .Output("Out", "the slices")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       for (const char* p : {"Offset", "Length"}) {
                         TideDataType t = c.InputDataType(p);
                         TIDE_CHECK(t == TIDE_INT64 || t == TIDE_UNDEFINED, "op '", c.op_type(),
                                    "': ", p, " ('", c.InputName(p), "') must be int64, got ",
                                    tide::DataTypeName(t));
                       }
                       if (c.IsRuntime()) return;  // the kernel sizes Out
                       Dims x = c.InputDims("X");
                       TIDE_CHECK(!x.empty(), "op '", c.op_type(), "': X must have rank >= 1");
                       c.SetOutputDims("Out", WithRows(x, -1));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("sequence_slice_grad")
                           .Input("X", g.Input("X"))
                           .Input("Offset", g.Input("Offset"))
                           .Input("Length", g.Input("Length"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_slice_grad")
                     .Input("X")
                     .Input("Offset")
                     .Input("Length")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_slice", "cpu", SequenceSliceKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("sequence_slice_grad", "cpu", SequenceSliceGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
