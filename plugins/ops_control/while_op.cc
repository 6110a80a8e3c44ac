// while_op.cc: Fluid's while: runs sub_block while Condition (a one-element bool the block
// updates) is true. Each iteration runs in a step scope of its own, kept in StepScopes for the
// backward pass; with is_test (no backward) one scope serves every iteration, so the block's
// variables are bound once and memory does not grow with the iteration count.
#include "control_util.h"

namespace ops_control {
namespace {

void WhileRun(tide::OpRunContext& ctx) {
  const int32_t block = ctx.Attr<int32_t>("sub_block");
  const std::string cond = OnlyInput(ctx, "Condition");
  tide::StepScopes steps = Lookup(ctx, OnlyOutput(ctx, "StepScopes")).GetStepScopes();
  tide::Scope scope = ctx.scope();
  if (ctx.Attr<bool>("is_test")) {
    if (steps.size() != 1) {
      steps.Clear();
      steps.Push(scope);
    }
    tide::Scope step = steps.at(0);
    while (ReadCondition(ctx, cond)) ctx.RunBlock(block, step);
    return;
  }
  steps.Clear();  // the previous run's iterations
  while (ReadCondition(ctx, cond)) ctx.RunBlock(block, steps.Push(scope));
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("while")
                     .Comment("Runs sub_block while Condition is true; Condition is a "
                              "one-element bool the block updates.")
                     .Input("X", "the outer variables the block reads").AsDuplicable().AsDispensable()
                     .Input("Condition", "a one-element bool tensor")
                     .Output("Out", "the outer variables the block writes").AsDuplicable().AsDispensable()
                     .Output("StepScopes", "the iterations' scopes, for while_grad")
                     .RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the loop body")
                     .Attr("is_test", false, "no backward: iterations share one scope")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (!ctx.IsRuntime()) ctx.SetOutputVarType("StepScopes", TIDE_VAR_STEP_SCOPES);
                     })
                     .Run(ops_control::WhileRun));
