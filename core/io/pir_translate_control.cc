// pir_translate_control.cc: control flow (pd_op.if and pd_op.while as Fluid's conditional_block
// and while ops with sub-blocks, pd_op.create_array) and in-place operations (pir_translator.h).
#include <algorithm>
#include <cmath>
#include <variant>

#include "core/io/pir_translator.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"

namespace tide::core::pir {

void Translator::FindMutated(const Json& ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Json op = ops[i];
    const std::string name = OpName(op);
    const int k = InPlaceOperand(name);
    if (k >= 0 && op.Has("I") && op["I"].size() > static_cast<size_t>(k))
      mutated_.insert(op["I"][static_cast<size_t>(k)]["%"].Int());
    if (!op.Has("regions")) continue;
    const Json regions = op["regions"];
    for (size_t r = 0; r < regions.size(); ++r) {
      const Json blocks = regions[r]["blocks"];
      for (size_t b = 0; b < blocks.size(); ++b) FindMutated(blocks[b]["ops"]);
    }
  }
}

int Translator::InPlaceOperand(const std::string& name) {
  if (name.size() < 2 || name.back() != '_' || name.rfind("pd_op.", 0) != 0) return -1;
  // share_data_ (Tensor.detach()) writes no operand: its result is a new value.
  static const std::map<std::string, int> others = {
      {"pd_op.where_", 1}, {"pd_op.assign_out_", 1}, {"pd_op.share_data_", -1}};
  auto it = others.find(name);
  if (it != others.end()) return it->second;
  const PirOpRule* rule = FindPirOpRule(name);
  if (rule)
    for (const auto& r : rule->results)
      if (r.same_as >= 0) return -1;
  return 0;
}

void Translator::InPlace(int64_t operand_id, int64_t result_id) {
  auto o = values_.find(operand_id), r = values_.find(result_id);
  if (o == values_.end() || r == values_.end()) return;
  PirValue& operand = o->second;
  const PirValue result = r->second;
  if (operand.is_list || operand.var.empty() || result.var.empty() || operand.var == result.var)
    return;
  operand.constant.reset();
  operand.scalars.clear();
  if (VarBlock(operand.var) == block_->idx()) {
    operand.var = result.var;
    return;
  }
  AddAssign(result.var, operand.var);
  values_[result_id] = operand;
}

int Translator::VarBlock(const std::string& var) const {
  auto it = var_block_.find(var);
  return it == var_block_.end() ? 0 : it->second;
}

void Translator::AddAssign(const std::string& from, const std::string& to) {
  auto* a = block_->add_ops();
  a->set_type("assign");
  AddArgs(a->add_inputs(), "X", {from});
  AddArgs(a->add_outputs(), "Out", {to});
}

void Translator::EnterNewBlock() {
  const int parent = block_->idx();
  block_ = program_.add_blocks();
  block_->set_idx(program_.blocks_size() - 1);
  block_->set_parent_idx(parent);
}

std::vector<Json> Translator::RegionBody(const Json& region, const std::string& owner) {
  const Json blocks = region["blocks"];
  if (blocks.size() != 1) blocks.Fail(owner + ": a region of one block was expected");
  const Json ops = blocks[0]["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    if (OpName(ops[i]) != "cf.yield") {
      Op(ops[i]);
      continue;
    }
    if (i + 1 != ops.size()) ops[i].Fail("a cf.yield before the end of a " + owner + " block");
    std::vector<Json> yielded;
    if (ops[i].Has("I"))
      for (size_t k = 0; k < ops[i]["I"].size(); ++k) yielded.push_back(ops[i]["I"][k]);
    return yielded;
  }
  ops.Fail(owner + ": the block does not end with a cf.yield");
}

void Translator::SkipRegions(const Json& op) {
  proto::BlockDesc* outer = block_;
  const Json regions = op["regions"];
  for (size_t r = 0; r < regions.size(); ++r) {
    const Json blocks = regions[r]["blocks"];
    for (size_t b = 0; b < blocks.size(); ++b) {
      EnterNewBlock();
      if (blocks[b].Has("args")) {
        const Json args = blocks[b]["args"];
        for (size_t a = 0; a < args.size(); ++a) {
          PirValue& v = values_[args[a]["#"].Int()];
          v.made_by = OpName(op);
          v.untranslated = true;
        }
      }
      const Json ops = blocks[b]["ops"];
      for (size_t i = 0; i < ops.size(); ++i)
        if (OpName(ops[i]) != "cf.yield") Op(ops[i]);
      block_ = outer;
    }
  }
}

const PirValue* Translator::Yielded(const Json& operand, const std::string& owner) {
  const PirValue& v = ValueOf(operand);
  if (v.untranslated) return nullptr;  // an operation Tide lacks made it (listed in one error)
  if (v.is_list || v.var.empty())
    Fail(operand, owner + " yields a value of " + v.made_by + " that Tide does not compute");
  return &v;
}

void Translator::If(const Json& op) {
  const Json in = op["I"];
  if (in.size() != 1)
    op.Fail("pd_op.if with " + std::to_string(in.size()) +
            " operands; one, its condition, was expected");
  const PirValue cond = ValueOf(in[0]);
  if (!cond.untranslated && (cond.is_list || cond.var.empty()))
    Fail(in[0],
         "pd_op.if's condition comes from " + cond.made_by + ", which Tide does not compute");
  const Json regions = op["regions"];
  if (regions.size() != 2) regions.Fail("pd_op.if: two regions (true, false) were expected");
  const auto results = Results(op);
  std::vector<PirValue> outs(results.size());
  std::vector<std::string> branch_vars[2];
  for (size_t k = 0; k < results.size(); ++k) {
    const int64_t id = results[k]["%"].Int();
    outs[k].var = FreshName("if", id);
    outs[k].made_by = "pd_op.if";
    outs[k].dtype = DeclareResult(results[k], outs[k].var, false);
    outs[k].rank = last_rank_;
    for (int b = 0; b < 2; ++b) {
      branch_vars[b].push_back(FreshName(b == 0 ? "if_true" : "if_false", id));
      DeclareResult(results[k], branch_vars[b].back(), false);
    }
  }
  proto::BlockDesc* outer = block_;
  bool complete = !cond.untranslated;
  int sub[2];
  for (int b = 0; b < 2; ++b) {
    EnterNewBlock();
    sub[b] = block_->idx();
    const std::vector<Json> yielded = RegionBody(regions[static_cast<size_t>(b)], "pd_op.if");
    if (yielded.size() != results.size())
      op.Fail("pd_op.if's " + std::string(b == 0 ? "true" : "false") + " region yields " +
              std::to_string(yielded.size()) + " values for its " + std::to_string(results.size()) +
              " results");
    for (size_t k = 0; k < yielded.size(); ++k) {
      const PirValue* y = Yielded(yielded[k], "pd_op.if");
      if (y) AddAssign(y->var, branch_vars[b][k]);
      complete = complete && y;
    }
    block_ = outer;
  }
  if (!complete) return MarkUntranslated(op, "pd_op.if");

  // The negation and the mask first: a branch changing cond in place must not run the other.
  const std::string negation = FreshName("if_not", results.empty() ? 0 : results[0]["%"].Int());
  AddVar(negation, proto::VarType::LOD_TENSOR, proto::VarType::BOOL, {}, false);
  auto* n = block_->add_ops();
  n->set_type("logical_not");
  AddArgs(n->add_inputs(), "X", {cond.var});
  AddArgs(n->add_outputs(), "Out", {negation});
  std::string mask;
  if (!results.empty()) {
    mask = FreshName("if_mask", results[0]["%"].Int());
    AddVar(mask, proto::VarType::LOD_TENSOR, proto::VarType::INT32, {}, false);
    auto* c = block_->add_ops();
    c->set_type("cast");
    AddArgs(c->add_inputs(), "X", {cond.var});
    AddArgs(c->add_outputs(), "Out", {mask});
    AttrToProto("in_dtype", int32_t{proto::VarType::BOOL}, c->add_attrs());
    AttrToProto("out_dtype", int32_t{proto::VarType::INT32}, c->add_attrs());
  }
  for (int b = 0; b < 2; ++b) {
    const std::string scope = FreshName("if_scope", sub[b]);
    AddVar(scope, proto::VarType::STEP_SCOPES, -1, {}, false);
    auto* cb = block_->add_ops();
    cb->set_type("conditional_block");
    AddArgs(cb->add_inputs(), "Cond", {b == 0 ? cond.var : negation});
    AddArgs(cb->add_outputs(), "Scope", {scope});
    AttrToProto("sub_block", BlockIndex{sub[b]}, cb->add_attrs());
    AttrToProto("is_scalar_condition", true, cb->add_attrs());
  }
  for (size_t k = 0; k < results.size(); ++k) {
    auto* s = block_->add_ops();
    s->set_type("select_input");
    AddArgs(s->add_inputs(), "X", {branch_vars[1][k], branch_vars[0][k]});
    AddArgs(s->add_inputs(), "Mask", {mask});
    AddArgs(s->add_outputs(), "Out", {outs[k].var});
    values_[results[k]["%"].Int()] = outs[k];
  }
}

void Translator::While(const Json& op) {
  const Json in = op["I"];
  if (in.size() < 1) op.Fail("pd_op.while without its condition operand");
  const size_t n = in.size() - 1;
  const auto results = Results(op);
  if (results.size() != n)
    op.Fail("pd_op.while with " + std::to_string(n) + " loop-carried operands and " +
            std::to_string(results.size()) + " results");
  const Json regions = op["regions"];
  if (regions.size() != 1) regions.Fail("pd_op.while: one region, its body, was expected");
  const Json body = regions[0]["blocks"];
  if (body.size() != 1) body.Fail("pd_op.while: a body of one block was expected");
  const Json args = body[0]["args"];
  if (args.size() != n)
    args.Fail("pd_op.while's body has " + std::to_string(args.size()) + " arguments for its " +
              std::to_string(n) + " loop-carried values");

  bool complete = true;
  std::vector<const PirValue*> init(n + 1);
  for (size_t k = 0; k <= n; ++k) {
    init[k] = Yielded(in[k], "pd_op.while's operand " + std::to_string(k) + ":");
    complete = complete && init[k];
  }
  const int64_t tag = n > 0 ? results[0]["%"].Int() : in[0]["%"].Int();
  std::vector<PirValue> carried(n);
  for (size_t k = 0; k < n; ++k) {
    carried[k].var = FreshName("while_carried", results[k]["%"].Int());
    carried[k].made_by = "pd_op.while";
    carried[k].dtype = DeclareResult(results[k], carried[k].var, false);
    carried[k].rank = last_rank_;
  }
  const std::string cond_var = FreshName("while_cond", tag);
  AddVar(cond_var, proto::VarType::LOD_TENSOR, proto::VarType::BOOL, {}, false);
  const std::string steps = FreshName("while_scopes", tag);
  AddVar(steps, proto::VarType::STEP_SCOPES, -1, {}, false);

  proto::BlockDesc* outer = block_;
  EnterNewBlock();
  const int sub = block_->idx();
  for (size_t k = 0; k < n; ++k) values_[args[k]["#"].Int()] = carried[k];
  const std::vector<Json> yielded = RegionBody(regions[0], "pd_op.while");
  if (yielded.size() != n + 1)
    op.Fail("pd_op.while's body yields " + std::to_string(yielded.size()) +
            " values; its condition and " + std::to_string(n) + " loop-carried values expected");
  std::vector<const PirValue*> next(n + 1);
  for (size_t k = 0; k <= n; ++k) {
    next[k] = Yielded(yielded[k], "pd_op.while's body");
    complete = complete && next[k];
  }
  if (complete) {
    // The yields are assigned at once: a value that is another carried variable (a swap) is
    // copied first, before that variable is assigned its own next value.
    std::set<std::string> carried_vars;
    for (const auto& c : carried) carried_vars.insert(c.var);
    std::vector<std::string> from(n + 1);
    for (size_t k = 0; k <= n; ++k) {
      from[k] = next[k]->var;
      if (k > 0 && from[k] == carried[k - 1].var) continue;
      if (carried_vars.count(from[k])) {
        const std::string copy = FreshName("while_next", yielded[k]["%"].Int());
        AddVar(copy, proto::VarType::LOD_TENSOR, next[k]->dtype, {}, false);
        AddAssign(from[k], copy);
        from[k] = copy;
      }
    }
    AddAssign(from[0], cond_var);
    for (size_t k = 0; k < n; ++k)
      if (from[k + 1] != carried[k].var) AddAssign(from[k + 1], carried[k].var);
  }
  block_ = outer;
  if (!complete) return MarkUntranslated(op, "pd_op.while");

  for (size_t k = 0; k < n; ++k) AddAssign(init[k + 1]->var, carried[k].var);
  AddAssign(init[0]->var, cond_var);
  auto* w = block_->add_ops();
  w->set_type("while");
  AddArgs(w->add_inputs(), "Condition", {cond_var});
  AddArgs(w->add_outputs(), "StepScopes", {steps});
  AttrToProto("sub_block", BlockIndex{sub}, w->add_attrs());
  AttrToProto("is_test", true, w->add_attrs());
  for (size_t k = 0; k < n; ++k) values_[results[k]["%"].Int()] = carried[k];
}

void Translator::CreateArray(const Json& op) {
  const Json result = FirstResult(op);
  const int64_t id = result["%"].Int();
  PirValue v;
  v.var = FreshName("array", id);
  v.made_by = "pd_op.create_array";
  v.dtype = DeclareResult(result, v.var, false);
  const std::string none = v.var + ".empty";
  AddVar(none, proto::VarType::LOD_TENSOR_ARRAY, v.dtype < 0 ? proto::VarType::FP32 : v.dtype, {},
         false);
  // Nothing the loss reaches flows into an empty array: backward stops there (tensor_array_sum,
  // which makes the array, has no gradient).
  block_->mutable_vars(block_->vars_size() - 1)->set_stop_gradient(true);
  auto* e = block_->add_ops();
  e->set_type("tensor_array_sum");
  AddArgs(e->add_inputs(), "X", {none});
  AddArgs(e->add_outputs(), "Out", {v.var});
  values_[id] = v;
}

}  // namespace tide::core::pir
