// kernel_choice.h: the one place the core decides which kernel an op runs. A registered kernel
// library (TideLibraryDef) is asked for by its op attribute or flag; the run's place is tried
// first, then another place's kernel (the host's first) with copies in and out. float16 and
// bfloat16 data without a kernel of its type runs the float32 one (logged once per op type):
// its inputs are widened by the data transform, its declared float16/bfloat16 outputs rounded
// back after it (kernel_outputs.h), so the program's types stay as declared.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/platform/data_type.h"
#include "core/platform/enforce.h"
#include "core/platform/place.h"

namespace tide::core {

class BlockDesc;
class OpInstance;
struct KernelEntry;

// The only writer of an op's chosen kernel (OpInstance::kernel() and the rest, whose friend it
// is); everything else reads it.
class KernelChoice {
 public:
  // At Prepare: records the library `op` asks for (its "library" attribute, or a registered
  // library whose attribute it sets or whose flag is on; plain otherwise) and, when `block`
  // declares the data type its kernel goes by, chooses the kernel for it now.
  static void Prepare(OpInstance& op, const BlockDesc& block, const Place& place);
  // At Run, before every kernel call: makes op's kernel the one for the data type it goes by
  // (its data-type attribute, else what its data-type input holds now) on `place`. The kernel
  // chosen before stays while that data type is the same; else one is chosen: the library's, the
  // place's plain one, another of the place's (for float16/bfloat16: then the place's float32
  // one, the same way), then another place's with copies (the host's first), never one that
  // declined the op. Returns true when it chose anew (the op's shapes are
  // then inferred again). Throws naming the op and the kernels there are, or saying its data-type
  // input holds no data.
  static bool Choose(OpInstance& op, const Place& place);
  // op's kernel refused this run with UNIMPLEMENTED (`why`), before writing anything: it is never
  // chosen for op again, and the next candidate (the plain kernel for a library's, another
  // place's for a device's) is chosen. Throws `why`, with what ruled the others out, when none is
  // left.
  static void Decline(OpInstance& op, const Error& why, const Place& place);
  // A frozen plan's choice (core/aot): `kernel`, resolved by the key the plan recorded, for data
  // of type `data_type` on `kernel_place`, without a search. Choose keeps it while the data type
  // holds.
  static void Fix(OpInstance& op, const KernelEntry& kernel, DataType data_type,
                  const Place& kernel_place);
  // Bumped whenever any op's kernel changes, anywhere: what was derived from kernel choices (a
  // feed's place) holds while it stays the same.
  static uint64_t Generation() { return generation_.load(std::memory_order_relaxed); }

 private:
  // Choose, for data type `dt`.
  static bool ChooseFor(OpInstance& op, DataType dt, const Place& place);
  // Records `kernel` as op's, for data of type `data_type` on `kernel_place`.
  static void SetKernel(OpInstance& op, const KernelEntry& kernel, DataType data_type,
                        const Place& kernel_place);
  static inline std::atomic<uint64_t> generation_{0};
};

}  // namespace tide::core
