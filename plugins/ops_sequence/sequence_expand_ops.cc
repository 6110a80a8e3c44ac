// sequence_expand_ops.cc: sequence_expand (X's sequences, or rows when X has no LoD, each
// repeated as many times as Y's ref_level sequence i holds sub-sequences/rows) and
// sequence_expand_as (row i of X repeated len(sequence i of Y) times), and their grads (the
// repeats summed back).
#include "common.h"

namespace ops_sequence {
namespace {

// What sequence_expand does: X's pieces ([x_level[i], x_level[i+1]) rows) and how often each
// repeats (the length of Y's ref level sequence i).
struct ExpandPlan {
  Level x_level;  // X's sequences (X's LoD, or one row each)
  Level ref;      // Y's ref level
  bool x_has_lod = false;
  int64_t out_rows = 0;
};

ExpandPlan PlanExpand(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(x.rank() >= 1, "op '", op, "': X ('", ctx.InputName("X"), "') must have rank >= 1");
  const LoD x_lod = x.lod();
  if (!x_lod.empty()) CheckLoD(ctx, "X", ctx.InputName("X"), x_lod, x.dim(0));
  TIDE_CHECK(x_lod.size() <= 1, "op '", op, "': X ('", ctx.InputName("X"), "') has a ",
             x_lod.size(), "-level LoD ", LoDString(x_lod), "; X may have at most 1 level");
  const LoD y_lod = y.lod();
  TIDE_CHECK(!y_lod.empty(), "op '", op, "': Y ('", ctx.InputName("Y"),
             "') has no LoD; its LoD says how often each of X's sequences repeats");
  int32_t ref_level = ctx.Attr<int32_t>("ref_level");
  TIDE_CHECK(ref_level == -1 || (ref_level >= 0 && ref_level < static_cast<int32_t>(y_lod.size())),
             "op '", op, "': ref_level ", ref_level, " is not -1 or a level of Y's LoD ",
             LoDString(y_lod), " (", y_lod.size(), " levels)");
  if (ref_level == -1) ref_level = static_cast<int32_t>(y_lod.size()) - 1;
  ExpandPlan p;
  p.ref = y_lod[ref_level];
  p.x_has_lod = !x_lod.empty();
  const int64_t n_ref = static_cast<int64_t>(p.ref.size()) - 1;
  if (p.x_has_lod) {
    p.x_level = x_lod[0];
    TIDE_CHECK(p.x_level.size() == p.ref.size(), "op '", op, "': X ('", ctx.InputName("X"),
               "') has ", p.x_level.size() - 1, " sequences (LoD ", LoDString(x_lod),
               ") but Y's ref level ", ref_level, " has ", n_ref, " (Y's LoD ", LoDString(y_lod),
               ")");
  } else {
    TIDE_CHECK(x.dim(0) == n_ref, "op '", op, "': X ('", ctx.InputName("X"), "') has no LoD and ",
               x.dim(0), " rows, but Y's ref level ", ref_level, " has ", n_ref,
               " sequences (Y's LoD ", LoDString(y_lod), "); they must match");
    p.x_level.resize(static_cast<size_t>(x.dim(0)) + 1);
    for (size_t i = 0; i < p.x_level.size(); ++i) p.x_level[i] = i;
  }
  for (int64_t i = 0; i < n_ref; ++i)
    p.out_rows +=
        static_cast<int64_t>((p.ref[i + 1] - p.ref[i]) * (p.x_level[i + 1] - p.x_level[i]));
  return p;
}

template <typename T>
void SequenceExpandKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const ExpandPlan p = PlanExpand(ctx);
  const int64_t w = RowWidth(x.dims());
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(WithRows(x.dims(), p.out_rows), ctx.place());
  Level out_level{0};
  for (size_t i = 0; i + 1 < p.ref.size(); ++i) {
    const uint64_t b = p.x_level[i], e = p.x_level[i + 1];
    for (uint64_t r = 0; r < p.ref[i + 1] - p.ref[i]; ++r) {
      o = std::copy(xd + b * w, xd + e * w, o);
      out_level.push_back(out_level.back() + (e - b));
    }
  }
  out.set_lod(p.x_has_lod ? LoD{out_level} : LoD{});
}

template <typename T>
void SequenceExpandGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const ExpandPlan p = PlanExpand(ctx);
  const int64_t w = RowWidth(x.dims());
  TIDE_CHECK(dout.numel() == p.out_rows * w, "op '", op, "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not hold the ", p.out_rows, " rows of Out");
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  std::fill(d, d + x.numel(), T(0));
  for (size_t i = 0; i + 1 < p.ref.size(); ++i) {
    const uint64_t b = p.x_level[i], e = p.x_level[i + 1];
    for (uint64_t r = 0; r < p.ref[i + 1] - p.ref[i]; ++r)
      for (int64_t k = 0; k < static_cast<int64_t>(e - b) * w; ++k) d[b * w + k] += *g++;
  }
}

// Y's one LoD level, with one sequence per row of X.
Level ExpandAsLevel(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  TIDE_CHECK(x.rank() >= 1, "op '", op, "': X ('", ctx.InputName("X"), "') must have rank >= 1");
  const LoD y_lod = InputLoD(ctx, "Y", 1);
  TIDE_CHECK(static_cast<int64_t>(y_lod[0].size()) - 1 == x.dim(0), "op '", op, "': X ('",
             ctx.InputName("X"), "') has ", x.dim(0), " rows but Y ('", ctx.InputName("Y"),
             "') has ", y_lod[0].size() - 1, " sequences (LoD ", LoDString(y_lod),
             "); they must match");
  return y_lod[0];
}

template <typename T>
void SequenceExpandAsKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const Level level = ExpandAsLevel(ctx);
  const int64_t w = RowWidth(x.dims());
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(WithRows(x.dims(), static_cast<int64_t>(level.back())), ctx.place());
  for (size_t i = 0; i + 1 < level.size(); ++i)
    for (uint64_t r = level[i]; r < level[i + 1]; ++r)
      o = std::copy(xd + i * w, xd + (i + 1) * w, o);
  out.set_lod({level});
}

template <typename T>
void SequenceExpandAsGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const Level level = ExpandAsLevel(ctx);
  const int64_t w = RowWidth(x.dims());
  TIDE_CHECK(dout.numel() == static_cast<int64_t>(level.back()) * w, "op '", op, "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not hold the ", level.back(), " rows of Out");
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  std::fill(d, d + x.numel(), T(0));
  for (size_t i = 0; i + 1 < level.size(); ++i)
    for (uint64_t r = level[i]; r < level[i + 1]; ++r)
      for (int64_t k = 0; k < w; ++k) d[i * w + k] += g[r * w + k];
}

void ExpandShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime()) return;  // the kernel sizes Out from the LoDs
  Dims x = ctx.InputDims("X");
  TIDE_CHECK(!x.empty(), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') must have rank >= 1");
  ctx.SetOutputDims("Out", WithRows(x, -1));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::GradMakerFn ExpandGrad(const std::string& type) {
  return [type](tide::GradMaker& g) {
    g.NewOp(type)
        .Input("X", g.Input("X"))
        .Input("Y", g.Input("Y"))
        .Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  };
}

void ExpandGradShape(tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_expand")
                     .Comment("Out = X's sequences (rows when X has no LoD), sequence i repeated "
                              "as often as Y's ref_level sequence i has parts.")
                     .Input("X", "a LoDTensor with at most 1 LoD level")
                     .Input("Y", "a LoDTensor whose LoD gives the repeats")
                     .Output("Out", "the expanded X")
                     .Attr("ref_level", int32_t(-1), "Y's LoD level to expand by; -1: the last")
                     .InferShape([](tide::InferShapeContext& c) {
                       ExpandShape(c);
                       if (!c.IsRuntime()) c.ShareLoD("X", "Out");
                     })
                     .Grad(ExpandGrad("sequence_expand_grad")));
TIDE_REGISTER_OP(tide::OpSchema("sequence_expand_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("ref_level", int32_t(-1))
                     .InferShape(ExpandGradShape));
TIDE_REGISTER_KERNEL("sequence_expand", "cpu", SequenceExpandKernel, OPS_SEQUENCE_FLOAT_TYPES,
                     int32_t, int64_t);
TIDE_REGISTER_KERNEL("sequence_expand_grad", "cpu", SequenceExpandGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_expand_as")
        .Comment("Out = row i of X repeated len(sequence i of Y) times; Out's LoD is Y's.")
        .Input("X", "[n, ...]")
        .Input("Y", "a LoDTensor with 1 LoD level of n sequences")
        .Output("Out", "the expanded X, with Y's LoD")
        .InferShape([](tide::InferShapeContext& c) {
          ExpandShape(c);
          if (!c.IsRuntime()) c.ShareLoD("Y", "Out");
        })
        .Grad(ExpandGrad("sequence_expand_as_grad")));
TIDE_REGISTER_OP(tide::OpSchema("sequence_expand_as_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(ExpandGradShape));
TIDE_REGISTER_KERNEL("sequence_expand_as", "cpu", SequenceExpandAsKernel, OPS_SEQUENCE_FLOAT_TYPES,
                     int32_t, int64_t);
TIDE_REGISTER_KERNEL("sequence_expand_as_grad", "cpu", SequenceExpandAsGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
