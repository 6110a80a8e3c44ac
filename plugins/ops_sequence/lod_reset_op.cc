// lod_reset_op.cc: lod_reset (Out = X's data with a new LoD: Y's LoD, or Y's data as level-0
// offsets when Y has none, or attribute target_lod when there is no Y) and its grad (Out@GRAD's
// data with X's LoD).
#include "common.h"

namespace ops_sequence {
namespace {

template <typename I>
Level LevelFromData(const Tensor& t) {
  const I* d = t.data<I>();
  Level level;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (d[i] < 0) return {};  // reported by the caller as not ascending from 0
    level.push_back(static_cast<uint64_t>(d[i]));
  }
  return level;
}

LoD TargetLoD(const KernelContext& ctx, const Tensor& x) {
  const char* op = ctx.op_type();
  Tensor y = ctx.OptionalInput("Y");
  LoD lod;
  std::string from;
  if (y) {
    from = "Y ('" + ctx.InputName("Y") + "')";
    lod = y.lod();
    if (lod.empty()) {
      TIDE_CHECK(y.dtype() == TIDE_INT32 || y.dtype() == TIDE_INT64, "op '", op, "': ", from,
                 " has no LoD, so its data are the offsets and must be int32 or int64, got ",
                 tide::DataTypeName(y.dtype()));
      Level level = y.dtype() == TIDE_INT32 ? LevelFromData<int32_t>(y) : LevelFromData<int64_t>(y);
      TIDE_CHECK(!level.empty() || y.numel() == 0, "op '", op, "': ", from,
                 " holds a negative offset");
      lod.push_back(level);
      from += " data";
    } else {
      from += " LoD";
    }
  } else {
    from = "target_lod";
    std::vector<int32_t> t = ctx.Attr<std::vector<int32_t>>("target_lod");
    TIDE_CHECK(!t.empty(), "op '", op,
               "': there is no Y and target_lod is empty; one of them "
               "must give the new LoD");
    Level level;
    for (int32_t v : t) {
      TIDE_CHECK(v >= 0, "op '", op, "': target_lod has a negative offset ", v);
      level.push_back(static_cast<uint64_t>(v));
    }
    lod.push_back(level);
  }
  TIDE_CHECK(x.rank() >= 1, "op '", op, "': X ('", ctx.InputName("X"), "') must have rank >= 1");
  const std::string err = LoDError(lod, x.dim(0));
  TIDE_CHECK(err.empty(), "op '", op, "': the new LoD ", LoDString(lod), " from ", from,
             " does not fit X ('", ctx.InputName("X"), "', dims ", tide::ToString(x.dims()),
             "): ", err);
  return lod;
}

template <typename T>
void LoDResetKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const LoD lod = TargetLoD(ctx, x);
  if (out.c() != x.c()) out.CopyFrom(x, ctx.place(), ctx.device_context());
  out.set_lod(lod);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("lod_reset")
                     .Comment("Out = X with the LoD of Y, Y's data as offsets (Y without LoD), or "
                              "target_lod (no Y).")
                     .Input("X", "the data")
                     .Input("Y", "gives the new LoD")
                     .AsDispensable()
                     .Output("Out", "X's data with the new LoD")
                     .Attr("target_lod", std::vector<int32_t>{},
                           "level-0 offsets when there is no Y")
                     .Attr("append", false, "accepted for Fluid compatibility (must be false)")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       TIDE_CHECK(!c.Attr<bool>("append"), "op '", c.op_type(),
                                  "': append = true is not supported");
                       if (!c.HasInput("Y"))
                         TIDE_CHECK(!c.Attr<std::vector<int32_t>>("target_lod").empty(), "op '",
                                    c.op_type(),
                                    "': there is no Y and target_lod is empty; one of "
                                    "them must give the new LoD");
                       if (c.IsRuntime()) return;  // the kernel sets Out
                       c.SetOutputDims("Out", c.InputDims("X"));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       // Out's LoD level (Y's, or 1 from Y's data / target_lod): the layer sets it.
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lod_reset_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lod_reset_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("lod_reset", "cpu", LoDResetKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("lod_reset_grad", "cpu", RelabelGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
