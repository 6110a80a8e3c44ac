// sequence_pad_ops.cc: sequence_pad (X's sequences as rows of [num_seqs, padded_length, ...],
// filled with PadValue; Length their lengths) and sequence_unpad (the first Length[i] steps of
// each padded row, back to a LoDTensor). Each one's grad is the other's data move: pad_grad
// unpads Out@GRAD, unpad_grad pads Out@GRAD with zeros.
#include "common.h"

namespace ops_sequence {
namespace {

// Copies each sequence (rows [level[i], level[i+1]) of `seq`, `step` elements per row) into
// row i of `padded` (`padded_length` steps); steps beyond a sequence are left alone.
template <typename T>
void Pad(const T* seq, const Level& level, int64_t step, int64_t padded_length, T* padded) {
  for (size_t i = 0; i + 1 < level.size(); ++i)
    std::copy(seq + level[i] * step, seq + level[i + 1] * step, padded + i * padded_length * step);
}
// The inverse: row i of `padded`'s first len(i) steps into rows [level[i], level[i+1]) of `seq`.
template <typename T>
void Unpad(const T* padded, const Level& level, int64_t step, int64_t padded_length, T* seq) {
  for (size_t i = 0; i + 1 < level.size(); ++i) {
    const T* src = padded + i * padded_length * step;
    std::copy(src, src + (level[i + 1] - level[i]) * step, seq + level[i] * step);
  }
}

int64_t LongestOf(const Level& level) {
  uint64_t m = 0;
  for (size_t i = 0; i + 1 < level.size(); ++i) m = std::max(m, level[i + 1] - level[i]);
  return static_cast<int64_t>(m);
}

// padded_length: -1 means the longest sequence; otherwise at least that long.
int64_t PaddedLength(const KernelContext& ctx, const Level& level) {
  const int64_t attr = ctx.Attr<int32_t>("padded_length"), longest = LongestOf(level);
  if (attr == -1) return longest;
  TIDE_CHECK(attr >= longest, "op '", ctx.op_type(), "': padded_length ", attr,
             " is shorter than the longest sequence (", longest, ") of X ('", ctx.InputName("X"),
             "', LoD ", LevelString(level), "); use -1 or a length >= ", longest);
  return attr;
}

template <typename T>
void SequencePadKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), pad = ctx.Input("PadValue");
  Tensor out = ctx.Output("Out"), len = ctx.Output("Length");
  const Level level = InputLoD(ctx, "X", 1)[0];
  const int64_t n = static_cast<int64_t>(level.size()) - 1, step = RowWidth(x.dims());
  const int64_t pl = PaddedLength(ctx, level);
  TIDE_CHECK(pad.numel() == 1 || pad.numel() == step, "op '", op, "': PadValue ('",
             ctx.InputName("PadValue"), "', dims ", tide::ToString(pad.dims()),
             ") must hold 1 element or one step of X (", step, " elements, X dims ",
             tide::ToString(x.dims()), ")");
  Dims od{n, pl};
  for (int i = 1; i < x.rank(); ++i) od.push_back(x.dim(i));
  const T* pv = pad.data<T>();
  T* o = out.mutable_data<T>(od, ctx.place());
  for (int64_t r = 0; r < n * pl; ++r)
    for (int64_t k = 0; k < step; ++k) o[r * step + k] = pv[pad.numel() == 1 ? 0 : k];
  Pad(x.data<T>(), level, step, pl, o);
  out.set_lod({});
  int64_t* l = len.mutable_data<int64_t>({n}, ctx.place());
  for (int64_t i = 0; i < n; ++i) l[i] = static_cast<int64_t>(level[i + 1] - level[i]);
  len.set_lod({});
}

template <typename T>
void SequencePadGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const Level level = InputLoD(ctx, "X", 1)[0];
  const int64_t n = static_cast<int64_t>(level.size()) - 1, step = RowWidth(x.dims());
  TIDE_CHECK(dout.rank() >= 2 && dout.dim(0) == n && dout.numel() == n * dout.dim(1) * step, "op '",
             op, "': Out@GRAD ", tide::ToString(dout.dims()), " is not [", n,
             ", padded_length, ...] with X's step of ", step, " elements");
  TIDE_CHECK(dout.dim(1) >= LongestOf(level), "op '", op, "': Out@GRAD ",
             tide::ToString(dout.dims()), "'s padded length is shorter than X's longest sequence, ",
             LongestOf(level));
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  Unpad(dout.data<T>(), level, step, dout.dim(1), d);
}

// Length as a LoD level; checks it fits X [n, padded_length, ...].
Level UnpadLevel(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), len = ctx.Input("Length");
  TIDE_CHECK(x.rank() >= 2, "op '", op, "': X ('", ctx.InputName("X"),
             "') must be padded, [num_seqs, padded_length, ...], got ", tide::ToString(x.dims()));
  TIDE_CHECK(len.dtype() == TIDE_INT64, "op '", op, "': Length ('", ctx.InputName("Length"),
             "') must be int64, got ", tide::DataTypeName(len.dtype()));
  TIDE_CHECK(len.numel() == x.dim(0), "op '", op, "': Length ('", ctx.InputName("Length"),
             "', dims ", tide::ToString(len.dims()), ") needs one length per row of X ('",
             ctx.InputName("X"), "', dims ", tide::ToString(x.dims()), ")");
  const int64_t* l = len.data<int64_t>();
  Level level{0};
  for (int64_t i = 0; i < x.dim(0); ++i) {
    TIDE_CHECK(l[i] >= 0 && l[i] <= x.dim(1), "op '", op, "': Length[", i, "] = ", l[i],
               " is outside [0, ", x.dim(1), "] (X ('", ctx.InputName("X"), "') dims ",
               tide::ToString(x.dims()), ")");
    level.push_back(level.back() + static_cast<uint64_t>(l[i]));
  }
  return level;
}

Dims UnpaddedDims(const Dims& x, int64_t rows) {
  Dims d{rows};
  for (size_t i = 2; i < x.size(); ++i) d.push_back(x[i]);
  if (x.size() == 2) d.push_back(1);  // [n, len] -> [rows, 1]
  return d;
}

template <typename T>
void SequenceUnpadKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const Level level = UnpadLevel(ctx);
  const int64_t step = DimsProduct(x.dims(), 2, x.rank());
  T* o =
      out.mutable_data<T>(UnpaddedDims(x.dims(), static_cast<int64_t>(level.back())), ctx.place());
  Unpad(x.data<T>(), level, step, x.dim(1), o);
  out.set_lod({level});
}

template <typename T>
void SequenceUnpadGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const Level level = UnpadLevel(ctx);
  const int64_t step = DimsProduct(x.dims(), 2, x.rank());
  TIDE_CHECK(dout.numel() == static_cast<int64_t>(level.back()) * step, "op '", op, "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not hold the ", level.back(), " rows of Out");
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  std::fill(d, d + x.numel(), T(0));
  Pad(dout.data<T>(), level, step, x.dim(1), d);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_pad")
        .Comment("Out[i] = sequence i of X padded with PadValue to padded_length steps; "
                 "Length[i] = its length.")
        .Input("X", "a LoDTensor with 1 LoD level")
        .Input("PadValue", "1 element, or one step of X")
        .Output("Out", "[num_seqs, padded_length, ...]")
        .Output("Length", "int64 [num_seqs]")
        .Attr("padded_length", int32_t(-1), "-1: the longest sequence")
        .KernelDataTypeFrom("X")
        .InferShape([](tide::InferShapeContext& c) {
          const int32_t pl = c.Attr<int32_t>("padded_length");
          TIDE_CHECK(pl == -1 || pl > 0, "op '", c.op_type(),
                     "': padded_length must be -1 or > 0, got ", pl);
          if (c.IsRuntime()) return;  // the kernel sizes Out and Length
          Dims x = c.InputDims("X");
          TIDE_CHECK(!x.empty(), "op '", c.op_type(), "': X must have rank >= 1");
          Dims od{-1, pl};
          od.insert(od.end(), x.begin() + 1, x.end());
          c.SetOutputDims("Out", od);
          c.SetOutputDataType("Out", c.InputDataType("X"));
          c.SetOutputDims("Length", {-1});
          c.SetOutputDataType("Length", TIDE_INT64);
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sequence_pad_grad")
              .Input("X", g.Input("X"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_pad_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("padded_length", int32_t(-1))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_pad", "cpu", SequencePadKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("sequence_pad_grad", "cpu", SequencePadGradKernel, OPS_SEQUENCE_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_unpad")
        .Comment("Out = the first Length[i] steps of each row i of X, with LoD from Length.")
        .Input("X", "[num_seqs, padded_length, ...]")
        .Input("Length", "int64 [num_seqs]")
        .Output("Out", "a LoDTensor [sum(Length), ...] with 1 LoD level")
        .KernelDataTypeFrom("X")
        .InferShape([](tide::InferShapeContext& c) {
          Dims x = c.InputDims("X");
          TIDE_CHECK(x.size() >= 2, "op '", c.op_type(), "': X ('", c.InputName("X"),
                     "') must be [num_seqs, padded_length, ...], got ", tide::ToString(x));
          if (c.IsRuntime()) return;  // the kernel sizes Out
          c.SetOutputDims("Out", UnpaddedDims(x, -1));
          c.SetOutputDataType("Out", c.InputDataType("X"));
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sequence_unpad_grad")
              .Input("X", g.Input("X"))
              .Input("Length", g.Input("Length"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"));
        }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_unpad_grad")
                     .Input("X")
                     .Input("Length")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_unpad", "cpu", SequenceUnpadKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("sequence_unpad_grad", "cpu", SequenceUnpadGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
