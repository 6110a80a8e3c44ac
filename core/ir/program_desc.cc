// program_desc.cc: ProgramDesc construction, validation and (de)serialisation.
#include "core/ir/program_desc.h"

#include <algorithm>

#include "core/platform/enforce.h"

namespace tide::core {

ProgramDesc::ProgramDesc() { blocks_.push_back(std::make_unique<BlockDesc>(this, 0, -1)); }

ProgramDesc::ProgramDesc(const proto::ProgramDesc& p) { Load(p); }

ProgramDesc::ProgramDesc(const ProgramDesc& other) { Load(other.ToProto()); }

ProgramDesc& ProgramDesc::operator=(const ProgramDesc& other) {
  if (this != &other) {
    blocks_.clear();
    Load(other.ToProto());
  }
  return *this;
}

void ProgramDesc::Load(const proto::ProgramDesc& p) {
  TIDE_ENFORCE(p.blocks_size() > 0, "a program must have at least the global block");
  version_ = p.has_version() ? p.version().version() : kCurrentVersion;
  const bool tide = version_ >= 0 && version_ <= kCurrentVersion;
  const bool paddle = version_ >= kFirstPaddleRelease && version_ <= kLastPaddleRelease;
  if (!tide && !paddle) {
    TIDE_ENFORCE(version_ >= 0, "program version ", version_, " is negative: corrupt");
    const std::string by = version_ > kLastPaddleRelease
                               ? StrCat(" (written by PaddlePaddle ", version_ / 1000000, ".",
                                        version_ / 1000 % 1000, ".", version_ % 1000, "?)")
                               : "";
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "program version ", version_, by,
              " is newer than this Tide "
              "reads: Tide programs up to version ",
              kCurrentVersion, ", PaddlePaddle programs of releases 1.0 to 3.x (",
              kFirstPaddleRelease, " to ", kLastPaddleRelease, ")");
  }
  op_versions_.clear();
  for (const auto& pair : p.op_version_map().pair())
    op_versions_[pair.op_name()] = pair.op_version().version();
  const int n = p.blocks_size();
  for (int i = 0; i < n; ++i) {
    const auto& b = p.blocks(i);
    TIDE_ENFORCE(b.idx() == i, "block ", i, " says its index is ", b.idx());
    // A parent precedes its kids (as AppendBlock makes them), so parent chains cannot loop.
    TIDE_ENFORCE(i == 0 ? b.parent_idx() == -1 : (b.parent_idx() >= 0 && b.parent_idx() < i),
                 "block ", i, " has invalid parent index ", b.parent_idx());
    blocks_.push_back(std::make_unique<BlockDesc>(this, i, b.parent_idx()));
  }
  for (int i = 0; i < n; ++i) blocks_[i]->LoadProto(p.blocks(i));
  CheckSubBlocks();
}

// A control-flow op runs its sub-block inside the run of its own block: a sub-block that is that
// block, or an ancestor of it, or that runs (through its own ops) the block again, would run
// itself without end, until the stack overflows. Such a program is refused when it is loaded.
void ProgramDesc::CheckSubBlocks() const {
  const int n = static_cast<int>(blocks_.size());
  std::vector<std::vector<int32_t>> runs(blocks_.size());  // block -> the sub-blocks its ops run
  for (const auto& b : blocks_)
    for (const OpDesc* op : b->AllOps())
      for (const auto& [attr, r] : op->SubBlocks())
        TIDE_ENFORCE(r > 0 && r < n, "op '", op->type(), "' in block ", b->idx(), ": attribute '",
                     attr, "' names block ", r, ", but the program has ", n, " block(s)");
  for (const auto& b : blocks_) {
    for (const OpDesc* op : b->AllOps()) {
      for (const auto& [attr, r] : op->SubBlocks()) {
        for (const BlockDesc* a = b.get(); a; a = a->parent())
          TIDE_ENFORCE(a->idx() != r, "op '", op->type(), "' in block ", b->idx(), ": its ", attr,
                       " is block ", r, ", ",
                       r == b->idx() ? "its own block" : "an ancestor of its block",
                       ": running it would run the op again, without end");
        runs[b->idx()].push_back(r);
      }
    }
  }
  // Longer cycles (block 1 runs block 2, which runs block 1): a depth-first walk, with a stack
  // of its own (a fuzzed program may chain thousands of blocks).
  std::vector<int> state(blocks_.size(), 0);     // 0: not seen, 1: on the walk's path, 2: done
  std::vector<std::pair<int32_t, size_t>> path;  // block, its next sub-block to visit
  for (int32_t start = 0; start < n; ++start) {
    if (state[start]) continue;
    state[start] = 1;
    path.emplace_back(start, 0);
    while (!path.empty()) {
      auto& [b, next] = path.back();
      if (next == runs[b].size()) {
        state[b] = 2;
        path.pop_back();
        continue;
      }
      const int32_t r = runs[b][next++];
      if (state[r] == 1) {
        std::string chain;
        auto it =
            std::find_if(path.begin(), path.end(), [r](const auto& e) { return e.first == r; });
        for (; it != path.end(); ++it) chain += StrCat("block ", it->first, " runs ");
        TIDE_FAIL(TIDE_INVALID_ARGUMENT, "sub-blocks run one another in a cycle: ", chain, "block ",
                  r, " again, without end");
      }
      if (state[r] == 0) {
        state[r] = 1;
        path.emplace_back(r, 0);
      }
    }
  }
}

ProgramDesc ProgramDesc::Parse(const std::string& bytes) {
  proto::ProgramDesc p;
  if (!p.ParseFromString(bytes))
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "cannot parse a ProgramDesc from ", bytes.size(),
              " bytes: not a serialised tide.proto.ProgramDesc (or missing required fields)");
  try {
    return ProgramDesc(p);
  } catch (const Error& e) {
    TIDE_FAIL(e.code(), "invalid ProgramDesc: ", e.what());
  }
}

const BlockDesc& ProgramDesc::Block(size_t idx) const { return *MutableBlock(idx); }

BlockDesc* ProgramDesc::MutableBlock(size_t idx) const {
  TIDE_ENFORCE(idx < blocks_.size(), "block ", idx, " does not exist: the program has ",
               blocks_.size(), " block(s)");
  return blocks_[idx].get();
}

BlockDesc* ProgramDesc::AppendBlock(const BlockDesc& parent) {
  blocks_.push_back(
      std::make_unique<BlockDesc>(this, static_cast<int32_t>(blocks_.size()), parent.idx()));
  return blocks_.back().get();
}

proto::ProgramDesc ProgramDesc::ToProto() const {
  proto::ProgramDesc p;
  p.mutable_version()->set_version(version_);
  for (const auto& kv : op_versions_) {
    auto* pair = p.mutable_op_version_map()->add_pair();
    pair->set_op_name(kv.first);
    pair->mutable_op_version()->set_version(kv.second);
  }
  for (const auto& b : blocks_) b->ToProto(p.add_blocks());
  return p;
}

std::string ProgramDesc::Serialize() const {
  std::string out;
  ToProto().SerializeToString(&out);
  return out;
}

std::string ProgramDesc::ToString() const {
  std::string s;
  for (const auto& b : blocks_) {
    s += "block " + std::to_string(b->idx()) + " (parent " + std::to_string(b->parent_idx()) +
         "):\n";
    for (const VarDesc* v : b->AllVars()) s += "  var " + v->ToString() + "\n";
    for (const OpDesc* o : b->AllOps()) s += "  op " + o->ToString() + "\n";
  }
  return s;
}

}  // namespace tide::core
