// pir_control_flow.cc: see pir_control_flow.h. The translation of pd_op.if and pd_op.while
// (pir_translate_control.cc) writes each sub-block's ops without their control-flow op's lists of
// outer variables; they are known only once the sub-block is complete and pruned, which this does,
// innermost block first.
#include "core/io/pir_control_flow.h"

#include <set>
#include <string>
#include <vector>

namespace tide::core {
namespace {

// The names an op reads / writes.
std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& vars) {
  std::vector<std::string> out;
  for (const auto& v : vars) out.insert(out.end(), v.arguments().begin(), v.arguments().end());
  return out;
}

int SubBlockOf(const proto::OpDesc& op) {
  for (const auto& a : op.attrs())
    if (a.name() == "sub_block" && a.type() == proto::BLOCK) return a.block_idx();
  return -1;
}

std::set<std::string> Declared(const proto::BlockDesc& b) {
  std::set<std::string> names;
  for (const auto& v : b.vars()) names.insert(v.name());
  return names;
}

// Replaces (or adds) the op's argument list `param` on the inputs or outputs `side`.
void SetArgs(google::protobuf::RepeatedPtrField<proto::OpDesc::Var>* side, const std::string& param,
             const std::vector<std::string>& names) {
  proto::OpDesc::Var* var = nullptr;
  for (auto& v : *side)
    if (v.parameter() == param) var = &v;
  if (!var) {
    var = side->Add();
    var->set_parameter(param);
  }
  var->clear_arguments();
  for (const auto& n : names) var->add_arguments(n);
}

// Appends `name` to `list` once, keeping the order of first appearance (deterministic programs).
void AddOnce(const std::string& name, std::set<std::string>* seen, std::vector<std::string>* list) {
  if (seen->insert(name).second) list->push_back(name);
}

class Finisher {
 public:
  explicit Finisher(proto::ProgramDesc* p) : p_(p) {}

  void Finish(int idx) {
    proto::BlockDesc* b = p_->mutable_blocks(idx);
    for (auto& op : *b->mutable_ops()) {
      const int sub = SubBlockOf(op);
      if (sub <= 0 || sub >= p_->blocks_size()) continue;
      Finish(sub);
      const proto::BlockDesc& s = p_->blocks(sub);
      const std::set<std::string> local = Declared(s);
      std::set<std::string> seen_in, seen_out;
      std::vector<std::string> reads, writes;
      for (const auto& inner : s.ops()) {
        for (const auto& n : Names(inner.inputs()))
          if (!local.count(n)) AddOnce(n, &seen_in, &reads);
        for (const auto& n : Names(inner.outputs()))
          if (!local.count(n)) AddOnce(n, &seen_out, &writes);
      }
      const bool is_while = op.type() == "while";
      SetArgs(op.mutable_inputs(), is_while ? "X" : "Input", reads);
      SetArgs(op.mutable_outputs(), "Out", writes);
    }
    Prune(b);
  }

 private:
  // Drops the ops none of whose outputs is read by a later op kept, belongs to an enclosing
  // block (a sub-block's effect), or is fetched; then the variables no op names.
  void Prune(proto::BlockDesc* b) {
    const bool top = b->idx() == 0;
    const std::set<std::string> local = Declared(*b);
    std::set<std::string> live;
    std::vector<bool> keep(static_cast<size_t>(b->ops_size()));
    for (int i = b->ops_size() - 1; i >= 0; --i) {
      const auto& op = b->ops(i);
      bool k = top && (op.type() == "feed" || op.type() == "fetch");
      for (const auto& n : Names(op.outputs())) k = k || live.count(n) || !local.count(n);
      if (!k) continue;
      keep[static_cast<size_t>(i)] = true;
      for (const auto& n : Names(op.inputs())) live.insert(n);
    }
    proto::BlockDesc pruned;
    pruned.set_idx(b->idx());
    pruned.set_parent_idx(b->parent_idx());
    if (b->has_forward_block_idx()) pruned.set_forward_block_idx(b->forward_block_idx());
    std::set<std::string> used;
    for (int i = 0; i < b->ops_size(); ++i) {
      if (!keep[static_cast<size_t>(i)]) continue;
      auto* op = pruned.add_ops();
      op->Swap(b->mutable_ops(i));
      for (const auto& n : Names(op->inputs())) used.insert(n);
      for (const auto& n : Names(op->outputs())) used.insert(n);
    }
    for (auto& v : *b->mutable_vars())
      if (v.persistable() || used.count(v.name())) pruned.add_vars()->Swap(&v);
    b->Swap(&pruned);
  }

  proto::ProgramDesc* p_;
};

}  // namespace

void FinishPirBlocks(proto::ProgramDesc* program) {
  if (program->blocks_size() > 0) Finisher(program).Finish(0);
}

}  // namespace tide::core
