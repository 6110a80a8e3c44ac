// release_plan.cc: see release_plan.h.
#include "core/executor/release_plan.h"

#include <map>
#include <set>

#include "core/ir/var_names.h"

namespace tide::core {
namespace {

void AddNames(const OpDesc& op, std::set<std::string>* names) {
  for (const auto& list : {op.InputArgumentNames(), op.OutputArgumentNames()})
    names->insert(list.begin(), list.end());
}

// Every variable name the ops of `op`'s sub-blocks (and theirs) read or write.
void SubBlockNames(const ProgramDesc& program, const OpDesc& op, std::set<int>* seen,
                   std::set<std::string>* names) {
  for (const auto& [attr, idx] : op.SubBlocks()) {
    if (idx < 0 || static_cast<size_t>(idx) >= program.Size() || !seen->insert(idx).second)
      continue;
    const BlockDesc& block = program.Block(static_cast<size_t>(idx));
    for (size_t i = 0; i < block.OpSize(); ++i) {
      AddNames(*block.Op(i), names);
      SubBlockNames(program, *block.Op(i), seen, names);
    }
  }
}

}  // namespace

std::vector<std::vector<std::string>> PlanReleases(const ProgramDesc& program, int block_idx,
                                                   const std::vector<std::string>& keep) {
  const BlockDesc& block = program.Block(static_cast<size_t>(block_idx));
  std::vector<std::vector<std::string>> releases(block.OpSize());
  std::set<std::string> excluded(keep.begin(), keep.end());
  excluded.insert(kEmptyVarName);
  std::set<int> seen{block_idx};
  std::map<std::string, size_t> last_use;
  for (size_t i = 0; i < block.OpSize(); ++i) {
    const OpDesc& op = *block.Op(i);
    SubBlockNames(program, op, &seen, &excluded);
    const std::vector<std::string> inputs = op.InputArgumentNames();
    for (const std::string& name : inputs)
      if (!last_use.count(name)) excluded.insert(name);  // read before written: carried over
    for (const std::string& name : inputs) last_use[name] = i;
    for (const std::string& name : op.OutputArgumentNames()) last_use[name] = i;
  }
  for (const auto& [name, i] : last_use) {
    if (excluded.count(name)) continue;
    const VarDesc* v = block.FindVar(name);  // a parent block's variable lives in its scope
    if (!v || v->persistable() || v->type() != TIDE_VAR_LOD_TENSOR) continue;
    releases[i].push_back(name);
  }
  return releases;
}

// Below this a temporary keeps its memory: giving it back and taking it again costs about 30 ns
// an op (a chain of 1000 tiny adds: 146 -> 178 ns an op), more than so small a tensor saves.
constexpr size_t kMinReleasedBytes = 64 << 10;

void ReleaseTemporaries(const std::vector<Variable*>& vars) {
  for (Variable* v : vars) {
    if (!v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (t->memory_size() >= kMinReleasedBytes) t->Clear();
  }
}

}  // namespace tide::core
