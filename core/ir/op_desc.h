// op_desc.h: an operator's compile-time description: type, parameter -> variable bindings for
// inputs and outputs, and attributes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "framework.pb.h"

namespace tide::core {

class BlockDesc;

using VariableNameMap = std::map<std::string, std::vector<std::string>>;

// Shared by its block and whoever holds it (block_desc.h): it outlives its removal from the block.
class OpDesc : public std::enable_shared_from_this<OpDesc> {
 public:
  OpDesc() = default;
  OpDesc(std::string type, VariableNameMap inputs, VariableNameMap outputs, AttributeMap attrs)
      : type_(std::move(type)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        attrs_(std::move(attrs)) {}

  const std::string& type() const { return type_; }
  void set_type(std::string t) { type_ = std::move(t); }

  const VariableNameMap& inputs() const { return inputs_; }
  const VariableNameMap& outputs() const { return outputs_; }
  // The variables bound to a parameter; empty when it has none.
  const std::vector<std::string>& Input(const std::string& param) const;
  const std::vector<std::string>& Output(const std::string& param) const;
  void SetInput(const std::string& param, std::vector<std::string> args) {
    inputs_[param] = std::move(args);
  }
  void SetOutput(const std::string& param, std::vector<std::string> args) {
    outputs_[param] = std::move(args);
  }
  std::vector<std::string> InputArgumentNames() const;
  std::vector<std::string> OutputArgumentNames() const;
  void RenameInput(const std::string& from, const std::string& to);
  void RenameOutput(const std::string& from, const std::string& to);

  const AttributeMap& attrs() const { return attrs_; }
  AttributeMap* mutable_attrs() { return &attrs_; }
  bool HasAttr(const std::string& name) const { return attrs_.count(name) > 0; }
  // Throws NOT_FOUND naming the op and the attribute.
  const Attribute& GetAttr(const std::string& name) const;
  void SetAttr(const std::string& name, Attribute value) { attrs_[name] = std::move(value); }
  void RemoveAttr(const std::string& name) { attrs_.erase(name); }
  // The blocks its BLOCK / BLOCKS attributes name (a control-flow op's bodies), each with the
  // attribute naming it, in attribute order.
  std::vector<std::pair<std::string, int32_t>> SubBlocks() const;

  bool is_target() const { return is_target_; }
  void set_is_target(bool t) { is_target_ = t; }
  // The block the op is in; nullptr once removed from it.
  BlockDesc* block() const { return block_; }
  void set_block(BlockDesc* b) { block_ = b; }

  void ToProto(proto::OpDesc* out) const;
  static OpDesc FromProto(const proto::OpDesc& p);
  // "mul(X=[x], Y=[w]) -> (Out=[y]) {x_num_col_dims=1}"
  std::string ToString() const;

 private:
  std::string type_;
  VariableNameMap inputs_, outputs_;
  AttributeMap attrs_;
  bool is_target_ = false;
  BlockDesc* block_ = nullptr;
};

}  // namespace tide::core
