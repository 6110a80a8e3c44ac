// kernel_choice.h: the one place the core decides which kernel an op runs. A registered kernel
// library (TideLibraryDef) is asked for by its op attribute or flag; the run's place is tried
// first, then another place's kernel (the host's first) with copies in and out.
#pragma once

#include "core/executor/op_instance.h"
#include "core/platform/place.h"

namespace tide::core {

// The library `op` asks for: its "library" attribute, or a registered library whose attribute
// it sets or whose flag is on; 0 (plain) otherwise.
int32_t RequestedLibrary(const OpInstance& op);
// Chooses op's kernel for data type `dt` on `place` (or a fallback), setting op.kernel,
// kernel_key, kernel_place and kernel_dctx; throws naming the op and the kernels there are.
void ChooseKernel(OpInstance& op, DataType dt, const Place& place);
// Chooses again when the data type of op's data-type input changed since the last choice.
void SelectKernel(OpInstance& op, const Place& place);
// op's kernel refused this run with UNIMPLEMENTED (`why`), before writing anything: it is never
// chosen for op again, and the next candidate (the plain kernel for a library's, another place's
// for a device's) is chosen. Throws `why`, with what ruled the others out, when none is left.
void DeclineKernel(OpInstance& op, const Error& why, const Place& place);

}  // namespace tide::core
