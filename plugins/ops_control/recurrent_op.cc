// recurrent_op.cc: Fluid's recurrent (StaticRNN) and recurrent_grad. The inputs are time-major
// ([T, ...]); step t runs sub_block in a step scope of its own, where each input's name holds
// its row t, each ex_state holds the previous step's state (the initial state at the first
// step), and after which each step output is written to row t of its stacked output. Tide's
// StaticRNN writes states and step outputs into variables of the parent block (attributes
// `states`, `step_outputs`) that each step scope holds locally: their gradients are then given
// to the gradient block from outside, as an outer variable's are (the core zero-fills a body
// temporary's gradient that no grad op produced).
//
// recurrent_grad runs the gradient block the core built over the steps, last first: each step
// is given its rows of outputs@GRAD and the gradient of its states (the next step's ex_state
// gradient; zeros after the last), and leaves its inputs' rows of inputs@GRAD, the ex_states'
// gradients for the step before, and parameter gradients that are summed over the steps.
#include <algorithm>
#include <map>

#include "grad_util.h"
#include "rnn_util.h"

namespace ops_control {
namespace {

struct RnnNames {
  std::vector<std::string> inputs, inits, params, outputs, ex_states, states, step_outputs;
};

RnnNames ReadNames(tide::OpRunContext& ctx, bool grad) {
  RnnNames n;
  n.inputs = ctx.Inputs("inputs");
  n.inits = ctx.Inputs("initial_states");
  n.params = ctx.Inputs("parameters");
  n.outputs = grad ? ctx.Inputs("outputs") : ctx.Outputs("outputs");
  n.ex_states = ctx.Attr<std::vector<std::string>>("ex_states");
  n.states = ctx.Attr<std::vector<std::string>>("states");
  n.step_outputs = ctx.Attr<std::vector<std::string>>("step_outputs");
  const char* op = ctx.op_type();
  TIDE_CHECK(!n.inputs.empty(), "op '", op, "' needs at least one input sequence");
  TIDE_CHECK(n.ex_states.size() == n.states.size() && n.states.size() == n.inits.size(), "op '", op,
             "': ", n.inits.size(), " initial state(s), ", n.ex_states.size(), " ex_state(s) and ",
             n.states.size(), " state(s); they must match one to one");
  TIDE_CHECK(n.step_outputs.size() == n.outputs.size(), "op '", op, "': ", n.outputs.size(),
             " output(s) but ", n.step_outputs.size(), " step output(s)");
  return n;
}

// The number of steps: the first dim of every input, which must agree.
int64_t SeqLen(tide::OpRunContext& ctx, const std::vector<std::string>& inputs) {
  int64_t t = -1;
  for (const auto& name : inputs) {
    tide::Tensor x = InputTensor(ctx, name);
    TIDE_CHECK(x.rank() >= 1, "op '", ctx.op_type(), "': input '", name,
               "' must be time-major [T, ...], got ", tide::ToString(x.dims()));
    if (t < 0) t = x.dim(0);
    TIDE_CHECK(x.dim(0) == t, "op '", ctx.op_type(), "': input '", name, "' has ", x.dim(0),
               " steps, the first input has ", t,
               "; a static RNN's inputs all have the same length");
  }
  return t;
}

tide::Dims StepDims(const tide::Dims& d) {
  tide::Dims s(d.begin() + 1, d.end());
  if (s.empty()) s.push_back(1);
  return s;
}

void RecurrentRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const int32_t block = ctx.Attr<int32_t>("sub_block");
  const bool reverse = ctx.Attr<bool>("reverse");
  const RnnNames n = ReadNames(ctx, false);
  const int64_t T = SeqLen(ctx, n.inputs);
  TIDE_CHECK(T > 0, "op '", op, "': the input sequences are empty (0 steps)");
  tide::StepScopes steps = Lookup(ctx, OnlyOutput(ctx, "step_scopes")).GetStepScopes();
  steps.Clear();
  tide::Scope scope = ctx.scope();

  std::vector<tide::OwnedTensor> staged(n.inputs.size());
  std::vector<tide::Tensor> host_inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    host_inputs.push_back(OnHost(InputTensor(ctx, n.inputs[i]), staged[i]));
  std::vector<std::unique_ptr<HostRows>> outs(n.outputs.size());

  for (int64_t k = 0; k < T; ++k) {
    const int64_t t = reverse ? T - 1 - k : k;
    tide::Scope step = steps.Push(scope);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const tide::Tensor& x = host_inputs[i];
      SliceRows(ctx, x, t, 1, StepDims(x.dims()), step.Var(n.inputs[i]).GetTensor());
    }
    for (size_t j = 0; j < n.states.size(); ++j) {
      tide::Tensor prev;
      if (k == 0) {
        prev = InputTensor(ctx, n.inits[j]);
      } else {
        tide::Variable v = steps.at(k - 1).FindLocalVar(n.states[j]);
        TIDE_CHECK(v && v.IsTensor() && v.GetTensor().initialized(), "op '", op, "': step ", k - 1,
                   " did not write state '", n.states[j], "' (update_memory)");
        prev = v.GetTensor();
      }
      step.Var(n.ex_states[j]).GetTensor().CopyFrom(prev, ctx.place(), ctx.device_context());
      step.Var(n.states[j]).GetTensor();  // the step's own: shadows the parent block's variable
    }
    for (const auto& name : n.step_outputs) step.Var(name).GetTensor();
    ctx.RunBlock(block, step);
    for (size_t m = 0; m < n.outputs.size(); ++m) {
      tide::Variable v = step.FindLocalVar(n.step_outputs[m]);
      TIDE_CHECK(v && v.GetTensor().initialized(), "op '", op, "': step ", k,
                 " did not write output '", n.step_outputs[m], "'");
      tide::Tensor o = v.GetTensor();
      tide::Dims dims = o.dims();
      dims.insert(dims.begin(), T);
      if (!outs[m]) outs[m] = std::make_unique<HostRows>(dims, o.dtype());
      TIDE_CHECK(
          o.dims() == StepDims(outs[m]->host().dims()) || o.numel() * T == outs[m]->host().numel(),
          "op '", op, "': output '", n.step_outputs[m], "' changes shape between steps (",
          tide::ToString(o.dims()), ")");
      outs[m]->Put(t, o);
    }
  }
  for (size_t m = 0; m < n.outputs.size(); ++m)
    outs[m]->CopyTo(ctx, Lookup(ctx, n.outputs[m]).GetTensor());
}

void RecurrentGradRun(tide::OpRunContext& ctx) {
  const char* op = ctx.op_type();
  const int32_t grad_block = ctx.Attr<int32_t>("sub_block");
  const bool reverse = ctx.Attr<bool>("reverse");
  const RnnNames n = ReadNames(ctx, true);
  tide::StepScopes steps = Lookup(ctx, OnlyInput(ctx, "step_scopes")).GetStepScopes();
  const int64_t T = static_cast<int64_t>(steps.size());
  TIDE_CHECK(T == SeqLen(ctx, n.inputs), "op '", op, "': ", T, " step scopes kept for ",
             SeqLen(ctx, n.inputs), " steps (was the forward op run?)");
  const auto out_grads = ctx.Inputs("outputs@GRAD");
  const auto in_grads = ctx.Outputs("inputs@GRAD");
  const auto init_grads = ctx.Outputs("initial_states@GRAD");
  const auto param_grads = ctx.Outputs("parameters@GRAD");
  const tide::Place cpu("cpu", 0);

  std::vector<tide::OwnedTensor> og_staged(out_grads.size());
  std::vector<tide::Tensor> og_host(out_grads.size());
  for (size_t m = 0; m < out_grads.size() && m < n.outputs.size(); ++m)
    if (out_grads[m] != tide::kEmptyVarName)
      og_host[m] = OnHost(InputTensor(ctx, out_grads[m]), og_staged[m]);
  std::vector<std::unique_ptr<HostRows>> ig(n.inputs.size());
  for (size_t i = 0; i < n.inputs.size() && i < in_grads.size(); ++i)
    if (in_grads[i] != tide::kEmptyVarName) {
      tide::Tensor x = InputTensor(ctx, n.inputs[i]);
      ig[i] = std::make_unique<HostRows>(x.dims(), x.dtype());
    }
  std::vector<tide::OwnedTensor> carried(
      n.states.size());  // d loss / d state of the step being run
  std::map<std::string, tide::OwnedTensor> summed;

  for (int64_t k = T; k-- > 0;) {
    const int64_t t = reverse ? T - 1 - k : k;
    tide::Scope step = steps.at(k);
    for (size_t m = 0; m < n.outputs.size(); ++m) {
      tide::Tensor local = step.Var(n.step_outputs[m] + "@GRAD").GetTensor();
      tide::Tensor fwd = step.FindLocalVar(n.step_outputs[m]).GetTensor();
      if (m < og_host.size() && og_host[m])
        SliceRows(ctx, og_host[m], t, 1, fwd.dims(), local);
      else
        ZerosLike(ctx, fwd, local);
    }
    for (size_t j = 0; j < n.states.size(); ++j) {
      tide::Tensor local = step.Var(n.states[j] + "@GRAD").GetTensor();
      if (carried[j].initialized())
        local.CopyFrom(carried[j], ctx.place(), ctx.device_context());
      else
        ZerosLike(ctx, step.FindLocalVar(n.states[j]).GetTensor(), local);
    }
    ctx.RunBlock(grad_block, step);
    for (size_t j = 0; j < n.ex_states.size(); ++j) {
      tide::Tensor g = LocalGrad(step, n.ex_states[j]);
      if (g)
        carried[j].CopyFrom(g, ctx.place(), ctx.device_context());
      else
        ZerosLike(ctx, step.FindLocalVar(n.ex_states[j]).GetTensor(), carried[j]);
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!ig[i]) continue;
      tide::Tensor g = LocalGrad(step, n.inputs[i]);
      if (g) ig[i]->Put(t, g);  // rows left zero: the step's ops did not reach this input
    }
    for (size_t p = 0; p < n.params.size() && p < param_grads.size(); ++p) {
      if (param_grads[p] == tide::kEmptyVarName) continue;
      tide::Tensor g = LocalGrad(step, n.params[p]);
      if (g) Accumulate(ctx, summed[n.params[p]], g, n.params[p]);
    }
  }
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (ig[i]) {
      ig[i]->set_lod(InputTensor(ctx, n.inputs[i]).lod());
      ig[i]->CopyTo(ctx, Lookup(ctx, in_grads[i]).GetTensor());
    }
  for (size_t j = 0; j < n.inits.size() && j < init_grads.size(); ++j) {
    if (init_grads[j] == tide::kEmptyVarName) continue;
    tide::Tensor out = Lookup(ctx, init_grads[j]).GetTensor();
    if (carried[j].initialized())
      out.CopyFrom(carried[j], ctx.place(), ctx.device_context());
    else
      ZerosLike(ctx, InputTensor(ctx, n.inits[j]), out);
  }
  for (size_t p = 0; p < n.params.size() && p < param_grads.size(); ++p) {
    if (param_grads[p] == tide::kEmptyVarName) continue;
    tide::Tensor out = Lookup(ctx, param_grads[p]).GetTensor();
    auto it = summed.find(n.params[p]);
    if (it != summed.end())
      out.CopyFrom(it->second, ctx.place(), ctx.device_context());
    else
      ZerosLike(ctx, InputTensor(ctx, n.params[p]), out);
  }
  steps.Clear();  // the backward pass is done with the steps
}

void DeclareRnnAttrs(tide::OpSchema& s) {
  s.RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the step block")
      .Attr("ex_states", std::vector<std::string>{},
            "the step block's variables holding the previous states")
      .Attr("states", std::vector<std::string>{},
            "the variables each step writes its new states to")
      .Attr("step_outputs", std::vector<std::string>{},
            "the variables each step writes its outputs to")
      .Attr("reverse", false, "run the steps last first")
      .Attr("has_states", false, "Fluid's flag: the RNN has memories")
      .Attr("is_train", true, "Fluid's flag (step scopes are always kept)");
}

tide::OpSchema RecurrentSchema() {
  tide::OpSchema s("recurrent");
  s.Comment("Runs sub_block once per step of the time-major inputs (Fluid's StaticRNN).")
      .Input("inputs", "time-major sequences [T, ...]")
      .AsDuplicable()
      .Input("initial_states", "the states before the first step")
      .AsDuplicable()
      .AsDispensable()
      .Input("parameters", "outer variables the step block reads")
      .AsDuplicable()
      .AsDispensable()
      .Output("outputs", "the step outputs stacked, [T, ...]")
      .AsDuplicable()
      .AsDispensable()
      .Output("step_scopes", "the steps' scopes, for recurrent_grad");
  DeclareRnnAttrs(s);
  s.InferShape([](tide::InferShapeContext& ctx) {
     if (!ctx.IsRuntime()) ctx.SetOutputVarType("step_scopes", TIDE_VAR_STEP_SCOPES);
   })
      .Grad([](tide::GradMaker& g) {
        g.NewOp("recurrent_grad")
            .Input("inputs", g.Input("inputs"))
            .Input("initial_states", g.Input("initial_states"))
            .Input("parameters", g.Input("parameters"))
            .Input("outputs", g.Output("outputs"))
            .Input("outputs@GRAD", g.OutputGrad("outputs"))
            .Input("step_scopes", g.Output("step_scopes"))
            .Output("inputs@GRAD", g.InputGrad("inputs"))
            .Output("initial_states@GRAD", g.InputGrad("initial_states"))
            .Output("parameters@GRAD", g.InputGrad("parameters"))
            .CopyAttrs()
            .Attr("sub_block", tide::AttrValue::Block(g.GradBlock("sub_block")));
      })
      .Run(RecurrentRun);
  return s;
}

tide::OpSchema RecurrentGradSchema() {
  tide::OpSchema s("recurrent_grad");
  s.Comment("The gradient of recurrent: its gradient block run over the steps, last first.")
      .Input("inputs")
      .AsDuplicable()
      .Input("initial_states")
      .AsDuplicable()
      .AsDispensable()
      .Input("parameters")
      .AsDuplicable()
      .AsDispensable()
      .Input("outputs")
      .AsDuplicable()
      .AsDispensable()
      .Input("outputs@GRAD")
      .AsDuplicable()
      .AsDispensable()
      .Input("step_scopes")
      .Output("inputs@GRAD")
      .AsDuplicable()
      .AsDispensable()
      .Output("initial_states@GRAD")
      .AsDuplicable()
      .AsDispensable()
      .Output("parameters@GRAD")
      .AsDuplicable()
      .AsDispensable();
  DeclareRnnAttrs(s);
  s.InferShape([](tide::InferShapeContext& ctx) {
     if (ctx.IsRuntime()) return;
     for (const char* p : {"inputs", "initial_states", "parameters"}) {
       const std::string g = std::string(p) + "@GRAD";
       for (size_t i = 0; i < ctx.OutputCount(g.c_str()) && i < ctx.InputCount(p); ++i) {
         if (ctx.OutputName(g.c_str(), i) == tide::kEmptyVarName) continue;
         ctx.SetOutputDims(g.c_str(), ctx.InputDims(p, i), i);
         ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(p, i), i);
       }
     }
   }).Run(RecurrentGradRun);
  return s;
}

}  // namespace
}  // namespace ops_control

TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.Op(ops_control::RecurrentSchema());
  r.Op(ops_control::RecurrentGradSchema());
});
