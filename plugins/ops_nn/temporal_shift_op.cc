// temporal_shift_op.cc: Paddle's temporal_shift (video TSM models, F.temporal_shift): X holds
// N clips of seg_num frames, [N * seg_num, C, H, W] (NCHW) or [N * seg_num, H, W, C] (NHWC).
// The first C * shift_ratio channels of each frame take the previous frame's values, the next
// C * shift_ratio (up to C * 2 * shift_ratio) the following frame's, the rest stay; a frame shifted
// in from outside the clip is zeros. The grad shifts Out@GRAD back the other way.
#include <string>

#include "common.h"

namespace ops_nn {
namespace {

// The strides of one shift: frame (t * frame elements), channel test, per element.
struct ShiftGeom {
  int64_t t = 0, frame = 0;  // frames per clip, elements per frame (C H W)
  int64_t c = 0, hw = 0, c1 = 0, c2 = 0;
  bool nhwc = false;
  int64_t Channel(int64_t i) const { return nhwc ? i % c : (i % frame) / hw; }
  int64_t Frame(int64_t i) const { return (i % (t * frame)) / frame; }
  // The frame a channel reads from, relative to its own: -1 (previous), +1 (next) or 0.
  int64_t Shift(int64_t i) const {
    const int64_t ic = Channel(i);
    return ic < c1 ? -1 : ic < c2 ? 1 : 0;
  }
};

bool IsNhwc(const char* op, const std::string& f) {
  TIDE_CHECK(f == "NCHW" || f == "NHWC", "op '", op,
             "': data_format must be 'NCHW' or 'NHWC', got '", f, "'");
  return f == "NHWC";
}

void CheckAttrs(const char* op, int32_t seg_num, float shift_ratio) {
  TIDE_CHECK(seg_num > 0, "op '", op, "': seg_num must be > 0, got ", seg_num);
  TIDE_CHECK(shift_ratio > 0 && shift_ratio < 0.5f, "op '", op,
             "': shift_ratio must be in (0, 0.5), got ", shift_ratio);
}

void CheckX(const char* op, const std::string& name, const Dims& x, int32_t seg_num) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X ('", name,
             "') must be 4-D [N * seg_num, C, H, W] or [N * seg_num, H, W, C], but is ",
             tide::ToString(x));
  TIDE_CHECK(x[0] < 0 || x[0] % seg_num == 0, "op '", op, "': X ('", name, "')'s first dim ", x[0],
             " is not a multiple of seg_num ", seg_num);
}

ShiftGeom GeomOf(KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const int32_t seg_num = ctx.Attr<int32_t>("seg_num");
  const float ratio = ctx.Attr<float>("shift_ratio");
  CheckAttrs(op, seg_num, ratio);
  CheckX(op, ctx.InputName("X"), x, seg_num);
  ShiftGeom g;
  g.nhwc = IsNhwc(op, ctx.Attr<std::string>("data_format"));
  g.t = seg_num;
  g.c = g.nhwc ? x[3] : x[1];
  g.hw = g.nhwc ? x[1] * x[2] : x[2] * x[3];
  g.frame = g.c * g.hw;
  // Paddle's int(C * shift_ratio) and int(C * 2 * shift_ratio), in float.
  g.c1 = static_cast<int64_t>(static_cast<float>(g.c) * ratio);
  g.c2 = static_cast<int64_t>(static_cast<float>(g.c) * 2 * ratio);
  return g;
}

void TemporalShiftShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckAttrs(op, ctx.Attr<int32_t>("seg_num"), ctx.Attr<float>("shift_ratio"));
  IsNhwc(op, ctx.Attr<std::string>("data_format"));
  CheckX(op, ctx.InputName("X"), ctx.InputDims("X"), ctx.Attr<int32_t>("seg_num"));
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void TemporalShiftKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const ShiftGeom g = GeomOf(ctx, x.dims());
  const T* in = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const int64_t s = g.Shift(i), src = g.Frame(i) + s;
    out[i] = src < 0 || src >= g.t ? T(0) : in[i + s * g.frame];
  }
}

// X@GRAD[j] collects the Out@GRAD of the element that read X[j]: Out[i] = X[i + s frames].
template <typename T>
void TemporalShiftGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const ShiftGeom g = GeomOf(ctx, dout.dims());
  const T* go = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(dout.dims(), ctx.place());
  const int64_t n = dout.numel();
  std::fill(dx, dx + n, T(0));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = g.Shift(i), src = g.Frame(i) + s;
    if (src >= 0 && src < g.t) dx[i + s * g.frame] = go[i];
  }
}

tide::OpSchema ShiftAttrs(tide::OpSchema s) {
  return s.RequiredAttr("seg_num", TIDE_ATTR_INT, "frames per clip (X's first dim / N)")
      .Attr("shift_ratio", 0.25f, "the share of channels shifted each way, in (0, 0.5)")
      .Attr("data_format", std::string("NCHW"), "'NCHW' or 'NHWC'");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ShiftAttrs(
    tide::OpSchema("temporal_shift")
        .Comment("Shifts the first C * shift_ratio channels of each frame one frame later, the "
                 "next C * shift_ratio one frame earlier (zeros shifted in at a clip's ends).")
        .Input("X", "[N * seg_num, C, H, W] (NCHW) or [N * seg_num, H, W, C] (NHWC)")
        .Output("Out", "X's dims")
        .InferShape(TemporalShiftShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("temporal_shift_grad")
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        })));
TIDE_REGISTER_OP(ShiftAttrs(tide::OpSchema("temporal_shift_grad")
                                .Input(GradVarName("Out"))
                                .Output(GradVarName("X"))
                                .InferShape([](tide::InferShapeContext& c) {
                                  const std::string g = GradVarName("X");
                                  const std::string o = GradVarName("Out");
                                  c.SetOutputDims(g.c_str(), c.InputDims(o.c_str()));
                                  c.SetOutputDataType(g.c_str(), c.InputDataType(o.c_str()));
                                })));
TIDE_REGISTER_KERNEL("temporal_shift", "cpu", TemporalShiftKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("temporal_shift_grad", "cpu", TemporalShiftGradKernel, OPS_NN_FLOAT_TYPES);
