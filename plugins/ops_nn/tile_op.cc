// tile_op.cc: Paddle 2.x's tile (paddle.tile): X repeated repeat_times[i] times along dim i, the
// shorter of X's dims and repeat_times padded with 1s in front; the repeats from RepeatTimes (a
// 1-D int tensor), else repeat_times_tensor (one-element int tensors), else the attribute. The
// grad sums every repeat (nd_index.h's ForEachRepeat, as expand's).
#include <string>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// X's dims and the repeats brought to one rank: {X's dims, Out's dims}. A repeat of -1 (given by a
// tensor, unknown at build time) gives an unknown dim.
std::pair<Dims, Dims> TileDims(const char* op, Dims x, std::vector<int64_t> times) {
  TIDE_CHECK(times.size() <= 6 && x.size() <= 6, "op '", op, "': X ", tide::ToString(x),
             " and repeat_times ", tide::ToString(times), " may have at most 6 dims");
  for (size_t i = 0; i < times.size(); ++i)
    TIDE_CHECK(times[i] >= 1 || times[i] == -1, "op '", op, "': repeat_times ",
               tide::ToString(times), " holds ", times[i], " at ", i, "; each repeat must be >= 1");
  const size_t r = std::max(x.size(), times.size());
  x.insert(x.begin(), r - x.size(), 1);
  times.insert(times.begin(), r - times.size(), 1);
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    if (x[i] < 0 || times[i] < 0) {
      out[i] = -1;
      continue;
    }
    TIDE_CHECK(!__builtin_mul_overflow(x[i], times[i], &out[i]), "op '", op, "': X ",
               tide::ToString(x), " repeated ", tide::ToString(times), " has a dim past int64 at ",
               i);
  }
  return {x, out};
}

std::vector<int64_t> TileTimes(const KernelContext& ctx) {
  if (ctx.HasInput("RepeatTimes")) return IntValues(ctx, "RepeatTimes");
  if (ctx.HasInput("repeat_times_tensor")) return IntScalars(ctx, "repeat_times_tensor");
  const auto t = ctx.Attr<std::vector<int32_t>>("repeat_times");
  return std::vector<int64_t>(t.begin(), t.end());
}

void TileInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  std::vector<int64_t> times;
  if (ctx.HasInput("RepeatTimes")) {
    if (ctx.IsRuntime()) return;  // the kernel sets Out's dims
    const Dims t = ctx.InputDims("RepeatTimes");
    TIDE_CHECK(t.size() == 1, "op '", op, "': RepeatTimes must be 1-D, got ", tide::ToString(t));
    times.assign(t[0] < 0 ? x.size() : static_cast<size_t>(t[0]), -1);
    if (t[0] < 0) {  // not even the rank is known
      ctx.SetOutputDims("Out", Dims(x.size(), -1));
      ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
      return;
    }
  } else if (ctx.HasInput("repeat_times_tensor")) {
    if (ctx.IsRuntime()) return;
    times.assign(ctx.InputCount("repeat_times_tensor"), -1);
  } else {
    const auto t = ctx.Attr<std::vector<int32_t>>("repeat_times");
    times.assign(t.begin(), t.end());
  }
  ctx.SetOutputDims("Out", TileDims(op, x, times).second);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void TileKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const auto [xd, od] = TileDims(ctx.op_type(), x.dims(), TileTimes(ctx));
  const T* xv = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  RepeatCopy(xv, xd, od, o);
}

template <typename T>
void TileGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const auto [xd, od] = TileDims(ctx.op_type(), x.dims(), TileTimes(ctx));
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachRepeat(xd, od, [&](int64_t i, int64_t off) { dx[off] += g[i]; });
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("tile")
        .Comment("Out = X repeated repeat_times[i] times along dim i (paddle.tile); X's dims or "
                 "the repeats get 1s in front to the longer's rank. RepeatTimes, else "
                 "repeat_times_tensor, overrides the attribute.")
        .Input("X", "the input")
        .Input("RepeatTimes", "the repeats as a 1-D int tensor (optional; over the others)")
        .AsDispensable()
        .Input("repeat_times_tensor",
               "the repeats as one-element int tensors (optional; over repeat_times)")
        .AsDuplicable()
        .AsDispensable()
        .Output("Out", "the repeated input")
        .Attr("repeat_times", std::vector<int32_t>{}, "repeats per dim")
        .KernelDataTypeFrom("X")
        .InferShape(TileInferShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("tile_grad");
          op.Input("X", g.Input("X"));
          for (const char* p : {"RepeatTimes", "repeat_times_tensor"})
            if (!g.Input(p).empty()) op.Input(p, g.Input(p));
          op.Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("tile_grad")
                     .Comment("X@GRAD of tile: Out@GRAD summed over the repeats.")
                     .Input("X")
                     .Input("RepeatTimes")
                     .AsDispensable()
                     .Input("repeat_times_tensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("repeat_times", std::vector<int32_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("tile", "cpu", TileKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES, bool);
TIDE_REGISTER_KERNEL("tile_grad", "cpu", TileGradKernel, OPS_NN_FLOAT_TYPES, OPS_NN_COMPLEX_TYPES);
