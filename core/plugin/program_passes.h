// program_passes.h: running the program passes plugins registered (TideProgramPassDef, issue
// 33) over a serialized program: InferenceTranspiler does (through the Python module), and
// Executor::Prepare for an inference program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/program_desc.h"

namespace tide::core {

// Runs every registered pass that applies to `place_kind` (those registered for it and those for
// every place; -1: every pass), less those --disable_program_passes names, over `program`
// (serialized), in registration order, each on the last one's result. Returns the names of the
// passes that changed it; `program` is the result. A pass that fails, or returns bytes that are not
// a valid ProgramDesc, is an error naming the pass and its plugin file. `keep`: the variables read
// outside the program (see the ABI).
std::vector<std::string> RunProgramPasses(std::string* program, int32_t place_kind,
                                          const std::vector<std::string>& keep);

// True when `program` has no op of a backward or optimizer role and no gradient op: what
// Executor::Prepare runs the passes of its place over.
bool IsInferenceProgram(const ProgramDesc& program);

// Whether any pass is registered for `place_kind` (or every place): Prepare serializes nothing
// when none is.
bool HasProgramPasses(int32_t place_kind);

}  // namespace tide::core
