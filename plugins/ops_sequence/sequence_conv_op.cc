// sequence_conv_op.cc: sequence_conv (Fluid's sequence_conv_op: a 1-D convolution along each
// sequence of X's 1-level LoD) and its grad. Row t of sequence s sees rows t + contextStart + j,
// j in [0, contextLength), of s only; a position outside s reads a row of PaddingData
// (paddingTrainable) or zeros. PaddingData's first up = max(0, -contextStart) rows stand for the
// positions before a sequence (-up .. -1), the next down = max(0, contextStart + contextLength - 1)
// for those after it. Out = Col * Filter, with Col [T, contextLength * M] the gathered rows.
#include <tide/gemm.hpp>

#include "rnn_common.h"

namespace ops_sequence {
namespace {

struct Context {
  int64_t start, length, up, down;
  bool trainable;
};

template <typename Ctx>
Context ContextOf(const Ctx& ctx) {
  const char* op = ctx.op_type();
  Context c;
  c.start = ctx.template Attr<int32_t>("contextStart");
  c.length = ctx.template Attr<int32_t>("contextLength");
  c.trainable = ctx.template Attr<bool>("paddingTrainable");
  TIDE_CHECK(c.length > 0, "op '", op, "': contextLength must be > 0, got ", c.length);
  const int32_t stride = ctx.template Attr<int32_t>("contextStride");
  TIDE_CHECK(stride == 1, "op '", op, "': contextStride must be 1 (as in Fluid), got ", stride);
  c.up = std::max<int64_t>(0, -c.start);
  c.down = std::max<int64_t>(0, c.start + c.length - 1);
  return c;
}

// Checks X [T, M], Filter [contextLength * M, N], PaddingData [up + down, M]; returns {M, N}.
template <typename Ctx>
std::pair<int64_t, int64_t> CheckConvInputs(const Ctx& ctx, const Context& c) {
  const Dims x = Matrix(ctx, "X", "[T, M]: one row per step");
  const Dims f = Matrix(ctx, "Filter", "[contextLength * M, N]");
  const int64_t m = x[1];
  ExpectInputDims(ctx, "Filter", {m < 0 ? -1 : c.length * m, -1},
                  "[contextLength * M, N] with contextLength " + std::to_string(c.length));
  if (c.trainable) {
    TIDE_CHECK(Given(ctx, "PaddingData"), "op '", ctx.op_type(),
               "': paddingTrainable needs input PaddingData [", c.up + c.down, ", M]");
    ExpectInputDims(ctx, "PaddingData", {c.up + c.down, m},
                    "[max(0, -contextStart) + max(0, contextStart + contextLength - 1), M]");
  }
  return {m, f[1]};
}

// Visits every (Col row, context slot, source) of X's sequences: fn(col_row, slot, x_row, pad_row)
// with exactly one of x_row / pad_row >= 0, or both < 0 for a zero (untrained) padding slot.
template <typename F>
void ForEachContextSlot(const Level& level, const Context& c, F&& fn) {
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const int64_t b = static_cast<int64_t>(level[s]), len = static_cast<int64_t>(level[s + 1]) - b;
    for (int64_t k = 0; k < len; ++k)
      for (int64_t j = 0; j < c.length; ++j) {
        const int64_t p = k + c.start + j;  // the position read, within the sequence
        if (p >= 0 && p < len)
          fn(b + k, j, b + p, int64_t(-1));
        else if (c.trainable)
          fn(b + k, j, int64_t(-1), p < 0 ? p + c.up : c.up + p - len);
        else
          fn(b + k, j, int64_t(-1), int64_t(-1));
      }
  }
}

template <typename T>
void Im2Col(const Level& level, const Context& c, const T* x, const T* pad, int64_t m, T* col) {
  const int64_t w = c.length * m;
  ForEachContextSlot(level, c, [&](int64_t r, int64_t j, int64_t xr, int64_t pr) {
    T* dst = col + r * w + j * m;
    if (xr >= 0)
      std::copy(x + xr * m, x + (xr + 1) * m, dst);
    else if (pr >= 0)
      std::copy(pad + pr * m, pad + (pr + 1) * m, dst);
    else
      std::fill(dst, dst + m, T(0));
  });
}

template <typename T>
void SequenceConvKernel(KernelContext& ctx) {
  const Context c = ContextOf(ctx);
  const LoD lod = InputLoD(ctx, "X", 1);
  const auto [m, n] = CheckConvInputs(ctx, c);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const int64_t rows = x.dim(0), w = c.length * m;
  const T* pad = c.trainable ? ctx.Input("PaddingData").data<T>() : nullptr;
  T* col = ctx.TempBuffer<T>(std::max<int64_t>(rows * w, 1));
  Im2Col(lod[0], c, x.data<T>(), pad, m, col);
  T* o = out.mutable_data<T>({rows, n}, ctx.place());
  tide::Gemm<T>(ctx, false, false, rows, n, w, T(1), col, ctx.Input("Filter").data<T>(), T(0), o);
  out.set_lod(lod);
}

template <typename T>
void SequenceConvGradKernel(KernelContext& ctx) {
  const Context c = ContextOf(ctx);
  const LoD lod = InputLoD(ctx, "X", 1);
  const auto [m, n] = CheckConvInputs(ctx, c);
  Tensor x = ctx.Input("X");
  const int64_t rows = x.dim(0), w = c.length * m;
  const std::string dout_name = GradVarName("Out");
  Tensor dout_t = ctx.Input(dout_name.c_str());
  TIDE_CHECK(dout_t.numel() == rows * n, "op '", ctx.op_type(), "': ", dout_name, " has dims ",
             tide::ToString(dout_t.dims()), ", not Out's [", rows, ", ", n, "]");
  const T* dout = dout_t.data<T>();
  const T* filter = ctx.Input("Filter").data<T>();
  const T* pad = c.trainable ? ctx.Input("PaddingData").data<T>() : nullptr;
  if (Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str())) {
    T* col = ctx.TempBuffer<T>(std::max<int64_t>(rows * w, 1));
    Im2Col(lod[0], c, x.data<T>(), pad, m, col);
    tide::Gemm<T>(ctx, true, false, w, n, rows, T(1), col, dout, T(0),
                  df.mutable_data<T>({w, n}, ctx.place()));
  }
  Tensor dx_t = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dpad_t = ctx.OptionalOutput(GradVarName("PaddingData").c_str());
  if (!dx_t && !dpad_t) return;
  T* dcol = ctx.TempBuffer<T>(std::max<int64_t>(rows * w, 1));
  tide::Gemm<T>(ctx, false, true, rows, w, n, T(1), dout, filter, T(0), dcol);
  T* dx = dx_t ? dx_t.mutable_data<T>({rows, m}, ctx.place()) : nullptr;
  T* dpad = nullptr;
  if (dpad_t) {
    dpad = dpad_t.mutable_data<T>({c.up + c.down, m}, ctx.place());
    std::fill(dpad, dpad + (c.up + c.down) * m, T(0));
  }
  if (dx) std::fill(dx, dx + rows * m, T(0));
  ForEachContextSlot(lod[0], c, [&](int64_t r, int64_t j, int64_t xr, int64_t pr) {
    T* dst = xr >= 0 ? (dx ? dx + xr * m : nullptr) : (pr >= 0 && dpad ? dpad + pr * m : nullptr);
    if (!dst) return;
    const T* src = dcol + r * w + j * m;
    for (int64_t i = 0; i < m; ++i) dst[i] += src[i];
  });
  if (dx) dx_t.set_lod(lod);
}

void SequenceConvShape(tide::InferShapeContext& ctx) {
  const Context c = ContextOf(ctx);
  const auto [m, n] = CheckConvInputs(ctx, c);
  (void)m;
  if (ctx.IsRuntime()) return;  // the kernel sizes Out
  ctx.SetOutputDims("Out", {ctx.InputDims("X")[0], n});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

tide::OpSchema ConvAttrs(tide::OpSchema s) {
  return s.Attr("paddingTrainable", false, "positions outside a sequence read PaddingData")
      .Attr("contextLength", int32_t(3), "rows each output row sees")
      .Attr("contextStart", int32_t(0), "the first of them, relative to the row (may be < 0)")
      .Attr("contextStride", int32_t(1), "must be 1");
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ConvAttrs(tide::OpSchema("sequence_conv"))
                     .Comment("A convolution along each sequence of X's 1-level LoD: Out[t] = "
                              "[X[t + contextStart] .. X[t + contextStart + contextLength - 1]] "
                              "Filter, positions outside the sequence padded.")
                     .Input("X", "[T, M], LoD level 1")
                     .Input("PaddingData", "[up + down, M]: the trainable padding rows")
                     .AsDispensable()
                     .Input("Filter", "[contextLength * M, N]")
                     .Output("Out", "[T, N], X's LoD")
                     .InferShape(SequenceConvShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("sequence_conv_grad");
                       for (const char* p : {"X", "PaddingData", "Filter"}) op.Input(p, g.Input(p));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"));
                       for (const char* p : {"X", "PaddingData", "Filter"})
                         op.Output(GradVarName(p), g.InputGrad(p));
                       op.CopyAttrs();
                     }));
TIDE_REGISTER_OP(ConvAttrs(tide::OpSchema("sequence_conv_grad"))
                     .Input("X")
                     .Input("PaddingData")
                     .AsDispensable()
                     .Input("Filter")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("PaddingData"))
                     .AsDispensable()
                     .Output(GradVarName("Filter"))
                     .AsDispensable()
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"X", "PaddingData", "Filter"});
                     }));
TIDE_REGISTER_KERNEL("sequence_conv", "cpu", SequenceConvKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sequence_conv_grad", "cpu", SequenceConvGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
