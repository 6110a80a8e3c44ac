// backward.cc: AppendBackward.
#include "core/passes/backward.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/platform/enforce.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// The forward variable a gradient name belongs to: "x@GRAD@RENAME@1" -> "x".
std::string ForwardName(const std::string& grad) {
  auto pos = grad.find("@GRAD");
  return pos == std::string::npos ? grad : grad.substr(0, pos);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Float and complex tensors take gradients (a complex one's holds dL/d(real) + i dL/d(imag)).
bool IsDifferentiable(DataType t) { return IsFloatType(t) || IsComplexType(t); }

// Variables that get no gradient: given, stop_gradient, neither float nor complex, and everything
// computed only from such variables (forward propagation, as Fluid's _find_no_grad_vars).
std::set<std::string> NoGradVars(const BlockDesc& block, size_t n_ops,
                                 const std::set<std::string>& given) {
  std::set<std::string> fixed = given;  // never get a gradient
  for (const VarDesc* v : block.AllVars()) {
    if (v->stop_gradient() || (v->type() == TIDE_VAR_LOD_TENSOR && !IsDifferentiable(v->dtype())))
      fixed.insert(v->name());
  }
  std::set<std::string> no_grad = fixed;
  std::set<std::string> written;
  for (size_t i = 0; i < n_ops; ++i) {
    const OpDesc* op = block.Op(i);
    std::vector<std::string> ins = op->InputArgumentNames();
    bool all_no_grad = std::all_of(ins.begin(), ins.end(),
                                   [&](const std::string& n) { return no_grad.count(n) > 0; });
    for (const auto& o : op->OutputArgumentNames()) {
      if (o == kEmptyVarName) continue;
      if (all_no_grad) {
        // An element without a gradient written into an array holding some with one (written
        // before, or an outer array): the array keeps its gradient, its other elements need it.
        const VarDesc* v = block.FindVarRecursive(o);
        const bool array = v && v->type() == TIDE_VAR_LOD_TENSOR_ARRAY;
        if (!(array && !no_grad.count(o) && (written.count(o) || !block.FindVar(o))))
          no_grad.insert(o);
      } else if (!fixed.count(o)) {  // written again from variables with gradients (a loop's state)
        no_grad.erase(o);
      }
      written.insert(o);
    }
  }
  return no_grad;
}

bool AllEmpty(const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(),
                     [](const std::string& n) { return n == kEmptyVarName; });
}

// Declares gradient variable `name` in `block`, shaped like its forward variable.
void DeclareGradVar(BlockDesc* block, const std::string& name) {
  VarDesc* v = block->Var(name);
  if (const VarDesc* fwd = block->FindVarRecursive(ForwardName(name))) {
    v->set_type(fwd->type() == TIDE_VAR_SELECTED_ROWS ? TIDE_VAR_LOD_TENSOR : fwd->type());
    v->set_dtype(fwd->dtype());
    v->CopyShapeFrom(*fwd);
    v->set_lod_level(fwd->lod_level());
  }
}

// Declares the gradient variables an op uses that no enclosing block declares.
void DeclareGradVars(BlockDesc* block, const OpDesc& op) {
  std::vector<std::string> names = op.InputArgumentNames();
  for (const auto& n : op.OutputArgumentNames()) names.push_back(n);
  for (const auto& n : names)
    if (n != kEmptyVarName && !block->FindVarRecursive(n)) DeclareGradVar(block, n);
}

// The op summing a gradient's parts: "sum", or "tensor_array_sum" for a tensor array's
// gradient (an array read more than once), element by element.
OpDesc SumOp(const BlockDesc& block, const std::vector<std::string>& parts,
             const std::string& out) {
  const VarDesc* fwd = block.FindVarRecursive(ForwardName(out));
  const bool array = fwd && fwd->type() == TIDE_VAR_LOD_TENSOR_ARRAY;
  return OpDesc(array ? "tensor_array_sum" : "sum", {{"X", parts}}, {{"Out", {out}}},
                {{"op_role", int32_t(kOpRoleBackward)}});
}

// Fluid's _addup_repetitive_outputs_: a gradient written by several grad ops is written under
// renamed parts and summed before its first reader (or at the end).
std::vector<OpDesc> AddUpRepeatedGrads(const BlockDesc& block, std::vector<OpDesc> ops) {
  std::vector<OpDesc> out;
  std::map<std::string, std::vector<std::string>> parts;  // grad -> names written so far
  std::map<std::string, size_t> first_writer;             // grad -> index in `out`
  int rename_id = 0;
  auto flush = [&](const std::string& grad) {
    auto it = parts.find(grad);
    if (it == parts.end() || it->second.size() < 2) return;
    out.push_back(SumOp(block, it->second, grad));
    it->second = {grad};
    first_writer[grad] = out.size() - 1;
  };
  for (OpDesc& op : ops) {
    for (const auto& in : op.InputArgumentNames()) flush(in);
    const size_t self = out.size();  // this op's index once added
    const std::vector<std::string> reads = op.InputArgumentNames();
    VariableNameMap outs = op.outputs();
    for (auto& [param, names] : outs) {
      for (auto& name : names) {
        if (name == kEmptyVarName) continue;
        auto& written = parts[name];
        if (Contains(reads, name)) {
          // Read and written by one op (a control-flow grad op carrying a loop variable's
          // gradient back to its value before the loop): a new value replaces the summed one.
          written = {name};
          first_writer[name] = self;
          continue;
        }
        if (written.empty()) {
          written.push_back(name);
          first_writer[name] = self;
          continue;
        }
        if (written.size() == 1 && written[0] == name) {  // rename the first writer's output
          std::string first = name + "@RENAME@" + std::to_string(rename_id++);
          if (first_writer[name] == self) {  // this op itself, earlier (e.g. x * x's two grads)
            bool done = false;
            for (auto& [p2, a2] : outs)
              for (auto& n2 : a2)
                if (!done && &n2 != &name && n2 == name) {
                  n2 = first;
                  done = true;
                }
          } else {
            OpDesc& w = out[first_writer[name]];
            for (const auto& [p, a] : w.outputs()) {
              std::vector<std::string> fixed = a;
              std::replace(fixed.begin(), fixed.end(), name, first);
              w.SetOutput(p, fixed);
            }
          }
          written[0] = first;
        }
        std::string part = name + "@RENAME@" + std::to_string(rename_id++);
        written.push_back(part);
        name = part;
      }
    }
    for (const auto& [param, names] : outs) op.SetOutput(param, names);
    out.push_back(std::move(op));
  }
  std::vector<std::string> pending;
  for (const auto& [grad, names] : parts)
    if (names.size() > 1) pending.push_back(grad);
  for (const auto& g : pending) flush(g);
  return out;
}

bool IsGradName(const std::string& n) { return n.find("@GRAD") != std::string::npos; }

// A gradient input no grad op produced: zero-filled (fill_zeros_like of its forward variable)
// when that variable is a float tensor, else the input is dropped ("@EMPTY@": integer, bool and
// array variables carry no gradient).
void FillMissingGrad(const BlockDesc& block, OpDesc* g, const std::string& grad,
                     std::vector<OpDesc>* out) {
  const std::string fwd = ForwardName(grad);
  const VarDesc* v = block.FindVarRecursive(fwd);
  if (v && v->type() == TIDE_VAR_LOD_TENSOR && IsDifferentiable(v->dtype())) {
    out->emplace_back("fill_zeros_like", VariableNameMap{{"X", {fwd}}},
                      VariableNameMap{{"Out", {grad}}},
                      AttributeMap{{"op_role", int32_t(kOpRoleBackward)}});
    return;
  }
  for (const auto& [param, args] : g->inputs()) {
    std::vector<std::string> fixed = args;
    std::replace(fixed.begin(), fixed.end(), grad, std::string(kEmptyVarName));
    g->SetInput(param, fixed);
  }
  for (const auto& [param, args] : g->outputs()) {  // an op passing it on in place (control flow)
    std::vector<std::string> fixed = args;
    std::replace(fixed.begin(), fixed.end(), grad, std::string(kEmptyVarName));
    g->SetOutput(param, fixed);
  }
}

// Checks and infers an op added to `block` at `index` (its end by default), naming it in errors.
void AppendChecked(BlockDesc* block, const OpDesc& g, size_t index = SIZE_MAX) {
  OpDesc* added = index == SIZE_MAX ? block->AppendOp() : block->InsertOp(index);
  *added = g;
  added->set_block(block);
  const OpInfo& info = Registry::Global().GetOp(g.type());
  try {
    CheckOpDesc(info, added);
    InferShapeAtCompileTime(info, *added, block);
  } catch (const Error& e) {
    TIDE_FAIL(e.code(), "append_backward: grad op '", g.type(), "' (block ", block->idx(),
              "): ", e.what());
  }
}

std::vector<OpDesc> GradOpsOf(ProgramDesc* program, const OpDesc& fwd,
                              const std::vector<std::string>& no_grad);
std::vector<OpDesc> GradOpsWithOutputs(ProgramDesc* program, const OpDesc& fwd,
                                       const std::vector<std::string>& no_grad);

// An op without a gradient that a gradient must pass (an input needing one, a float output
// that is not no-grad) is an error naming it and the way out, unless its plugin declared that
// it has none (OpSchema::NoGradient): silently, the parameters upstream would never train.
void CheckNoGradientWanted(const OpDesc& fwd, const std::vector<std::string>& no_grad) {
  const OpInfo& info = Registry::Global().GetOp(fwd.type());
  if (info.HasGrad() || info.no_gradient) return;
  auto needs = [&](const std::string& n) {
    return n != kEmptyVarName && !std::binary_search(no_grad.begin(), no_grad.end(), n);
  };
  std::vector<std::string> outs = fwd.OutputArgumentNames();
  if (std::none_of(outs.begin(), outs.end(), needs)) return;
  for (const auto& [param, args] : fwd.inputs())
    for (const auto& v : args)
      if (needs(v))
        TIDE_FAIL(TIDE_UNIMPLEMENTED, "append_backward: op '", fwd.type(), "' (plugin ",
                  info.plugin_file, ") has no gradient, but its input '", param, "' (variable '", v,
                  "') needs one on the way to the parameters: give the op a gradient "
                  "(OpSchema::Grad or DefaultGrad; OpSchema::NoGradient if it has none by design), "
                  "or stop gradients there (stop_gradient=True on '",
                  v, "', or no_grad_set)");
}

// Makes the grad ops of op `k` of `body` read the forward values op k saw where they, run after
// the block, would find others: a variable of the block the block writes again after op k (an
// in-place `increment` of an index between two array_writes), or, in a loop's body, a variable of
// the enclosing blocks the body writes before op k or in op k (while_grad shows such a variable
// as the iteration found it). A copy ("<name>@SNAPSHOT@<n>", a temporary of the block) made next
// to op k keeps the value. Control-flow grad ops are left alone (their blocks use the names).
void ReadValuesOpSaw(BlockDesc* body, size_t k, std::vector<OpDesc>* grads) {
  const OpDesc& fwd = *body->Op(k);
  for (const auto& [name, value] : fwd.attrs())
    if (AttrTypeOf(value) == TIDE_ATTR_BLOCK) return;
  auto writes = [&](size_t j, const std::string& n) {
    return Contains(body->Op(j)->OutputArgumentNames(), n);
  };
  std::map<std::string, std::string> copies;  // forward name -> its snapshot
  std::vector<std::pair<size_t, OpDesc>> inserts;
  for (OpDesc& g : *grads) {
    for (const auto& [param, args] : g.inputs()) {
      std::vector<std::string> fixed = args;
      for (auto& n : fixed) {
        if (n == kEmptyVarName || IsGradName(n)) continue;
        const VarDesc* v = body->FindVarRecursive(n);
        if (!v || v->type() != TIDE_VAR_LOD_TENSOR) continue;
        if (!copies.count(n)) {
          bool before = false, after = false;
          for (size_t j = 0; j < body->OpSize(); ++j)
            (j < k ? before : after) |= j != k && writes(j, n);
          const bool own = writes(k, n);
          if (!(body->FindVar(n) ? after : own || before)) continue;
          std::string snap;
          for (int id = 0; snap.empty() || body->FindVarRecursive(snap); ++id)
            snap = n + "@SNAPSHOT@" + std::to_string(id);
          VarDesc* s = body->Var(snap);
          s->set_type(v->type());
          s->set_dtype(v->dtype());
          s->CopyShapeFrom(*v);
          s->set_lod_level(v->lod_level());
          inserts.emplace_back(own ? k + 1 : k,
                               OpDesc("assign", {{"X", {n}}}, {{"Out", {snap}}}, {}));
          copies[n] = snap;
        }
        n = copies[n];
      }
      g.SetInput(param, fixed);
    }
  }
  std::stable_sort(inserts.begin(), inserts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [at, op] : inserts) AppendChecked(body, op, at);
}

// An outer tensor array the body reads and writes carries its gradient through the iterations:
// while_grad shows the gradient reaching it after the iteration as <array>@GRAD, and the grad
// block adds its parts (the gradients of the body's reads) to it. Where the first grad op to use
// that gradient writes it without reading it, a copy of it (tensor_array_sum of one array) goes
// first, so that the renaming of repeated writers sums it with them.
void KeepIncomingArrayGrads(const BlockDesc& body, std::vector<OpDesc>* ops) {
  const std::vector<OpDesc*> body_ops = body.AllOps();
  std::set<std::string> seen;
  std::vector<std::string> seeds;
  for (const OpDesc& g : *ops) {
    const std::vector<std::string> ins = g.InputArgumentNames();
    for (const auto& o : g.OutputArgumentNames()) {
      if (!IsGradName(o) || seen.count(o) || Contains(ins, o)) continue;
      const std::string fwd = ForwardName(o);
      const VarDesc* v = body.FindVarRecursive(fwd);
      if (v && v->type() == TIDE_VAR_LOD_TENSOR_ARRAY && !body.FindVar(fwd) &&
          std::any_of(body_ops.begin(), body_ops.end(),
                      [&](const OpDesc* op) { return Contains(op->OutputArgumentNames(), fwd); }))
        seeds.push_back(o);
    }
    for (const auto& n : ins) seen.insert(n);
    for (const auto& n : g.OutputArgumentNames()) seen.insert(n);
  }
  for (const auto& grad : seeds)
    ops->insert(ops->begin(), OpDesc("tensor_array_sum", {{"X", {grad}}}, {{"Out", {grad}}},
                                     {{"op_role", int32_t(kOpRoleBackward)}}));
}

// Paddle 3.x's PIR programs have no outputs for Fluid's intermediates (reshape2's, squeeze2's,
// transpose2's XShape), which those ops' grads read: op `i` gets a variable of its own for each
// intermediate output it leaves unbound, inferred like its others (in block 0 and in the bodies
// of control-flow ops alike: a loop iteration's scope holds its own).
void BindIntermediateOutputs(BlockDesc* block, size_t i) {
  OpDesc* op = block->Op(i);
  const OpInfo& info = Registry::Global().GetOp(op->type());
  const std::vector<std::string> outs = op->OutputArgumentNames();
  if (outs.empty()) return;
  bool bound = false;
  for (const auto& out : info.proto.outputs()) {
    if (!out.intermediate() || !op->Output(out.name()).empty()) continue;
    std::string name = outs[0] + "@" + out.name();
    while (block->FindVarRecursive(name)) name += "_";
    block->Var(name)->set_type(TIDE_VAR_LOD_TENSOR);
    op->SetOutput(out.name(), {name});
    bound = true;
  }
  if (bound) InferShapeAtCompileTime(info, *op, block);
}

// A control-flow op (one with a block attribute) marked is_test promises that no backward reads
// its iterations (a while then runs them all in one scope and keeps no StepScopes): inference
// programs are saved so (Fluid's save_inference_model, Tide's PIR loader). Differentiating
// through it breaks that promise, so it keeps its iterations again. Other ops' is_test (batch
// norm's statistics, dropout) is the model's mode and stays.
void KeepIterationsForBackward(OpDesc* op) {
  if (!op->HasAttr("is_test")) return;
  const Attribute& is_test = op->GetAttr("is_test");
  if (AttrTypeOf(is_test) != TIDE_ATTR_BOOLEAN || !std::get<bool>(is_test)) return;
  if (!op->SubBlocks().empty()) op->SetAttr("is_test", false);
}

// What differentiating op `i` of `block` needs of the forward op itself.
void PrepareForGradient(BlockDesc* block, size_t i) {
  BindIntermediateOutputs(block, i);
  KeepIterationsForBackward(block->Op(i));
}

// The gradient block of a control-flow op's body (block `fwd_idx`): the grad ops of all its ops
// in reverse, repeated grads summed, every gradient variable declared in it, so that each run of
// it (in a loop iteration's scope) writes its own gradients for the control-flow grad op to
// gather. Its parent is the body: compile-time lookups see the body's temporaries. Gradients of
// the body's outer variables come from outside (the control-flow grad op sets them).
int32_t BuildGradBlock(ProgramDesc* program, int32_t fwd_idx,
                       const std::set<std::string>& outer_no_grad) {
  BlockDesc* body = program->MutableBlock(fwd_idx);
  std::set<std::string> no_grad = NoGradVars(*body, body->OpSize(), outer_no_grad);
  std::vector<std::string> no_grad_sorted(no_grad.begin(), no_grad.end());
  std::vector<OpDesc> ops;
  std::set<std::string> produced;
  for (size_t i = body->OpSize(); i-- > 0;) {
    PrepareForGradient(body, i);
    std::vector<OpDesc> grads = GradOpsWithOutputs(program, *body->Op(i), no_grad_sorted);
    ReadValuesOpSaw(body, i, &grads);
    for (OpDesc& g : grads) {
      for (const auto& in : g.InputArgumentNames()) {
        if (!IsGradName(in) || produced.count(in)) continue;
        if (body->FindVar(ForwardName(in))) FillMissingGrad(*body, &g, in, &ops);  // a temporary's
        produced.insert(in);  // else an outer variable's: given
      }
      const std::vector<std::string> g_outs = g.OutputArgumentNames();
      if (AllEmpty(g_outs)) continue;  // it only passed on a gradient nobody produced
      for (const auto& o : g_outs)
        if (o != kEmptyVarName) produced.insert(o);
      g.SetAttr("op_role", int32_t(kOpRoleBackward));
      ops.push_back(std::move(g));
    }
  }
  KeepIncomingArrayGrads(*body, &ops);
  ops = AddUpRepeatedGrads(*body, std::move(ops));
  BlockDesc* gb = program->AppendBlock(*program->MutableBlock(fwd_idx));
  gb->set_forward_block_idx(fwd_idx);
  for (const OpDesc& g : ops) {
    std::vector<std::string> names = g.InputArgumentNames();
    for (const auto& n : g.OutputArgumentNames()) names.push_back(n);
    for (const auto& n : names)  // every gradient its own, even an outer variable's
      if (IsGradName(n) && !gb->FindVar(n)) DeclareGradVar(gb, n);
    AppendChecked(gb, g);
  }
  return gb->idx();
}

// Grad ops for `fwd`; the gradient blocks of its block attributes are built first.
std::vector<OpDesc> GradOpsOf(ProgramDesc* program, const OpDesc& fwd,
                              const std::vector<std::string>& no_grad) {
  std::map<std::string, int32_t> grad_blocks;
  for (const auto& [name, value] : fwd.attrs())
    if (AttrTypeOf(value) == TIDE_ATTR_BLOCK)
      grad_blocks[name] = BuildGradBlock(program, std::get<BlockIndex>(value).idx,
                                         std::set<std::string>(no_grad.begin(), no_grad.end()));
  std::vector<OpDesc> grads = MakeGradOps(fwd, no_grad, grad_blocks);
  if (grads.empty()) CheckNoGradientWanted(fwd, no_grad);
  return grads;
}

// GradOpsOf without the grad ops that compute nothing wanted (every output @EMPTY@).
std::vector<OpDesc> GradOpsWithOutputs(ProgramDesc* program, const OpDesc& fwd,
                                       const std::vector<std::string>& no_grad) {
  std::vector<OpDesc> grads = GradOpsOf(program, fwd, no_grad);
  grads.erase(std::remove_if(grads.begin(), grads.end(),
                             [](const OpDesc& g) { return AllEmpty(g.OutputArgumentNames()); }),
              grads.end());
  return grads;
}

// Ops on a path to the loss, walking back from it (the last first); `wanted` gets the loss and
// every input of them whose gradient the loss needs.
std::vector<size_t> OpsOnPathToLoss(const BlockDesc& block, const std::string& loss, size_t loss_op,
                                    const std::set<std::string>& no_grad,
                                    std::set<std::string>* wanted) {
  wanted->insert(loss);
  std::vector<size_t> path;
  for (size_t i = loss_op + 1; i-- > 0;) {
    const OpDesc* op = block.Op(i);
    std::vector<std::string> outs = op->OutputArgumentNames();
    if (std::none_of(outs.begin(), outs.end(),
                     [&](const std::string& o) { return wanted->count(o) > 0; }))
      continue;
    path.push_back(i);
    for (const auto& in : op->InputArgumentNames())
      if (!no_grad.count(in)) wanted->insert(in);
  }
  return path;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> AppendBackward(
    ProgramDesc* program, const std::string& loss, const std::vector<std::string>& parameters,
    const std::set<std::string>& no_grad_set) {
  BlockDesc* block = program->MutableBlock(0);
  const VarDesc* loss_var = block->FindVar(loss);
  TIDE_ENFORCE(loss_var != nullptr, "append_backward: the loss '", loss,
               "' is not a variable of block 0");
  TIDE_ENFORCE(IsFloatType(loss_var->dtype()), "append_backward: the loss '", loss, "' is ",
               DataTypeName(loss_var->dtype()), "; it must be a float tensor");
  size_t loss_op = block->OpSize();
  for (size_t i = block->OpSize(); i-- > 0;)
    if (Contains(block->Op(i)->OutputArgumentNames(), loss)) {
      loss_op = i;
      break;
    }
  TIDE_ENFORCE(loss_op < block->OpSize(), "append_backward: no op of block 0 computes the loss '",
               loss, "'");
  int64_t loss_numel = 1;
  for (int64_t d : loss_var->shape()) loss_numel *= d;
  TIDE_ENFORCE(loss_numel == 1, "append_backward: the loss '", loss,
               "' must hold one element, its shape is ", DDim(loss_var->shape()).ToString(),
               " (reduce it, e.g. with mean)");

  std::set<std::string> no_grad = NoGradVars(*block, loss_op + 1, no_grad_set);
  std::vector<std::string> no_grad_sorted(no_grad.begin(), no_grad.end());

  std::set<std::string> wanted;
  const std::vector<size_t> path = OpsOnPathToLoss(*block, loss, loss_op, no_grad, &wanted);

  // Grad ops in reverse order; output grads nobody produced are zero-filled first.
  std::string loss_grad = GradVarName(loss);
  std::vector<OpDesc> grad_ops;
  grad_ops.emplace_back("fill_constant", VariableNameMap{}, VariableNameMap{{"Out", {loss_grad}}},
                        AttributeMap{{"shape", loss_var->shape()},
                                     {"value", 1.0f},
                                     {"dtype", int32_t(loss_var->dtype())},
                                     {"op_role", int32_t(kOpRoleBackward | kOpRoleLoss)}});
  std::set<std::string> produced = {loss_grad};
  for (size_t i : path) {
    const OpDesc& fwd = *block->Op(i);
    std::vector<std::string> outs = fwd.OutputArgumentNames();
    bool any = std::any_of(outs.begin(), outs.end(), [&](const std::string& o) {
      return produced.count(GradVarName(o)) > 0;
    });
    if (!any) continue;  // no gradient reaches this op
    PrepareForGradient(block, i);
    std::vector<OpDesc> grads = GradOpsWithOutputs(program, fwd, no_grad_sorted);
    ReadValuesOpSaw(block, i, &grads);
    for (OpDesc& g : grads) {
      for (const auto& in : g.InputArgumentNames()) {
        if (in.size() > 5 && in.compare(in.size() - 5, 5, "@GRAD") == 0 && !produced.count(in)) {
          FillMissingGrad(*block, &g, in, &grad_ops);
          produced.insert(in);
        }
      }
      const std::vector<std::string> g_outs = g.OutputArgumentNames();
      if (AllEmpty(g_outs)) continue;  // it only passed on a gradient nobody produced
      for (const auto& o : g_outs)
        if (o != kEmptyVarName) produced.insert(o);
      g.SetAttr("op_role", int32_t(kOpRoleBackward));
      grad_ops.push_back(std::move(g));
    }
  }
  grad_ops = AddUpRepeatedGrads(*block, std::move(grad_ops));

  // Pairs to return.
  std::vector<std::string> params = parameters;
  if (params.empty())
    for (const VarDesc* v : block->AllVars())
      if (v->persistable() && IsDifferentiable(v->dtype()) && !no_grad.count(v->name()) &&
          wanted.count(v->name()))
        params.push_back(v->name());
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& p : params)
    if (produced.count(GradVarName(p)) && !no_grad.count(p)) pairs.emplace_back(p, GradVarName(p));

  // Append, declaring gradient variables and inferring their shapes.
  for (OpDesc& g : grad_ops) {
    for (const auto& [p, grad] : pairs)
      if (Contains(g.OutputArgumentNames(), grad))
        g.SetAttr("op_role_var", std::vector<std::string>{p, grad});
    DeclareGradVars(block, g);
    AppendChecked(block, g);
  }
  return pairs;
}

}  // namespace tide::core
