// frame_ops.cc: Paddle's frame and overlap_add (paddle.signal.frame / overlap_add, under
// paddle.signal.stft / istft and paddle.audio's spectrograms) and their grads.
//  - frame: the signal axis of X (axis -1: X [..., seq], Out [..., frame_length, frames];
//    axis 0: X [seq, ...], Out [frames, frame_length, ...]) cut into frames of frame_length
//    samples, hop_length apart: frames = 1 + (seq - frame_length) / hop_length, frame f's i-th
//    sample X[f * hop_length + i]. Its grad adds each frame's gradient back onto the samples.
//  - overlap_add: the inverse layout (axis -1: X [..., frame_length, frames], Out [..., seq];
//    axis 0: X [frames, frame_length, ...], Out [seq, ...]), seq = (frames - 1) * hop_length +
//    frame_length, overlapping samples summed. Its grad is the frames of Out's gradient.
// The grads only move and sum values: on complex types too (z@GRAD = dL/dx + i dL/dy moves as
// z does).
// Bad attributes (axis not 0 / -1, hop_length <= 0, frame_length <= 0 or over the signal,
// overlap_add's hop_length over the frame length) are refused naming the op and value.
#include "common.h"

namespace ops_fft {
namespace {

// A signal [pre, seq, post] and its frames: axis -1 (post = 1, frames after frame_length) or
// axis 0 (pre = 1, frames first).
struct FrameGeometry {
  int64_t pre = 1, seq = 0, post = 1, len = 0, frames = 0, hop = 1;
  bool last_axis = true;
};

// Calls fn(offset in the signal, offset in the frames) for every sample of every frame.
template <typename Fn>
void ForEachFrameSample(const FrameGeometry& g, Fn fn) {
  if (g.last_axis) {
    for (int64_t p = 0; p < g.pre; ++p)
      for (int64_t i = 0; i < g.len; ++i)
        for (int64_t f = 0; f < g.frames; ++f)
          fn(p * g.seq + f * g.hop + i, (p * g.len + i) * g.frames + f);
  } else {
    for (int64_t f = 0; f < g.frames; ++f)
      for (int64_t i = 0; i < g.len; ++i)
        for (int64_t q = 0; q < g.post; ++q)
          fn((f * g.hop + i) * g.post + q, (f * g.len + i) * g.post + q);
  }
}

// Signal -> frames (frame; overlap_add's grad).
template <typename T>
void CutFrames(const FrameGeometry& g, const T* signal, T* frames) {
  ForEachFrameSample(g, [&](int64_t si, int64_t fi) { frames[fi] = signal[si]; });
}

// Frames -> a signal of n samples, overlapping samples summed (overlap_add; frame's grad).
template <typename T>
void AddFrames(const FrameGeometry& g, const T* frames, T* signal, int64_t n) {
  std::fill(signal, signal + n, T(0));
  ForEachFrameSample(g, [&](int64_t si, int64_t fi) { signal[si] += frames[fi]; });
}

int CheckAxisAttr(const char* op, int axis) {
  TIDE_CHECK(axis == 0 || axis == -1, "op '", op, "': attribute 'axis' must be 0 or -1, got ",
             axis);
  return axis;
}

// frame's output dims from X's (-1 where unknown at compile time); checks frame_length against
// the signal's length when it is known.
Dims FrameOutDims(const char* op, const std::string& x_name, const Dims& x, int64_t len,
                  int64_t hop, int axis) {
  CheckAxisAttr(op, axis);
  TIDE_CHECK(!x.empty(), "op '", op, "': X ('", x_name, "') must have at least 1 dim, got 0-D");
  TIDE_CHECK(hop > 0, "op '", op, "': attribute 'hop_length' must be > 0, got ", hop);
  TIDE_CHECK(len > 0, "op '", op, "': attribute 'frame_length' must be > 0, got ", len);
  const int64_t seq = axis == 0 ? x.front() : x.back();
  TIDE_CHECK(seq < 0 || len <= seq, "op '", op, "': attribute 'frame_length' = ", len,
             " is more than the ", seq, " samples of X ('", x_name, "') ", tide::ToString(x),
             " along axis ", axis);
  const int64_t frames = seq < 0 ? -1 : 1 + (seq - len) / hop;
  Dims out;
  if (axis == 0) {
    out = {frames, len};
    out.insert(out.end(), x.begin() + 1, x.end());
  } else {
    out.assign(x.begin(), x.end() - 1);
    out.push_back(len);
    out.push_back(frames);
  }
  return out;
}

// overlap_add's output dims from X's (-1 where unknown); checks hop_length against the frame
// length when it is known.
Dims OverlapAddOutDims(const char* op, const std::string& x_name, const Dims& x, int64_t hop,
                       int axis) {
  CheckAxisAttr(op, axis);
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X ('", x_name,
             "') must have at least 2 dims (frame_length and frames), got ", tide::ToString(x));
  TIDE_CHECK(hop > 0, "op '", op, "': attribute 'hop_length' must be > 0, got ", hop);
  const size_t r = x.size();
  const int64_t frames = axis == 0 ? x[0] : x[r - 1], len = axis == 0 ? x[1] : x[r - 2];
  TIDE_CHECK(len < 0 || hop <= len, "op '", op, "': attribute 'hop_length' = ", hop,
             " is more than the frame length ", len, " of X ('", x_name, "') ", tide::ToString(x),
             ": samples between frames would be missing");
  const int64_t seq = frames < 0 || len < 0 ? -1 : (frames - 1) * hop + len;
  Dims out;
  if (axis == 0) {
    out = {seq};
    out.insert(out.end(), x.begin() + 2, x.end());
  } else {
    out.assign(x.begin(), x.end() - 2);
    out.push_back(seq);
  }
  return out;
}

// The geometry of frame's X (the signal) and its frames.
FrameGeometry FrameGeometryOf(const Dims& signal, const Dims& framed, int64_t hop, int axis) {
  FrameGeometry g;
  g.hop = hop;
  g.last_axis = axis != 0;
  g.seq = g.last_axis ? signal.back() : signal.front();
  g.frames = g.last_axis ? framed.back() : framed[0];
  g.len = g.last_axis ? framed[framed.size() - 2] : framed[1];
  if (g.last_axis)
    g.pre = DimsProduct(signal, 0, signal.size() - 1);
  else
    g.post = DimsProduct(signal, 1, signal.size());
  return g;
}

struct FrameAttrs {
  int64_t len, hop;
  int axis;
};
FrameAttrs ReadFrameAttrs(const KernelContext& ctx, bool with_length) {
  return {with_length ? ctx.Attr<int32_t>("frame_length") : 0, ctx.Attr<int32_t>("hop_length"),
          ctx.Attr<int32_t>("axis")};
}

template <typename T>
void FrameKernel(KernelContext& ctx) {
  const FrameAttrs a = ReadFrameAttrs(ctx, true);
  Tensor x = ctx.Input("X");
  const Dims od = FrameOutDims(ctx.op_type(), ctx.InputName("X"), x.dims(), a.len, a.hop, a.axis);
  const FrameGeometry g = FrameGeometryOf(x.dims(), od, a.hop, a.axis);
  CutFrames(g, x.data<T>(), ctx.Output("Out").mutable_data<T>(od, ctx.place()));
}

template <typename T>
void FrameGradKernel(KernelContext& ctx) {
  const FrameAttrs a = ReadFrameAttrs(ctx, true);
  const Dims xd = ctx.Input("X").dims();
  const Dims od = FrameOutDims(ctx.op_type(), ctx.InputName("X"), xd, a.len, a.hop, a.axis);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const FrameGeometry g = FrameGeometryOf(xd, od, a.hop, a.axis);
  AddFrames(g, dout.data<T>(),
            ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, ctx.place()), DimsProduct(xd));
}

template <typename T>
void OverlapAddKernel(KernelContext& ctx) {
  const FrameAttrs a = ReadFrameAttrs(ctx, false);
  Tensor x = ctx.Input("X");
  const Dims od = OverlapAddOutDims(ctx.op_type(), ctx.InputName("X"), x.dims(), a.hop, a.axis);
  const FrameGeometry g = FrameGeometryOf(od, x.dims(), a.hop, a.axis);
  AddFrames(g, x.data<T>(), ctx.Output("Out").mutable_data<T>(od, ctx.place()), DimsProduct(od));
}

template <typename T>
void OverlapAddGradKernel(KernelContext& ctx) {
  const FrameAttrs a = ReadFrameAttrs(ctx, false);
  const Dims xd = ctx.Input("X").dims();
  const Dims od = OverlapAddOutDims(ctx.op_type(), ctx.InputName("X"), xd, a.hop, a.axis);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const FrameGeometry g = FrameGeometryOf(od, xd, a.hop, a.axis);
  CutFrames(g, dout.data<T>(),
            ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, ctx.place()));
}

void FrameInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out",
                    FrameOutDims(ctx.op_type(), ctx.InputName("X"), ctx.InputDims("X"),
                                 ctx.Attr<int32_t>("frame_length"), ctx.Attr<int32_t>("hop_length"),
                                 ctx.Attr<int32_t>("axis")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void OverlapAddInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out",
                    OverlapAddOutDims(ctx.op_type(), ctx.InputName("X"), ctx.InputDims("X"),
                                      ctx.Attr<int32_t>("hop_length"), ctx.Attr<int32_t>("axis")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void GradLikeX(tide::InferShapeContext& ctx) { tide::ops::GradsLikeInputs(ctx, {"X"}); }

// The grad op of frame / overlap_add: X (for its dims) and Out@GRAD -> X@GRAD.
void MakeGrad(tide::GradMaker& g, const char* type) {
  g.NewOp(type)
      .Input("X", g.Input("X"))
      .Input(GradVarName("Out"), g.OutputGrad("Out"))
      .Output(GradVarName("X"), g.InputGrad("X"))
      .CopyAttrs();
}

tide::OpSchema FrameAttrsOf(tide::OpSchema s, bool with_length) {
  if (with_length)
    s.RequiredAttr("frame_length", TIDE_ATTR_INT, "samples per frame (> 0, <= the signal's)");
  return s.RequiredAttr("hop_length", TIDE_ATTR_INT, "samples from one frame to the next (> 0)")
      .Attr("axis", int32_t{-1}, "the signal axis: -1 (the last) or 0 (the first)");
}

}  // namespace
}  // namespace ops_fft

using namespace ops_fft;  // NOLINT: registration macros below

TIDE_REGISTER_OP(FrameAttrsOf(tide::OpSchema("frame")
                                  .Comment("Out = X's signal axis cut into frames of "
                                           "frame_length samples, hop_length apart "
                                           "(paddle.signal.frame).")
                                  .Input("X", "the signal: [..., seq] (axis -1), [seq, ...] (0)")
                                  .Output("Out",
                                          "[..., frame_length, frames] or "
                                          "[frames, frame_length, ...]"),
                              true)
                     .InferShape(FrameInferShape)
                     .Grad([](tide::GradMaker& g) { MakeGrad(g, "frame_grad"); }));
TIDE_REGISTER_OP(
    FrameAttrsOf(
        tide::OpSchema("frame_grad").Input("X").Input(GradVarName("Out")).Output(GradVarName("X")),
        true)
        .KernelDataTypeFrom("X")
        .InferShape(GradLikeX));
TIDE_REGISTER_OP(FrameAttrsOf(tide::OpSchema("overlap_add")
                                  .Comment("Out = the frames of X added at hop_length apart "
                                           "(paddle.signal.overlap_add).")
                                  .Input("X",
                                         "[..., frame_length, frames] (axis -1) or "
                                         "[frames, frame_length, ...] (0)")
                                  .Output("Out",
                                          "[..., seq] or [seq, ...], seq = (frames - 1) * "
                                          "hop_length + frame_length"),
                              false)
                     .InferShape(OverlapAddInferShape)
                     .Grad([](tide::GradMaker& g) { MakeGrad(g, "overlap_add_grad"); }));
TIDE_REGISTER_OP(FrameAttrsOf(tide::OpSchema("overlap_add_grad")
                                  .Input("X")
                                  .Input(GradVarName("Out"))
                                  .Output(GradVarName("X")),
                              false)
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLikeX));
TIDE_REGISTER_KERNEL("frame", "cpu", FrameKernel, OPS_FFT_FRAME_TYPES);
TIDE_REGISTER_KERNEL("frame_grad", "cpu", FrameGradKernel, OPS_FFT_FRAME_GRAD_TYPES);
TIDE_REGISTER_KERNEL("overlap_add", "cpu", OverlapAddKernel, OPS_FFT_FRAME_TYPES);
TIDE_REGISTER_KERNEL("overlap_add_grad", "cpu", OverlapAddGradKernel, OPS_FFT_FRAME_GRAD_TYPES);
