// select_input_output_ops.cc: Paddle 2.x's select_input and select_output, which its `cond`
// (paddle.static.nn.cond, and a dygraph `if` on a tensor saved by to_static) emits around two
// conditional_blocks: select_output sends X to the branch Mask names, select_input takes the output
// of the branch that ran. Kernel-less, as in Paddle: the branch that did not run left its output
// without data, which only the chosen one must have. Mask: a one-element int32 (or int64) tensor.
// Each is the other's gradient.
#include "control_util.h"

namespace ops_control {
namespace {

// The branch index Mask holds, checked against the `n` branches.
int64_t ReadMask(tide::OpRunContext& ctx, size_t n) {
  const std::string name = OnlyInput(ctx, "Mask");
  tide::Tensor t = InputTensor(ctx, name);
  TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_INT32 || t.dtype() == TIDE_INT64), "op '",
             ctx.op_type(), "': Mask '", name, "' must be a one-element int32 tensor, got ",
             tide::DataTypeName(t.dtype()), " ", tide::ToString(t.dims()));
  tide::OwnedTensor tmp;
  tide::Tensor h = OnHost(t, tmp);
  const int64_t m = h.dtype() == TIDE_INT64 ? *h.data<int64_t>() : *h.data<int32_t>();
  TIDE_CHECK(m >= 0 && static_cast<size_t>(m) < n, "op '", ctx.op_type(), "': Mask '", name,
             "' holds ", m, ", outside [0, ", n, ") (the op has ", n, " branches)");
  return m;
}

// `to` = a copy of variable `from` (a LoDTensor, with its LoD).
void CopyVar(tide::OpRunContext& ctx, const std::string& from, const std::string& to) {
  tide::Tensor src = InputTensor(ctx, from);
  tide::Variable out = Lookup(ctx, to);
  TIDE_CHECK(!out.IsTensorArray() && !out.IsSelectedRows(), "op '", ctx.op_type(), "': variable '",
             to, "' must be a LoDTensor");
  tide::Tensor dst = out.GetTensor();
  dst.CopyFrom(src, ctx.place(), ctx.device_context());
  dst.set_lod(src.lod());
}

void SelectInputRun(tide::OpRunContext& ctx) {
  const auto xs = ctx.Inputs("X");
  CopyVar(ctx, xs.at(ReadMask(ctx, xs.size())), OnlyOutput(ctx, "Out"));
}

void SelectOutputRun(tide::OpRunContext& ctx) {
  const auto outs = ctx.Outputs("Out");
  CopyVar(ctx, OnlyInput(ctx, "X"), outs.at(ReadMask(ctx, outs.size())));
}

// At build time each output takes its input's data type, and the dims the branches agree on (-1
// where they differ); at run time the copy sets them.
void SelectInputShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime() || ctx.InputCount("X") == 0) return;
  tide::Dims d = ctx.InputDims("X", 0);
  for (size_t i = 1; i < ctx.InputCount("X"); ++i) {
    const tide::Dims o = ctx.InputDims("X", i);
    if (o.size() != d.size()) return;
    for (size_t k = 0; k < d.size(); ++k)
      if (o[k] != d[k]) d[k] = -1;
  }
  ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X", 0));
}

void SelectOutputShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime()) return;
  for (size_t i = 0; i < ctx.OutputCount("Out"); ++i) {
    ctx.SetOutputDims("Out", ctx.InputDims("X"), i);
    ctx.SetOutputDataType("Out", ctx.InputDataType("X"), i);
  }
}

}  // namespace
}  // namespace ops_control

using tide::GradVarName;

TIDE_REGISTER_OP(tide::OpSchema("select_input")
                     .Comment("Out = a copy of X[Mask]: the output of the branch that ran.")
                     .Input("X", "the branches' outputs; only X[Mask] must hold data")
                     .AsDuplicable()
                     .Input("Mask", "a one-element int32 tensor: the branch taken")
                     .Output("Out", "the chosen branch's output")
                     .InferShape(ops_control::SelectInputShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("select_output")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("Mask", g.Input("Mask"))
                           .Output("Out", g.InputGrad("X"));
                     })
                     .Run(ops_control::SelectInputRun));

TIDE_REGISTER_OP(tide::OpSchema("select_output")
                     .Comment("Out[Mask] = a copy of X: the input of the branch that will run; the "
                              "other outputs are left as they are.")
                     .Input("X", "the input")
                     .Input("Mask", "a one-element int32 tensor: the branch taken")
                     .Output("Out", "one variable per branch")
                     .AsDuplicable()
                     .InferShape(ops_control::SelectOutputShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("select_input")
                           .Input("X", g.OutputGrad("Out"))
                           .Input("Mask", g.Input("Mask"))
                           .Output("Out", g.InputGrad("X"));
                     })
                     .Run(ops_control::SelectOutputRun));
