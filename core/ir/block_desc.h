// block_desc.h: a block of a program (in Fluid, blocks are scopes): its variables and its ops
// in order, and its parent block.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/op_desc.h"
#include "core/ir/var_desc.h"

namespace tide::core {

class ProgramDesc;

class BlockDesc {
 public:
  BlockDesc(ProgramDesc* program, int32_t idx, int32_t parent_idx)
      : program_(program), idx_(idx), parent_idx_(parent_idx) {}
  BlockDesc(const BlockDesc&) = delete;
  BlockDesc& operator=(const BlockDesc&) = delete;

  int32_t idx() const { return idx_; }
  int32_t parent_idx() const { return parent_idx_; }
  int32_t forward_block_idx() const { return forward_block_idx_; }
  void set_forward_block_idx(int32_t i) { forward_block_idx_ = i; }
  ProgramDesc* program() const { return program_; }
  // The parent block, or nullptr for the global block.
  BlockDesc* parent() const;

  // Finds or creates a variable of this block.
  VarDesc* Var(const std::string& name);
  VarDesc* FindVar(const std::string& name) const;
  // Here or in an ancestor block.
  VarDesc* FindVarRecursive(const std::string& name) const;
  bool HasVar(const std::string& name) const { return FindVar(name) != nullptr; }
  void RemoveVar(const std::string& name);
  void RenameVar(const std::string& from, const std::string& to);
  std::vector<VarDesc*> AllVars() const;  // in creation order

  OpDesc* AppendOp();
  OpDesc* PrependOp();
  OpDesc* InsertOp(size_t index);
  void RemoveOps(size_t begin, size_t end);
  size_t OpSize() const { return ops_.size(); }
  OpDesc* Op(size_t i) const { return ops_.at(i).get(); }
  std::vector<OpDesc*> AllOps() const;

  void ToProto(proto::BlockDesc* out) const;
  // Fills an empty block from its proto (vars and ops).
  void LoadProto(const proto::BlockDesc& p);

 private:
  ProgramDesc* program_;
  int32_t idx_, parent_idx_;
  int32_t forward_block_idx_ = -1;
  // Shared, not owned alone: a variable or op removed from the block stays valid for whoever
  // still holds it (Python's Variable and Operator hold theirs through shared_from_this).
  std::vector<std::shared_ptr<VarDesc>> vars_;
  std::unordered_map<std::string, VarDesc*> var_index_;
  std::deque<std::shared_ptr<OpDesc>> ops_;
};

}  // namespace tide::core
