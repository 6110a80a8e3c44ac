// while_op.cc: Fluid's while: runs sub_block while Condition (a one-element bool the block
// updates) is true. Each iteration runs in a step scope of its own, kept in StepScopes for the
// backward pass; with is_test (no backward) one scope serves every iteration, so the block's
// variables are bound once and memory does not grow with the iteration count.
#include <algorithm>

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
  // Loop-carried variables (read and written by the body) are saved as each iteration finds
  // them: while_grad shows them to the iteration's gradient ops.
  const auto xs = ctx.Inputs("X"), outs = ctx.Outputs("Out");
  std::vector<std::string> carried;
  for (const auto& x : xs)
    if (std::count(outs.begin(), outs.end(), x) && Lookup(ctx, x).IsTensor()) carried.push_back(x);
  while (ReadCondition(ctx, cond)) {
    tide::Scope step = steps.Push(scope);
    for (const auto& x : carried) {
      tide::Tensor now = Lookup(ctx, x).GetTensor();
      if (now.initialized())
        step.Var(x + "@STEP_INPUT").GetTensor().CopyFrom(now, ctx.place(), ctx.device_context());
    }
    ctx.RunBlock(block, step);
  }
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
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("while_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input("Out@GRAD", g.OutputGrad("Out"))
                           .Input("StepScopes", g.Output("StepScopes"))
                           .Output("X@GRAD", g.InputGrad("X"))
                           .Output("Out@GRAD", g.OutputGrad("Out"))
                           .Attr("sub_block", tide::AttrValue::Block(g.GradBlock("sub_block")))
                           .Attr("is_test", g.Attr<bool>("is_test"));
                     })
                     .Run(ops_control::WhileRun));
