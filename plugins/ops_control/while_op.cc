// while_op.cc: Fluid's while: runs sub_block while Condition (a one-element bool the block
// updates) is true. Each iteration runs in a step scope of its own, kept in StepScopes for the
// backward pass; with is_test (no backward) one scope serves every iteration, so the block's
// variables are bound once and memory does not grow with the iteration count.
#include <algorithm>
#include <cstdlib>

#include "control_util.h"

namespace ops_control {
namespace {

// Counts a run's iterations against the core's --max_while_iterations (0: no limit): a loop whose
// body never changes its condition would otherwise grow memory until it runs out (each iteration
// keeps its step scope) or, with is_test, never end, and say nothing of the loop.
class IterationLimit {
 public:
  IterationLimit(const tide::OpRunContext& ctx, int32_t block, const std::string& cond)
      : ctx_(ctx),
        block_(block),
        cond_(cond),
        max_(std::strtoll(tide::Flag("max_while_iterations", "0").c_str(), nullptr, 10)) {}
  void Next() {
    TIDE_CHECK(
        max_ <= 0 || done_ < max_, "op '", ctx_.op_type(), "' (sub_block ", block_, ") ran ", done_,
        " iterations and its condition '", cond_,
        "' still holds: past the limit "
        "max_while_iterations=",
        max_,
        " (does the loop body update the condition?). Raise "
        "the flag for a longer loop (tide.set_flags({'max_while_iterations': n}), 0: no limit)");
    ++done_;
  }

 private:
  const tide::OpRunContext& ctx_;
  int32_t block_;
  const std::string& cond_;
  int64_t max_, done_ = 0;
};

void WhileRun(tide::OpRunContext& ctx) {
  const int32_t block = ctx.Attr<int32_t>("sub_block");
  const std::string cond = OnlyInput(ctx, "Condition");
  tide::StepScopes steps = Lookup(ctx, OnlyOutput(ctx, "StepScopes")).GetStepScopes();
  tide::Scope scope = ctx.scope();
  IterationLimit limit(ctx, block, cond);
  if (ctx.Attr<bool>("is_test")) {
    if (steps.size() != 1) {
      steps.Clear();
      steps.Push(scope);
    }
    tide::Scope step = steps.at(0);
    while (ReadCondition(ctx, cond)) {
      limit.Next();
      ctx.RunBlock(block, step);
    }
    return;
  }
  steps.Clear();  // the previous run's iterations
  // Loop-carried variables (read and written by the body) are saved as each iteration finds
  // them: while_grad shows them to the iteration's gradient ops. Variables the body only writes
  // are kept as each iteration leaves them (shared, not copied): while_grad gives an iteration
  // whose value the next one overwrites a zero gradient of that value's shape.
  const auto xs = ctx.Inputs("X"), outs = ctx.Outputs("Out");
  std::vector<std::string> carried, written_only;
  for (const auto& x : xs)
    if (std::count(outs.begin(), outs.end(), x) && Lookup(ctx, x).IsTensor()) carried.push_back(x);
  for (const auto& o : outs)
    if (!std::count(xs.begin(), xs.end(), o)) written_only.push_back(o);
  while (ReadCondition(ctx, cond)) {
    limit.Next();
    tide::Scope step = steps.Push(scope);
    for (const auto& x : carried) {
      tide::Tensor now = Lookup(ctx, x).GetTensor();
      if (now.initialized())
        step.Var(x + "@STEP_INPUT").GetTensor().CopyFrom(now, ctx.place(), ctx.device_context());
    }
    ctx.RunBlock(block, step);
    for (const auto& o : written_only) {
      tide::Variable v = Lookup(ctx, o);
      if (!v.IsTensor() || !v.GetTensor().initialized()) continue;
      tide::Tensor left = step.Var(o + "@STEP_OUTPUT").GetTensor();
      left.ShareDataWith(v.GetTensor());
      left.set_lod(v.GetTensor().lod());
    }
  }
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("while")
                     .Comment("Runs sub_block while Condition is true; Condition is a "
                              "one-element bool the block updates.")
                     .Input("X", "the outer variables the block reads")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Condition", "a one-element bool tensor")
                     .Output("Out", "the outer variables the block writes")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("StepScopes", "the iterations' scopes, for while_grad")
                     .RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the loop body")
                     .Attr("is_test", false, "no backward: iterations share one scope")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (!ctx.IsRuntime())
                         ctx.SetOutputVarType("StepScopes", TIDE_VAR_STEP_SCOPES);
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
