// release_plan.h: which temporaries a prepared block lets go of after each op, and letting them
// go, so that their memory goes back to the allocator and the next tensor of its size takes it. A
// run then touches a few activation buffers again and again instead of one buffer per activation:
// ResNet-50 at batch 1 keeps its working set in the caches (Fluid's eager deletion, ONNX Runtime's
// memory reuse). Nothing a run returns changes: see PlanReleases for what is never released.
// A temporary released after an op that declares its output a view of it (reshape, squeeze,
// flatten: OpInfo::views) lets go of its memory into that output instead (the view moves below).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/executor/op_instance.h"
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

// A view op's output taking its dying input's memory: op.inputs()[in_binding].vars[0] into
// op.outputs()[out_binding].vars[0]. The kernel then finds its output holding the input's bytes
// and copies nothing (PaddlePaddle's reshape shares the buffer; ONNX Runtime's planner reuses a
// dying input's buffer for Reshape / Squeeze / Unsqueeze).
struct ViewMove {
  size_t in_binding = 0, out_binding = 0;
  bool moved = false;  // this run moved it: the input lets go of the memory after the op
};

// For each op of a prepared block (`ops`, with `releases` its release plan): its declared view
// pairs (one variable each side) whose input is released after it (so never a persistable, fetch
// target, carried-over value or variable a sub-block names) and is none of its outputs, and whose
// output is none of its inputs.
std::vector<std::vector<ViewMove>> PlanViewMoves(
    const std::vector<std::unique_ptr<OpInstance>>& ops,
    const std::vector<std::vector<std::string>>& releases);

// After the op's input transforms, before its kernel: each planned move whose input the kernel
// reads as it is (no conversion), on the kernel's place, in memory the core owns (not a fed or
// numpy / DLPack array: Allocation::content_version() 0) and that variable alone holds (not a
// feed's shared tensor, nor another variable's): the output takes the memory, keeping its dims.
void MoveViewInputs(const OpInstance& op, std::vector<ViewMove>* moves);
// The kernel failed or declined: the outputs given memory let go of it (the inputs keep it).
void UndoViewMoves(const OpInstance& op, std::vector<ViewMove>* moves);
// After the op: the moved inputs let go of the memory, whatever its size (a move: the input and
// the output never share it afterwards).
void FinishViewMoves(const OpInstance& op, std::vector<ViewMove>* moves);

// The run loop's calls, inline (most ops have no move); off with --free_temporaries.
inline std::vector<ViewMove>* ViewMovesOf(std::vector<std::vector<ViewMove>>& moves,
                                          size_t op_index) {
  return FLAGS_free_temporaries && op_index < moves.size() && !moves[op_index].empty()
             ? &moves[op_index]
             : nullptr;
}

}  // namespace tide::core
