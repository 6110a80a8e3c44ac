// conditional_block_grad_op.cc: the gradient of conditional_block: when the block ran, its
// gradient block runs once in the block's scope and the inputs' gradients are copied out, and
// the outputs' gradients become zeros (the block overwrote them: their earlier values reach the
// loss no more); when it did not run, the inputs' gradients are zeros and the outputs' pass on.
#include "grad_util.h"

namespace ops_control {
namespace {

constexpr const char* kEmpty = "@EMPTY@";

void ConditionalBlockGradRun(tide::OpRunContext& ctx) {
  tide::StepScopes scopes = Lookup(ctx, OnlyInput(ctx, "Scope")).GetStepScopes();
  const auto ins = ctx.Inputs("Input"), outs = ctx.Inputs("Out");
  const auto out_grads = ctx.Inputs("Out@GRAD"), in_grads = ctx.Outputs("Input@GRAD");
  const bool ran = scopes.size() > 0;
  if (ran) {
    tide::Scope scope = scopes.at(0);
    for (size_t j = 0; j < outs.size() && j < out_grads.size(); ++j) {
      if (out_grads[j] == kEmpty) continue;
      tide::Variable og = Lookup(ctx, out_grads[j]);
      if (og.IsTensor() && og.GetTensor().initialized())
        scope.Var(outs[j] + "@GRAD")
            .GetTensor()
            .CopyFrom(og.GetTensor(), ctx.place(), ctx.device_context());
    }
    ctx.RunBlock(ctx.Attr<int32_t>("sub_block"), scope);
    for (size_t j = 0; j < outs.size() && j < out_grads.size(); ++j)
      if (out_grads[j] != kEmpty)
        ZerosLike(ctx, Lookup(ctx, outs[j]).GetTensor(), Lookup(ctx, out_grads[j]).GetTensor());
  }
  for (size_t j = 0; j < ins.size() && j < in_grads.size(); ++j) {
    if (in_grads[j] == kEmpty) continue;
    tide::Tensor out = Lookup(ctx, in_grads[j]).GetTensor();
    tide::Tensor g = ran ? LocalGrad(scopes.at(0), ins[j]) : tide::Tensor();
    if (g)
      out.CopyFrom(g, ctx.place(), ctx.device_context());
    else
      ZerosLike(ctx, Lookup(ctx, ins[j]).GetTensor(), out);
  }
  scopes.Clear();  // the backward pass is done with the block's scope
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("conditional_block_grad")
                     .Comment("The gradient of conditional_block.")
                     .Input("Cond", "the forward op's Cond")
                     .AsDuplicable()
                     .Input("Input", "the forward op's Input")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Out", "the forward op's Out")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Out@GRAD", "gradients of Out")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Scope", "the block's scope")
                     .Output("Input@GRAD", "gradients of Input")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out@GRAD", "gradients of Out's values before the block (in place)")
                     .AsDuplicable()
                     .AsDispensable()
                     .RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the block's gradient block")
                     .Attr("is_scalar_condition", false, "the forward op's")
                     .Run(ops_control::ConditionalBlockGradRun));
