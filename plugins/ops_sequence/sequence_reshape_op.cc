// sequence_reshape_op.cc: sequence_reshape (X [N, D] with one LoD level -> [N*D/new_dim, new_dim],
// each sequence's offsets scaled by D/new_dim) and its grad (Out@GRAD reshaped back to X).
#include "common.h"

namespace ops_sequence {
namespace {

// Out's LoD level; checks each sequence's length*D divides by new_dim.
Level ReshapeLevel(const KernelContext& ctx, int64_t* d_out) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  TIDE_CHECK(x.rank() == 2, "op '", op, "': X ('", ctx.InputName("X"),
             "') must be 2-D [N, D], got ", tide::ToString(x.dims()));
  const Level level = InputLoD(ctx, "X", 1)[0];
  const int64_t new_dim = ctx.Attr<int32_t>("new_dim"), d = x.dim(1);
  TIDE_CHECK(new_dim > 0, "op '", op, "': new_dim must be > 0, got ", new_dim);
  Level out{0};
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const int64_t elems = static_cast<int64_t>(level[s + 1] - level[s]) * d;
    TIDE_CHECK(elems % new_dim == 0, "op '", op, "': sequence ", s, " of X ('", ctx.InputName("X"),
               "', LoD ", LevelString(level), ", D = ", d, ") has ", elems,
               " elements, which new_dim ", new_dim, " does not divide");
    out.push_back(out.back() + static_cast<uint64_t>(elems / new_dim));
  }
  *d_out = new_dim;
  return out;
}

template <typename T>
void SequenceReshapeKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  int64_t nd = 0;
  const Level level = ReshapeLevel(ctx, &nd);
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>({static_cast<int64_t>(level.back()), nd}, ctx.place());
  std::copy(xd, xd + x.numel(), o);
  out.set_lod({level});
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_reshape")
        .Comment("Out = X [N, D] as [N*D/new_dim, new_dim], the LoD scaled by D/new_dim.")
        .Input("X", "[N, D] with 1 LoD level")
        .Output("Out", "[N*D/new_dim, new_dim]")
        .Attr("new_dim", int32_t(1), "Out's row width")
        .GreaterThan(0)
        .InferShape([](tide::InferShapeContext& c) {
          Dims x = c.InputDims("X");
          TIDE_CHECK(x.size() == 2, "op '", c.op_type(), "': X ('", c.InputName("X"),
                     "') must be 2-D [N, D], got ", tide::ToString(x));
          if (c.IsRuntime()) return;  // the kernel sizes Out
          c.SetOutputDims("Out", {-1, c.Attr<int32_t>("new_dim")});
          c.SetOutputDataType("Out", c.InputDataType("X"));
          c.ShareLoD("X", "Out");
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sequence_reshape_grad")
              .Input("X", g.Input("X"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_reshape_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("new_dim", int32_t(1))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_reshape", "cpu", SequenceReshapeKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("sequence_reshape_grad", "cpu", RelabelGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
