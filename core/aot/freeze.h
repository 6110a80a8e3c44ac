// freeze.h: tide.aot.freeze: a program prepared the executor's way, run on generated feeds at
// the shapes declared (probes), and what those runs did recorded as a frozen plan (frozen_plan.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/aot/frozen_plan.h"
#include "core/framework/scope.h"
#include "core/ir/program_desc.h"
#include "core/platform/place.h"

namespace tide::core {

// One dimension of a feed: fixed (lower == upper) or variable over [lower, upper]. The variable
// dimensions of all feeds are one dimension (the batch): they must declare the same range.
struct DimRange {
  int64_t lower = 0, upper = 0;
};

// The plan for block 0 of `program` fed `feeds`, fetching `fetches`, on `place`, with the
// parameters `scope` holds. `shapes` gives feeds' dims (a feed not in it takes its declared
// shape, which must then have no -1). Refuses, naming the op or variable: ops that run without a
// kernel (control flow, besides feed and fetch), a feed of LoD level above 1, different ranges on
// two feeds, an op reading a temporary no earlier op writes, a parameter missing from `scope`.
// The parameters are taken before the probes run and put back after them, so `scope` is left as
// it was (batch_norm outside is_test would otherwise keep the probes' statistics).
FrozenPlan FreezeProgram(const ProgramDesc& program, const std::vector<std::string>& feeds,
                         const std::vector<std::string>& fetches, const Place& place,
                         const std::map<std::string, std::vector<DimRange>>& shapes, Scope* scope);

}  // namespace tide::core
