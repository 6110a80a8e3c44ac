// backward.cc: AppendBackward.
#include "core/ir/backward.h"

#include <algorithm>
#include <map>

#include "core/ir/compile_infer_shape.h"
#include "core/ir/grad_op_maker.h"
#include "core/platform/enforce.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

bool IsFloat(DataType t) { return t == TIDE_FP32 || t == TIDE_FP64 || t == TIDE_FP16 || t == TIDE_BF16; }

// The forward variable a gradient name belongs to: "x@GRAD@RENAME@1" -> "x".
std::string ForwardName(const std::string& grad) {
  auto pos = grad.find("@GRAD");
  return pos == std::string::npos ? grad : grad.substr(0, pos);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Variables that get no gradient: given, stop_gradient, non-float, and everything computed only
// from such variables (forward propagation, as Fluid's _find_no_grad_vars).
std::set<std::string> NoGradVars(const BlockDesc& block, size_t loss_op,
                                 const std::set<std::string>& given) {
  std::set<std::string> no_grad = given;
  for (const VarDesc* v : block.AllVars())
    if (v->stop_gradient() || (v->type() == TIDE_VAR_LOD_TENSOR && !IsFloat(v->dtype())))
      no_grad.insert(v->name());
  for (size_t i = 0; i <= loss_op; ++i) {
    const OpDesc* op = block.Op(i);
    std::vector<std::string> ins = op->InputArgumentNames();
    bool all_no_grad = std::all_of(ins.begin(), ins.end(), [&](const std::string& n) { return no_grad.count(n) > 0; });
    if (all_no_grad)
      for (const auto& o : op->OutputArgumentNames())
        if (o != kEmptyVarName) no_grad.insert(o);
  }
  return no_grad;
}

// Declares the gradient variables an op uses, shaped like their forward variables.
void DeclareGradVars(BlockDesc* block, const OpDesc& op) {
  auto declare = [&](const std::string& name) {
    if (name == kEmptyVarName || block->FindVarRecursive(name)) return;
    VarDesc* v = block->Var(name);
    if (const VarDesc* fwd = block->FindVarRecursive(ForwardName(name))) {
      v->set_type(fwd->type() == TIDE_VAR_SELECTED_ROWS ? TIDE_VAR_LOD_TENSOR : fwd->type());
      v->set_dtype(fwd->dtype());
      v->set_shape(fwd->shape());
      v->set_lod_level(fwd->lod_level());
    }
  };
  for (const auto& n : op.InputArgumentNames()) declare(n);
  for (const auto& n : op.OutputArgumentNames()) declare(n);
}

OpDesc SumOp(const std::vector<std::string>& parts, const std::string& out) {
  return OpDesc("sum", {{"X", parts}}, {{"Out", {out}}}, {{"op_role", int32_t(kOpRoleBackward)}});
}

// Fluid's _addup_repetitive_outputs_: a gradient written by several grad ops is written under
// renamed parts and summed before its first reader (or at the end).
std::vector<OpDesc> AddUpRepeatedGrads(std::vector<OpDesc> ops) {
  std::vector<OpDesc> out;
  std::map<std::string, std::vector<std::string>> parts;  // grad -> names written so far
  std::map<std::string, size_t> first_writer;             // grad -> index in `out`
  int rename_id = 0;
  auto flush = [&](const std::string& grad) {
    auto it = parts.find(grad);
    if (it == parts.end() || it->second.size() < 2) return;
    out.push_back(SumOp(it->second, grad));
    it->second = {grad};
    first_writer[grad] = out.size() - 1;
  };
  for (OpDesc& op : ops) {
    for (const auto& in : op.InputArgumentNames()) flush(in);
    for (const auto& [param, args] : op.outputs()) {
      std::vector<std::string> renamed = args;
      for (auto& name : renamed) {
        if (name == kEmptyVarName) continue;
        auto& written = parts[name];
        if (written.empty()) {
          written.push_back(name);
          first_writer[name] = out.size();
          continue;
        }
        if (written.size() == 1 && written[0] == name) {  // rename the first writer's output
          std::string first = name + "@RENAME@" + std::to_string(rename_id++);
          OpDesc& w = out[first_writer[name]];
          for (const auto& [p, a] : w.outputs()) {
            std::vector<std::string> fixed = a;
            std::replace(fixed.begin(), fixed.end(), name, first);
            w.SetOutput(p, fixed);
          }
          written[0] = first;
        }
        std::string part = name + "@RENAME@" + std::to_string(rename_id++);
        written.push_back(part);
        name = part;
      }
      op.SetOutput(param, renamed);
    }
    out.push_back(std::move(op));
  }
  std::vector<std::string> pending;
  for (const auto& [grad, names] : parts)
    if (names.size() > 1) pending.push_back(grad);
  for (const auto& g : pending) flush(g);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> AppendBackward(
    ProgramDesc* program, const std::string& loss, const std::vector<std::string>& parameters,
    const std::set<std::string>& no_grad_set) {
  BlockDesc* block = program->MutableBlock(0);
  const VarDesc* loss_var = block->FindVar(loss);
  TIDE_ENFORCE(loss_var != nullptr, "append_backward: the loss '", loss, "' is not a variable of block 0");
  TIDE_ENFORCE(IsFloat(loss_var->dtype()), "append_backward: the loss '", loss, "' is ",
               DataTypeName(loss_var->dtype()), "; it must be a float tensor");
  size_t loss_op = block->OpSize();
  for (size_t i = block->OpSize(); i-- > 0;)
    if (Contains(block->Op(i)->OutputArgumentNames(), loss)) {
      loss_op = i;
      break;
    }
  TIDE_ENFORCE(loss_op < block->OpSize(), "append_backward: no op of block 0 computes the loss '", loss, "'");
  int64_t loss_numel = 1;
  for (int64_t d : loss_var->shape()) loss_numel *= d;
  TIDE_ENFORCE(loss_numel == 1, "append_backward: the loss '", loss, "' must hold one element, its shape is ",
               DDim(loss_var->shape()).ToString(), " (reduce it, e.g. with mean)");

  std::set<std::string> no_grad = NoGradVars(*block, loss_op, no_grad_set);
  std::vector<std::string> no_grad_sorted(no_grad.begin(), no_grad.end());

  // Ops on a path to the loss, walking back from it.
  std::set<std::string> wanted = {loss};
  std::vector<size_t> path;
  for (size_t i = loss_op + 1; i-- > 0;) {
    const OpDesc* op = block->Op(i);
    std::vector<std::string> outs = op->OutputArgumentNames();
    if (std::none_of(outs.begin(), outs.end(), [&](const std::string& o) { return wanted.count(o) > 0; }))
      continue;
    path.push_back(i);
    for (const auto& in : op->InputArgumentNames())
      if (!no_grad.count(in)) wanted.insert(in);
  }

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
    for (OpDesc& g : MakeGradOps(fwd, no_grad_sorted)) {
      std::vector<std::string> g_outs = g.OutputArgumentNames();
      if (std::all_of(g_outs.begin(), g_outs.end(), [](const std::string& n) { return n == kEmptyVarName; }))
        continue;
      for (const auto& in : g.InputArgumentNames()) {
        if (in.size() > 5 && in.compare(in.size() - 5, 5, "@GRAD") == 0 && !produced.count(in)) {
          std::string fwd_var = ForwardName(in);
          grad_ops.emplace_back("fill_zeros_like", VariableNameMap{{"X", {fwd_var}}},
                                VariableNameMap{{"Out", {in}}},
                                AttributeMap{{"op_role", int32_t(kOpRoleBackward)}});
          produced.insert(in);
        }
      }
      for (const auto& o : g_outs)
        if (o != kEmptyVarName) produced.insert(o);
      g.SetAttr("op_role", int32_t(kOpRoleBackward));
      grad_ops.push_back(std::move(g));
    }
  }
  grad_ops = AddUpRepeatedGrads(std::move(grad_ops));

  // Pairs to return.
  std::vector<std::string> params = parameters;
  if (params.empty())
    for (const VarDesc* v : block->AllVars())
      if (v->persistable() && IsFloat(v->dtype()) && !no_grad.count(v->name()) && wanted.count(v->name()))
        params.push_back(v->name());
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& p : params)
    if (produced.count(GradVarName(p)) && !no_grad.count(p)) pairs.emplace_back(p, GradVarName(p));

  // Append, declaring gradient variables and inferring their shapes.
  for (OpDesc& g : grad_ops) {
    for (const auto& [p, grad] : pairs)
      if (Contains(g.OutputArgumentNames(), grad)) g.SetAttr("op_role_var", std::vector<std::string>{p, grad});
    DeclareGradVars(block, g);
    OpDesc* added = block->AppendOp();
    *added = g;
    added->set_block(block);
    const OpInfo& info = Registry::Global().GetOp(g.type());
    try {
      CheckOpDesc(info, added);
      InferShapeAtCompileTime(info, *added, block);
    } catch (const Error& e) {
      TIDE_FAIL(e.code(), "append_backward: grad op '", g.type(), "': ", e.what());
    }
  }
  return pairs;
}

}  // namespace tide::core
