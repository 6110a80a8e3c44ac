// program_desc.h: a whole program (seed 002): blocks, block 0 being the global one. Copyable
// (a deep copy), serialisable, and validated when parsed from bytes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/block_desc.h"
#include "framework.pb.h"

namespace tide::core {

class ProgramDesc {
 public:
  static constexpr int64_t kCurrentVersion = 1;

  ProgramDesc();  // one empty global block
  explicit ProgramDesc(const proto::ProgramDesc& p);  // validates
  ProgramDesc(const ProgramDesc& other);
  ProgramDesc& operator=(const ProgramDesc& other);

  // Parses serialised bytes; an error says why they are not a valid program.
  static ProgramDesc Parse(const std::string& bytes);

  size_t Size() const { return blocks_.size(); }
  const BlockDesc& Block(size_t idx) const;
  BlockDesc* MutableBlock(size_t idx) const;
  BlockDesc* AppendBlock(const BlockDesc& parent);

  int64_t version() const { return version_; }
  proto::ProgramDesc ToProto() const;
  std::string Serialize() const;
  // A readable listing of every block's variables and ops.
  std::string ToString() const;

 private:
  void Load(const proto::ProgramDesc& p);
  std::vector<std::unique_ptr<BlockDesc>> blocks_;
  int64_t version_ = kCurrentVersion;
};

}  // namespace tide::core
