// sequence_reverse_op.cc: sequence_reverse (the rows of each sequence of X's last LoD level in
// reverse order; Y keeps X's LoD) and its grad (the same reversal of Y@GRAD, with X's LoD).
#include "common.h"

namespace ops_sequence {
namespace {

template <typename T>
void Reverse(const T* in, const Level& level, int64_t w, T* out) {
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const int64_t b = static_cast<int64_t>(level[s]), e = static_cast<int64_t>(level[s + 1]);
    for (int64_t r = b; r < e; ++r)
      std::copy(in + r * w, in + (r + 1) * w, out + (b + e - 1 - r) * w);
  }
}

template <typename T>
void SequenceReverseKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Output("Y");
  const LoD lod = InputLoD(ctx, "X", 2);
  const T* xd = x.data<T>();
  TIDE_CHECK(y.c() != x.c(), "op '", ctx.op_type(), "' cannot run in place (X and Y are '",
             ctx.InputName("X"), "')");
  T* o = y.mutable_data<T>(x.dims(), ctx.place());
  Reverse(xd, lod.back(), RowWidth(x.dims()), o);
  y.set_lod(lod);
}

template <typename T>
void SequenceReverseGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const LoD lod = InputLoD(ctx, "X", 2);
  TIDE_CHECK(dy.numel() == x.numel(), "op '", op, "': Y@GRAD ", tide::ToString(dy.dims()),
             " does not have X's ", x.numel(), " elements");
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  Reverse(dy.data<T>(), lod.back(), RowWidth(x.dims()), d);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("sequence_reverse")
                     .Comment("Y = X with the rows of each sequence (last LoD level) reversed.")
                     .Input("X", "a LoDTensor with 1 or 2 LoD levels")
                     .Output("Y", "X's dims and LoD")
                     .InferShape(tide::SameShapeAsInput("X", "Y"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("sequence_reverse_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Y"), g.OutputGrad("Y"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_reverse_grad")
                     .Input("X")
                     .Input(GradVarName("Y"))
                     .Output(GradVarName("X"))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_reverse", "cpu", SequenceReverseKernel, OPS_SEQUENCE_MOVE_TYPES);
TIDE_REGISTER_KERNEL("sequence_reverse_grad", "cpu", SequenceReverseGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
