// release_plan.h: which temporaries a prepared block lets go of after each op, so that their
// memory goes back to the allocator and the next tensor of its size takes it. A run then touches
// a few activation buffers again and again instead of one buffer per activation: ResNet-50 at
// batch 1 keeps its working set in the caches (Fluid's eager deletion, ONNX Runtime's memory
// reuse). Nothing a run returns changes: see PlanReleases for what is never released.
#pragma once

#include <string>
#include <vector>

#include "core/ir/program_desc.h"

namespace tide::core {

// For each op of block `block_idx`, the variables whose last use it is and which may be released
// after it: the block's own non-persistable LoD tensors that are not in `keep` (fetch targets),
// are written before any op reads them (so no value carries from one run to the next), and are
// not named inside a sub-block (a control-flow op reads those while its sub-block runs).
std::vector<std::vector<std::string>> PlanReleases(const ProgramDesc& program, int block_idx,
                                                   const std::vector<std::string>& keep);

}  // namespace tide::core
