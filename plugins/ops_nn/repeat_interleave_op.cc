// repeat_interleave_op.cc: Paddle's repeat_interleave (paddle.repeat_interleave: each slice
// of X along `dim` repeated `Repeats` times, or RepeatsTensor[k] times for slice k; PIR's
// repeat_interleave and repeat_interleave_with_tensor_index) and its grad (each slice's
// gradient the sum of its copies').
#include <string>
#include <vector>

#include "common.h"

namespace ops_nn {
namespace {

// The number of copies of each of X's `n` slices along dim.
std::vector<int64_t> Copies(const KernelContext& ctx, int64_t n) {
  const char* op = ctx.op_type();
  std::vector<int64_t> c;
  if (ctx.HasInput("RepeatsTensor")) {
    c = IntValues(ctx, "RepeatsTensor");
    TIDE_CHECK(static_cast<int64_t>(c.size()) == n, "op '", op, "': RepeatsTensor ('",
               ctx.InputName("RepeatsTensor"), "') needs one count per slice of X along dim (", n,
               "), got ", c.size());
  } else {
    c.assign(static_cast<size_t>(n), ctx.Attr<int32_t>("Repeats"));
  }
  for (size_t k = 0; k < c.size(); ++k)
    TIDE_CHECK(c[k] >= 0, "op '", op, "': repeat counts must be >= 0, got ", c[k], " for slice ",
               k);
  return c;
}

// X as [pre, n, post] around dim.
tide::ops::AxisSplit SplitOf(const KernelContext& ctx, const Dims& x) {
  if (x.empty()) return {1, 1, 1};  // a 0-D X is one slice
  return tide::ops::SplitAt(ctx.op_type(), x, ctx.Attr<int32_t>("dim"));
}

Dims OutDims(const KernelContext& ctx, const Dims& x, int64_t rows) {
  if (x.empty()) return {rows};
  Dims out = x;
  out[NormAxis(ctx.op_type(), ctx.Attr<int32_t>("dim"), x.size())] = rows;
  return out;
}

template <typename T>
void RepeatInterleaveKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const auto s = SplitOf(ctx, x.dims());
  const std::vector<int64_t> copies = Copies(ctx, s.n);
  int64_t rows = 0;
  for (int64_t c : copies) rows += c;
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(OutDims(ctx, x.dims(), rows), ctx.place());
  for (int64_t p = 0; p < s.pre; ++p) {
    T* dst = o + p * rows * s.post;
    for (int64_t k = 0; k < s.n; ++k) {
      const T* src = xd + (p * s.n + k) * s.post;
      for (int64_t r = 0; r < copies[k]; ++r, dst += s.post) std::copy(src, src + s.post, dst);
    }
  }
}

template <typename T>
void RepeatInterleaveGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const auto s = SplitOf(ctx, x.dims());
  const std::vector<int64_t> copies = Copies(ctx, s.n);
  int64_t rows = 0;
  for (int64_t c : copies) rows += c;
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t p = 0; p < s.pre; ++p) {
    const T* src = g + p * rows * s.post;
    for (int64_t k = 0; k < s.n; ++k) {
      T* dst = dx + (p * s.n + k) * s.post;
      for (int64_t r = 0; r < copies[k]; ++r, src += s.post)
        for (int64_t e = 0; e < s.post; ++e) dst[e] += src[e];
    }
  }
}

void RepeatInterleaveInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const char* op = ctx.op_type();
  const int64_t repeats = ctx.Attr<int32_t>("Repeats");
  Dims out = x.empty() ? Dims{1} : x;
  const int a = x.empty() ? 0 : NormAxis(op, ctx.Attr<int32_t>("dim"), x.size());
  if (ctx.HasInput("RepeatsTensor")) {
    out[a] = -1;  // the counts' sum, known when the kernel runs
  } else {
    TIDE_CHECK(repeats >= 0, "op '", op, "': Repeats must be >= 0, got ", repeats);
    out[a] = out[a] < 0 ? -1 : out[a] * repeats;
  }
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::OpSchema RepeatAttrs(tide::OpSchema s) {
  return s.Attr("Repeats", int32_t{0}, "the copies of every slice (without RepeatsTensor)")
      .Attr("dim", int32_t{0}, "the dim repeated (negative: from the end)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(RepeatAttrs(tide::OpSchema("repeat_interleave")
                                 .Comment("Out = each slice of X along dim repeated Repeats "
                                          "(RepeatsTensor[k]) times (paddle.repeat_interleave).")
                                 .Input("X", "the input")
                                 .Input("RepeatsTensor",
                                        "int32/int64 counts, one per slice (optional; over "
                                        "Repeats)")
                                 .AsDispensable()
                                 .Output("Out", "X with dim grown to the counts' sum")
                                 .InferShape(RepeatInterleaveInferShape))
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("repeat_interleave_grad");
                       op.Input("X", g.Input("X"));
                       if (!g.Input("RepeatsTensor").empty())
                         op.Input("RepeatsTensor", g.Input("RepeatsTensor"));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(RepeatAttrs(tide::OpSchema("repeat_interleave_grad")
                                 .Input("X")
                                 .Input("RepeatsTensor")
                                 .AsDispensable()
                                 .Input(GradVarName("Out"))
                                 .Output(GradVarName("X"))
                                 .KernelDataTypeFrom("X")
                                 .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("repeat_interleave", "cpu", RepeatInterleaveKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("repeat_interleave_grad", "cpu", RepeatInterleaveGradKernel,
                     OPS_NN_FLOAT_TYPES);
