// release_plan.cc: see release_plan.h.
#include "core/executor/release_plan.h"

#include <algorithm>
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

namespace {

bool Names(const std::vector<ArgBinding>& list, const std::string& name) {
  for (const ArgBinding& b : list)
    if (std::find(b.names.begin(), b.names.end(), name) != b.names.end()) return true;
  return false;
}

}  // namespace

std::vector<std::vector<ViewMove>> PlanViewMoves(
    const std::vector<std::unique_ptr<OpInstance>>& ops,
    const std::vector<std::vector<std::string>>& releases) {
  std::vector<std::vector<ViewMove>> moves(ops.size());
  for (size_t i = 0; i < ops.size() && i < releases.size(); ++i) {
    const OpInstance& op = *ops[i];
    if (op.info().run) continue;  // no kernel: it reads and writes its variables by name
    for (const auto& [in_param, out_param] : op.info().views) {
      const ArgBinding* in = op.FindInput(in_param.c_str());
      const ArgBinding* out = op.FindOutput(out_param.c_str());
      if (!in || !out || in->names.size() != 1 || out->names.size() != 1) continue;
      const std::string &x = in->names[0], &y = out->names[0];
      const std::vector<std::string>& dying = releases[i];
      if (std::find(dying.begin(), dying.end(), x) == dying.end()) continue;
      if (y == kEmptyVarName || Names(op.outputs(), x) || Names(op.inputs(), y)) continue;
      ViewMove m;
      m.in_binding = static_cast<size_t>(in - op.inputs().data());
      m.out_binding = static_cast<size_t>(out - op.outputs().data());
      moves[i].push_back(m);
    }
  }
  return moves;
}

void MoveViewInputs(const OpInstance& op, std::vector<ViewMove>* moves) {
  for (ViewMove& m : *moves) {
    m.moved = false;
    const ArgBinding& in = op.inputs()[m.in_binding];
    Variable* xv = in.vars[0];
    Variable* yv = op.outputs()[m.out_binding].vars[0];
    if (!xv || !yv || !xv->IsType<LoDTensor>() || !yv->IsType<LoDTensor>()) continue;
    if (in.transforms.empty() || in.transforms[0].result) continue;  // it reads a conversion
    const LoDTensor& x = xv->Get<LoDTensor>();
    const AllocationPtr& h = x.holder();
    if (!h || h.use_count() != 1 || h->content_version() == 0 || h->place() != op.kernel_place())
      continue;
    LoDTensor* y = yv->GetMutable<LoDTensor>();
    y->ResetHolder(h, x.dtype(), y->dims(), x.offset());  // the kernel sizes it
    m.moved = true;
  }
}

void UndoViewMoves(const OpInstance& op, std::vector<ViewMove>* moves) {
  for (ViewMove& m : *moves) {
    if (!m.moved) continue;
    m.moved = false;
    const LoDTensor& x = op.inputs()[m.in_binding].vars[0]->Get<LoDTensor>();
    LoDTensor* y = op.outputs()[m.out_binding].vars[0]->GetMutable<LoDTensor>();
    if (y->holder() == x.holder()) y->Clear();
  }
}

void FinishViewMoves(const OpInstance& op, std::vector<ViewMove>* moves) {
  for (ViewMove& m : *moves) {
    if (!m.moved) continue;
    m.moved = false;
    op.inputs()[m.in_binding].vars[0]->GetMutable<LoDTensor>()->Clear();
  }
}

}  // namespace tide::core
