// program_desc.h: a whole program (Fluid's ProgramDesc): blocks, block 0 being the global one.
// Copyable (a deep copy), serialisable, and validated when parsed from bytes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/block_desc.h"
#include "framework.pb.h"

namespace tide::core {

class ProgramDesc {
 public:
  static constexpr int64_t kCurrentVersion = 1;
  // PaddlePaddle 2.x/3.x (and late Fluid 1.x) write their release there, major * 1e6 + minor *
  // 1e3 + patch; what each op means is in op_version_map. Those of releases 1.0 to 3.x are read.
  static constexpr int64_t kFirstPaddleRelease = 1000000;
  static constexpr int64_t kLastPaddleRelease = 3999999;

  ProgramDesc();                                      // one empty global block
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
  // Paddle's op_version_map: the version of each op's definition the program was written with
  // (Paddle lists every op it has versions for, used or not). Kept so a round trip is lossless.
  const std::map<std::string, int32_t>& op_versions() const { return op_versions_; }
  proto::ProgramDesc ToProto() const;
  std::string Serialize() const;
  // A readable listing of every block's variables and ops.
  std::string ToString() const;

 private:
  void Load(const proto::ProgramDesc& p);
  // Every sub-block attribute names a block that exists and is not the op's own block or an
  // ancestor of it, and no sub-blocks run one another in a cycle; else an error naming the op.
  void CheckSubBlocks() const;
  std::vector<std::unique_ptr<BlockDesc>> blocks_;
  int64_t version_ = kCurrentVersion;
  std::map<std::string, int32_t> op_versions_;
};

}  // namespace tide::core
