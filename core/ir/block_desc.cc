// block_desc.cc: BlockDesc variables, ops and protobuf conversion.
#include "core/ir/block_desc.h"

#include <algorithm>

#include "core/ir/program_desc.h"
#include "core/platform/enforce.h"

namespace tide::core {

BlockDesc* BlockDesc::parent() const {
  return parent_idx_ < 0 ? nullptr : program_->MutableBlock(parent_idx_);
}

VarDesc* BlockDesc::Var(const std::string& name) {
  if (VarDesc* v = FindVar(name)) return v;
  TIDE_ENFORCE(!name.empty(), "a variable name must not be empty (block ", idx_, ")");
  vars_.push_back(std::make_shared<VarDesc>(name));
  var_index_[name] = vars_.back().get();
  return vars_.back().get();
}

VarDesc* BlockDesc::FindVar(const std::string& name) const {
  auto it = var_index_.find(name);
  return it == var_index_.end() ? nullptr : it->second;
}

VarDesc* BlockDesc::FindVarRecursive(const std::string& name) const {
  for (const BlockDesc* b = this; b; b = b->parent())
    if (VarDesc* v = b->FindVar(name)) return v;
  return nullptr;
}

void BlockDesc::RemoveVar(const std::string& name) {
  auto it = var_index_.find(name);
  if (it == var_index_.end()) return;
  VarDesc* v = it->second;
  var_index_.erase(it);
  vars_.erase(std::remove_if(vars_.begin(), vars_.end(),
                             [v](const std::shared_ptr<VarDesc>& p) { return p.get() == v; }),
              vars_.end());
}

void BlockDesc::RenameVar(const std::string& from, const std::string& to) {
  VarDesc* v = FindVar(from);
  TIDE_ENFORCE(v != nullptr, "cannot rename '", from, "': no such variable in block ", idx_);
  TIDE_ENFORCE(!FindVar(to), "cannot rename '", from, "' to '", to, "': the name is taken");
  var_index_.erase(from);
  v->set_name(to);
  var_index_[to] = v;
  for (auto& op : ops_) {
    op->RenameInput(from, to);
    op->RenameOutput(from, to);
  }
}

std::vector<VarDesc*> BlockDesc::AllVars() const {
  std::vector<VarDesc*> out;
  for (const auto& v : vars_) out.push_back(v.get());
  return out;
}

OpDesc* BlockDesc::AppendOp() { return InsertOp(ops_.size()); }
OpDesc* BlockDesc::PrependOp() { return InsertOp(0); }

OpDesc* BlockDesc::InsertOp(size_t index) {
  TIDE_ENFORCE(index <= ops_.size(), "op index ", index, " is past the end of block ", idx_);
  auto it = ops_.insert(ops_.begin() + static_cast<long>(index), std::make_shared<OpDesc>());
  (*it)->set_block(this);
  return it->get();
}

void BlockDesc::RemoveOps(size_t begin, size_t end) {
  TIDE_ENFORCE(begin <= end && end <= ops_.size(), "bad op range [", begin, ", ", end,
               ") in block ", idx_);
  // A removed op may live on where a caller still holds it (Python's Operator): no longer in
  // this block.
  for (size_t i = begin; i < end; ++i) ops_[i]->set_block(nullptr);
  ops_.erase(ops_.begin() + static_cast<long>(begin), ops_.begin() + static_cast<long>(end));
}

std::vector<OpDesc*> BlockDesc::AllOps() const {
  std::vector<OpDesc*> out;
  for (const auto& o : ops_) out.push_back(o.get());
  return out;
}

void BlockDesc::ToProto(proto::BlockDesc* out) const {
  out->Clear();
  out->set_idx(idx_);
  out->set_parent_idx(parent_idx_);
  if (forward_block_idx_ >= 0) out->set_forward_block_idx(forward_block_idx_);
  for (const auto& v : vars_) v->ToProto(out->add_vars());
  for (const auto& o : ops_) o->ToProto(out->add_ops());
}

void BlockDesc::LoadProto(const proto::BlockDesc& p) {
  forward_block_idx_ = p.forward_block_idx();
  // Paddle 2.5 made tensors without dims 0-D (before, no dims meant not inferred yet).
  const int64_t version = program_ ? program_->version() : 0;
  const bool empty_dims_zero_d = version >= 2005000 && version <= ProgramDesc::kLastPaddleRelease;
  for (const auto& v : p.vars()) {
    TIDE_ENFORCE(!FindVar(v.name()), "block ", idx_, " declares variable '", v.name(), "' twice");
    vars_.push_back(std::make_shared<VarDesc>(VarDesc::FromProto(v, empty_dims_zero_d)));
    var_index_[v.name()] = vars_.back().get();
  }
  for (const auto& o : p.ops()) {
    ops_.push_back(std::make_shared<OpDesc>(OpDesc::FromProto(o)));
    ops_.back()->set_block(this);
  }
}

}  // namespace tide::core
