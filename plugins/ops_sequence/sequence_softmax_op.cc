// sequence_softmax_op.cc: sequence_softmax (a softmax over the elements of each sequence of the
// last LoD level of an [N, 1] or [N] X) and its grad.
#include <cmath>

#include "common.h"

namespace ops_sequence {
namespace {

// X must be [N] or [N, 1]: one element per row.
void CheckColumn(const char* op, const char* param, const std::string& name, const Dims& d) {
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && (d[1] == 1 || d[1] < 0)), "op '", op, "': ", param,
             " ('", name, "') must be [N] or [N, 1], got ", tide::ToString(d));
}

template <typename T>
void SequenceSoftmaxKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckColumn(op, "X", ctx.InputName("X"), x.dims());
  const LoD lod = InputLoD(ctx, "X", 2);
  const Level& level = lod.back();
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  out.set_lod(lod);
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const uint64_t b = level[s], e = level[s + 1];
    if (b == e) continue;
    T mx = xd[b];
    for (uint64_t i = b + 1; i < e; ++i) mx = std::max(mx, xd[i]);
    T sum = 0;
    for (uint64_t i = b; i < e; ++i) sum += (o[i] = std::exp(xd[i] - mx));
    for (uint64_t i = b; i < e; ++i) o[i] /= sum;
  }
}

// dX = Out * (dOut - sum over the sequence of dOut * Out).
template <typename T>
void SequenceSoftmaxGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  const LoD lod = InputLoD(ctx, "X", 2);
  const Level& level = lod.back();
  TIDE_CHECK(out.numel() == x.numel() && dout.numel() == x.numel(), "op '", op, "': Out ",
             tide::ToString(out.dims()), " and Out@GRAD ", tide::ToString(dout.dims()),
             " must have X's ", x.numel(), " elements");
  const T* od = out.data<T>();
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  SetGradLoD(ctx, dx, x);
  for (size_t s = 0; s + 1 < level.size(); ++s) {
    const uint64_t b = level[s], e = level[s + 1];
    T dot = 0;
    for (uint64_t i = b; i < e; ++i) dot += g[i] * od[i];
    for (uint64_t i = b; i < e; ++i) d[i] = od[i] * (g[i] - dot);
  }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sequence_softmax")
        .Comment("Out = softmax over each sequence (last LoD level) of X, [N, 1] or [N].")
        .Input("X", "a LoDTensor [N, 1] or [N]")
        .Output("Out", "X's dims and LoD")
        .Attr("use_cudnn", false, "accepted for Fluid compatibility")
        .Attr("data_format", std::string("AnyLayout"), "accepted for Fluid compatibility")
        .InferShape([](tide::InferShapeContext& c) {
          CheckColumn(c.op_type(), "X", c.InputName("X"), c.InputDims("X"));
          tide::SameShapeAsInput("X", "Out")(c);
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sequence_softmax_grad")
              .Input("X", g.Input("X"))
              .Input("Out", g.Output("Out"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("sequence_softmax_grad")
                     .Input("X")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("use_cudnn", false)
                     .Attr("data_format", std::string("AnyLayout"))
                     .InferShape([](tide::InferShapeContext& c) { GradLikeInputs(c, {"X"}); }));
TIDE_REGISTER_KERNEL("sequence_softmax", "cpu", SequenceSoftmaxKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sequence_softmax_grad", "cpu", SequenceSoftmaxGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
