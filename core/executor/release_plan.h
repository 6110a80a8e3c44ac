// release_plan.h: which temporaries a prepared block lets go of after each op, and letting them
// go, so that their memory goes back to the allocator and the next tensor of its size takes it. A
// run then touches a few activation buffers again and again instead of one buffer per activation:
// ResNet-50 at batch 1 keeps its working set in the caches (Fluid's eager deletion, ONNX Runtime's
// memory reuse). Nothing a run returns changes: see PlanReleases for what is never released.
#pragma once

#include <string>
#include <vector>

#include "core/framework/variable.h"
#include "core/ir/program_desc.h"
#include "core/platform/flags.h"

namespace tide::core {

// For each op of block `block_idx`, the variables whose last use it is and which may be released
// after it: the block's own non-persistable LoD tensors that are not in `keep` (fetch targets),
// are written before any op reads them (so no value carries from one run to the next), and are
// not named inside a sub-block (a control-flow op reads those while its sub-block runs).
std::vector<std::vector<std::string>> PlanReleases(const ProgramDesc& program, int block_idx,
                                                   const std::vector<std::string>& keep);

// With --free_temporaries (the default), the memory of the temporaries whose last use op
// `op_index` was (`releases`: the plan bound to the block's variables) goes back to the
// allocator; their dims stay, so shapes inferred for the next run still hold. On an asynchronous
// device the allocator hands it out again only to work queued after this op's (as delete_var
// does). The test is inline: the run loop makes it after every op.
void ReleaseTemporaries(const std::vector<Variable*>& vars);
inline void ReleaseAfter(const std::vector<std::vector<Variable*>>& releases, size_t op_index) {
  if (FLAGS_free_temporaries && op_index < releases.size() && !releases[op_index].empty())
    ReleaseTemporaries(releases[op_index]);
}

}  // namespace tide::core
