// pad3d_op.cc: Paddle 2.x's pad3d (F.pad of a 5-D tensor, and of a 4-D one, which Paddle unsqueezes
// to 5-D): X [N, C, D, H, W] (NCDHW) or [N, D, H, W, C] (NDHWC) padded by paddings (left, right,
// top, bottom, front, back), from the Paddings tensor (6 int32) over the attribute, in mode
// constant (`value`), reflect (mirrored without the edge), replicate (the edge repeated) or
// circular (wrapped); and its grad (Out@GRAD summed back to the elements each padded one copies).
#include <string>

#include "common.h"

namespace ops_nn {
namespace {

enum class Pad3dMode { kConstant, kReflect, kReplicate, kCircular };

// X's spatial dims {D, H, W}, the pads per spatial dim {before, after}, and the layout.
struct Pad3dGeom {
  int64_t n, c;
  int64_t in[3], out[3];
  int64_t before[3];
  bool channels_last;
  Pad3dMode mode;
  Dims OutDims() const {
    return channels_last ? Dims{n, out[0], out[1], out[2], c} : Dims{n, c, out[0], out[1], out[2]};
  }
};

Pad3dMode ModeOf(const char* op, const std::string& m) {
  if (m == "constant") return Pad3dMode::kConstant;
  if (m == "reflect") return Pad3dMode::kReflect;
  if (m == "replicate") return Pad3dMode::kReplicate;
  if (m == "circular") return Pad3dMode::kCircular;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op,
             "': mode must be constant, reflect, replicate or circular, got '", m, "'");
}

// p: left, right, top, bottom, front, back (Paddle's order: W first).
Pad3dGeom GetPad3dGeom(const char* op, const Dims& x, const std::vector<int64_t>& p,
                       const std::string& mode, const std::string& format) {
  TIDE_CHECK(x.size() == 5, "op '", op, "': X must be 5-D, got ", tide::ToString(x));
  TIDE_CHECK(p.size() == 6, "op '", op, "': paddings needs 6 values (left, right, top, bottom, ",
             "front, back), got ", p.size());
  TIDE_CHECK(format == "NCDHW" || format == "NDHWC", "op '", op,
             "': data_format must be NCDHW or NDHWC, got '", format, "'");
  Pad3dGeom g;
  g.channels_last = format == "NDHWC";
  g.mode = ModeOf(op, mode);
  g.n = x[0];
  g.c = g.channels_last ? x[4] : x[1];
  const int first = g.channels_last ? 1 : 2;
  for (int s = 0; s < 3; ++s) {
    const int64_t b = p[2 * (2 - s)], a = p[2 * (2 - s) + 1];  // D: front/back, H, W: left/right
    TIDE_CHECK(b >= 0 && a >= 0, "op '", op, "': paddings ", tide::ToString(p), " must be >= 0");
    const int64_t in = x[first + s];
    g.in[s] = in;
    g.before[s] = b;
    g.out[s] = -1;
    if (in >= 0)
      TIDE_CHECK(!__builtin_add_overflow(in, b, &g.out[s]) &&
                     !__builtin_add_overflow(g.out[s], a, &g.out[s]),
                 "op '", op, "': paddings ", tide::ToString(p), " of X ", tide::ToString(x),
                 " make a dim past int64");
    if (in < 0) continue;
    if (g.mode == Pad3dMode::kReflect)
      TIDE_CHECK(b < in && a < in, "op '", op, "': reflect padding ", b, ", ", a,
                 " must be less than the input's dim ", in, " (X ", tide::ToString(x), ")");
    if (g.mode == Pad3dMode::kReplicate || g.mode == Pad3dMode::kCircular)
      TIDE_CHECK(in > 0 && (g.mode == Pad3dMode::kReplicate || (b <= in && a <= in)), "op '", op,
                 "': ", mode, " padding ", b, ", ", a, " of the input's dim ", in, " (X ",
                 tide::ToString(x), ")");
  }
  return g;
}

// The source index along one dim of padded index i, or -1 (the constant).
int64_t Pad3dSource(Pad3dMode mode, int64_t i, int64_t before, int64_t n) {
  int64_t j = i - before;
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case Pad3dMode::kConstant:
      return -1;
    case Pad3dMode::kReflect:
      return j < 0 ? -j : 2 * (n - 1) - j;
    case Pad3dMode::kReplicate:
      return j < 0 ? 0 : n - 1;
    case Pad3dMode::kCircular:
      return ((j % n) + n) % n;
  }
  return -1;
}

std::vector<int64_t> PaddingsOf(const KernelContext& ctx) {
  if (ctx.HasInput("Paddings")) return IntValues(ctx, "Paddings");
  const auto p = ctx.Attr<std::vector<int32_t>>("paddings");
  return std::vector<int64_t>(p.begin(), p.end());
}

Pad3dGeom Pad3dGeomOf(const KernelContext& ctx, const Dims& x) {
  return GetPad3dGeom(ctx.op_type(), x, PaddingsOf(ctx), ctx.Attr<std::string>("mode"),
                      ctx.Attr<std::string>("data_format"));
}

// fn(out_index, x_index or -1) for every element of Out.
template <typename F>
void ForEachPadded(const Pad3dGeom& g, F&& fn) {
  std::vector<int64_t> src[3];
  for (int s = 0; s < 3; ++s)
    for (int64_t i = 0; i < g.out[s]; ++i)
      src[s].push_back(Pad3dSource(g.mode, i, g.before[s], g.in[s]));
  // NCDHW: one plane of D*H*W per (n, c); NDHWC: one per n, C elements per position.
  const int64_t planes = g.channels_last ? g.n : g.n * g.c;
  const int64_t inner = g.channels_last ? g.c : 1;
  const int64_t plane = g.in[0] * g.in[1] * g.in[2] * inner;
  int64_t o = 0;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t d = 0; d < g.out[0]; ++d)
      for (int64_t h = 0; h < g.out[1]; ++h)
        for (int64_t w = 0; w < g.out[2]; ++w) {
          const int64_t sd = src[0][d], sh = src[1][h], sw = src[2][w];
          const bool pad = sd < 0 || sh < 0 || sw < 0;
          const int64_t xi = pl * plane + ((sd * g.in[1] + sh) * g.in[2] + sw) * inner;
          for (int64_t k = 0; k < inner; ++k, ++o) fn(o, pad ? -1 : xi + k);
        }
}

void Pad3dInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  std::vector<int64_t> p;
  if (ctx.HasInput("Paddings")) {
    if (ctx.IsRuntime()) return;  // the kernel sets Out's dims
    TIDE_CHECK(x.size() == 5, "op '", op, "': X must be 5-D, got ", tide::ToString(x));
    const bool last = ctx.Attr<std::string>("data_format") == "NDHWC";
    ctx.SetOutputDims("Out", last ? Dims{x[0], -1, -1, -1, x[4]} : Dims{x[0], x[1], -1, -1, -1});
  } else {
    const auto a = ctx.Attr<std::vector<int32_t>>("paddings");
    p.assign(a.begin(), a.end());
    ctx.SetOutputDims("Out", GetPad3dGeom(op, x, p, ctx.Attr<std::string>("mode"),
                                          ctx.Attr<std::string>("data_format"))
                                 .OutDims());
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void Pad3dKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Pad3dGeom g = Pad3dGeomOf(ctx, x.dims());
  const T value = static_cast<T>(ctx.Attr<float>("value"));
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(g.OutDims(), ctx.place());
  ForEachPadded(g, [&](int64_t i, int64_t s) { o[i] = s < 0 ? value : xd[s]; });
}

template <typename T>
void Pad3dGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const Pad3dGeom g = Pad3dGeomOf(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.OutDims());
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachPadded(g, [&](int64_t i, int64_t s) {
    if (s >= 0) dx[s] += gd[i];
  });
}

tide::OpSchema Pad3dAttrs(tide::OpSchema s) {
  return s
      .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0, 0, 0},
            "left, right, top, bottom, front, back")
      .Attr("mode", std::string("constant"), "constant, reflect, replicate or circular")
      .InSet({"constant", "reflect", "replicate", "circular"})
      .Attr("value", 0.0f, "the constant mode's value")
      .Attr("data_format", std::string("NCDHW"), "NCDHW or NDHWC")
      .InSet({"NCDHW", "NDHWC"});
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(Pad3dAttrs(tide::OpSchema("pad3d")
                                .Comment("Out = X [N, C, D, H, W] (or NDHWC) padded along D, H, W "
                                         "(F.pad): constant, reflect, replicate or circular.")
                                .Input("X", "5-D input")
                                .Input("Paddings", "6 int32 paddings (optional; over paddings)")
                                .AsDispensable()
                                .Output("Out", "the padded input"))
                     .KernelDataTypeFrom("X")
                     .InferShape(Pad3dInferShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("pad3d_grad");
                       op.Input("X", g.Input("X"));
                       if (!g.Input("Paddings").empty()) op.Input("Paddings", g.Input("Paddings"));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(Pad3dAttrs(tide::OpSchema("pad3d_grad")
                                .Comment("X@GRAD of pad3d: Out@GRAD summed back to the elements "
                                         "each padded element copies.")
                                .Input("X")
                                .Input("Paddings")
                                .AsDispensable()
                                .Input(GradVarName("Out"))
                                .Output(GradVarName("X")))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("pad3d", "cpu", Pad3dKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("pad3d_grad", "cpu", Pad3dGradKernel, OPS_NN_FLOAT_TYPES);
