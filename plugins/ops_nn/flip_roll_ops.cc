// flip_roll_ops.cc: Paddle 2.x's flip (paddle.flip: X reversed along each dim of `axis`; op
// version 1's attribute name) and roll (paddle.roll: X shifted circularly by shifts[i] along
// axis[i], or as one flat vector when axis is empty; shifts from ShiftsTensor over the
// attribute). Each one's grad is itself, with the shifts negated for roll.
#include <string>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// Out[i] = X[src(i)] for every element, src from per-dim index maps (flip, roll along axes).
template <typename T>
void PermuteByDims(const Dims& d, const std::vector<std::vector<int64_t>>& maps, const T* x,
                   T* out) {
  const std::vector<int64_t> st = Strides(d);
  ForEachIndex(d, [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += maps[k][idx[k]] * st[k];
    out[i] = x[off];
  });
}

std::vector<std::vector<int64_t>> IdentityMaps(const Dims& d) {
  std::vector<std::vector<int64_t>> m(d.size());
  for (size_t k = 0; k < d.size(); ++k)
    for (int64_t i = 0; i < d[k]; ++i) m[k].push_back(i);
  return m;
}

// ---------------------------------------------------------------------------------------------
// flip
std::vector<int> FlipAxes(const char* op, const std::vector<int32_t>& axis, size_t rank) {
  std::vector<int> out;
  for (int32_t a : axis) {
    const int n = NormAxis(op, a, rank);
    TIDE_CHECK(std::find(out.begin(), out.end(), n) == out.end(), "op '", op, "': axis ",
               tide::ToString(Dims(axis.begin(), axis.end())), " names dim ", n, " twice");
    out.push_back(n);
  }
  return out;
}

template <typename T>
void FlipRun(KernelContext& ctx, const char* in, const char* out_name) {
  Tensor x = ctx.Input(in);
  const Dims d = x.dims();
  auto maps = IdentityMaps(d);
  for (int a : FlipAxes(ctx.op_type(), ctx.Attr<std::vector<int32_t>>("axis"), d.size()))
    std::reverse(maps[a].begin(), maps[a].end());
  PermuteByDims(d, maps, x.data<T>(), ctx.Output(out_name).mutable_data<T>(d, ctx.place()));
}

template <typename T>
void FlipKernel(KernelContext& ctx) {
  FlipRun<T>(ctx, "X", "Out");
}

void FlipInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  FlipAxes(ctx.op_type(), ctx.Attr<std::vector<int32_t>>("axis"), x.size());
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// ---------------------------------------------------------------------------------------------
// roll
std::vector<int64_t> RollShifts(const KernelContext& ctx) {
  if (ctx.HasInput("ShiftsTensor")) return IntValues(ctx, "ShiftsTensor");
  return ctx.Attr<std::vector<int64_t>>("shifts");
}

// sign * shift as a shift in [0, n), reduced before it is negated or added: a shift near the
// int64 limits (-2^63 has no negation) never overflows.
int64_t Shift(int64_t shift, int64_t sign, int64_t n) {
  const int64_t r = shift % n;  // |r| < n
  return ((sign > 0 ? r : -r) % n + n) % n;
}

// Out[i] = X[(i - shift) mod n] along each axis (all of X flat when axis is empty).
template <typename T>
void RollRun(KernelContext& ctx, const char* in, const char* out_name, int64_t sign) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input(in);
  const std::vector<int64_t> shifts = RollShifts(ctx);
  const auto axis = ctx.Attr<std::vector<int64_t>>("axis");
  const Dims d = x.dims();
  T* o = ctx.Output(out_name).mutable_data<T>(d, ctx.place());
  const T* xd = x.data<T>();
  const int64_t numel = x.numel();
  if (axis.empty()) {
    TIDE_CHECK(shifts.size() == 1, "op '", op, "': without axis, shifts needs 1 value, got ",
               shifts.size());
    if (numel == 0) return;
    const int64_t s = Shift(shifts[0], sign, numel);
    for (int64_t i = 0; i < numel; ++i) o[(i + s) % numel] = xd[i];
    return;
  }
  TIDE_CHECK(shifts.size() == axis.size(), "op '", op, "': shifts ",
             tide::ToString(Dims(shifts.begin(), shifts.end())), " and axis ",
             tide::ToString(Dims(axis.begin(), axis.end())), " must have one length");
  auto maps = IdentityMaps(d);
  for (size_t k = 0; k < axis.size(); ++k) {
    const int a = NormAxis(op, static_cast<int>(axis[k]), d.size());
    const int64_t n = d[a];
    if (n == 0) continue;
    std::vector<int64_t>& m = maps[a];
    std::vector<int64_t> rolled(n);
    const int64_t s = Shift(shifts[k], sign, n);
    for (int64_t i = 0; i < n; ++i) rolled[i] = m[(i - s + n) % n];
    m = rolled;
  }
  PermuteByDims(d, maps, xd, o);
}

template <typename T>
void RollKernel(KernelContext& ctx) {
  RollRun<T>(ctx, "X", "Out", 1);
}

void RollInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The grads: flip of Out@GRAD, roll of Out@GRAD by -shifts.
template <typename T>
void FlipGradKernel(KernelContext& ctx) {
  FlipRun<T>(ctx, GradVarName("Out").c_str(), GradVarName("X").c_str());
}
template <typename T>
void RollGradKernel(KernelContext& ctx) {
  RollRun<T>(ctx, GradVarName("Out").c_str(), GradVarName("X").c_str(), -1);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("flip")
                     .Comment("Out = X reversed along each dim of axis (paddle.flip).")
                     .Input("X", "the input")
                     .Output("Out", "X's dims")
                     .Attr("axis", std::vector<int32_t>{},
                           "the dims reversed (negative: from "
                           "the end)")
                     .InferShape(FlipInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("flip_grad")
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("flip_grad")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", std::vector<int32_t>{})
                     .InferShape(tide::SameShapeAsInput(GradVarName("Out"), GradVarName("X"))));
TIDE_REGISTER_OP(
    tide::OpSchema("roll")
        .Comment("Out = X shifted circularly by shifts[i] along axis[i] (paddle.roll); with no "
                 "axis, X as one flat vector.")
        .Input("X", "the input")
        .Input("ShiftsTensor", "the shifts as a 1-D int tensor (optional; over shifts)")
        .AsDispensable()
        .Output("Out", "X's dims")
        .Attr("shifts", std::vector<int64_t>{}, "the shift per axis")
        .Attr("axis", std::vector<int64_t>{}, "the axes (empty: all of X flat)")
        .InferShape(RollInferShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("roll_grad");
          op.Input("X", g.Input("X"));
          if (!g.Input("ShiftsTensor").empty()) op.Input("ShiftsTensor", g.Input("ShiftsTensor"));
          op.Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("roll_grad")
                     .Input("X")
                     .Input("ShiftsTensor")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("shifts", std::vector<int64_t>{})
                     .Attr("axis", std::vector<int64_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("flip", "cpu", FlipKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES, bool);
TIDE_REGISTER_KERNEL("flip_grad", "cpu", FlipGradKernel, OPS_NN_FLOAT_TYPES, OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("roll", "cpu", RollKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES, bool);
TIDE_REGISTER_KERNEL("roll_grad", "cpu", RollGradKernel, OPS_NN_FLOAT_TYPES, OPS_NN_COMPLEX_TYPES);
