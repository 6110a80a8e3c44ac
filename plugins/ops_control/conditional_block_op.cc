// conditional_block_op.cc: Fluid's conditional_block: runs sub_block once when the condition
// holds (a one-element bool with is_scalar_condition; otherwise: every Cond tensor non-empty, as
// IfElse uses it on the halves of a split batch). The run's scope is kept in Scope for the
// backward pass.
#include "control_util.h"

namespace ops_control {
namespace {

bool ShouldRun(tide::OpRunContext& ctx) {
  if (ctx.Attr<bool>("is_scalar_condition")) return ReadCondition(ctx, OnlyInput(ctx, "Cond"));
  auto conds = ctx.Inputs("Cond");
  TIDE_CHECK(!conds.empty(), "op 'conditional_block': input 'Cond' needs at least one variable");
  for (const auto& name : conds) {
    tide::Variable v = Lookup(ctx, name);
    TIDE_CHECK(v.IsTensor(), "op 'conditional_block': the condition '", name,
               "' does not hold a LoDTensor");
    if (v.GetTensor().numel() == 0) return false;
  }
  return true;
}

void ConditionalBlockRun(tide::OpRunContext& ctx) {
  tide::StepScopes scopes = Lookup(ctx, OnlyOutput(ctx, "Scope")).GetStepScopes();
  scopes.Clear();  // the previous run's
  if (!ShouldRun(ctx)) return;
  ctx.RunBlock(ctx.Attr<int32_t>("sub_block"), scopes.Push(ctx.scope()));
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("conditional_block")
                     .Comment("Runs sub_block once when the condition holds.")
                     .Input("Cond",
                            "a one-element bool (is_scalar_condition), else tensors that "
                            "must all be non-empty")
                     .AsDuplicable()
                     .Input("Input", "the outer variables the block reads")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the outer variables the block writes")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Scope", "the run's scope, for conditional_block_grad")
                     .RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the block to run")
                     .Attr("is_scalar_condition", false, "Cond is one one-element bool tensor")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (!ctx.IsRuntime()) ctx.SetOutputVarType("Scope", TIDE_VAR_STEP_SCOPES);
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("conditional_block_grad")
                           .Input("Cond", g.Input("Cond"))
                           .Input("Input", g.Input("Input"))
                           .Input("Out", g.Output("Out"))
                           .Input("Out@GRAD", g.OutputGrad("Out"))
                           .Input("Scope", g.Output("Scope"))
                           .Output("Input@GRAD", g.InputGrad("Input"))
                           .Output("Out@GRAD", g.OutputGrad("Out"))
                           .Attr("sub_block", tide::AttrValue::Block(g.GradBlock("sub_block")))
                           .Attr("is_scalar_condition", g.Attr<bool>("is_scalar_condition"));
                     })
                     .Run(ops_control::ConditionalBlockRun));
