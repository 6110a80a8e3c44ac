// plan_tables.h: a frozen plan from a compiled model's constant tables (tide/compiled_model.h's
// TideAotPlan, which model.cc holds): the plan FrozenModel runs, with no file of a program to
// parse. The parameters' bytes come from params.bin, checked against the tables.
#pragma once

#include <tide/compiled_model.h>

#include <string>

#include "core/aot/frozen_plan.h"

namespace tide::core {

// Throws naming the model's source plan when the tables are of another revision, or were
// generated for another plugin ABI major version or layout.
FrozenPlan PlanFromTables(const TideAotPlan& tables);

// Reads params.bin (`path`: the file, or the directory holding it) into `plan` (plan->file, each
// parameter a view into it). Throws naming the file when it is not a parameters file, belongs to
// another compile (its id), or holds another number of bytes than the tables say.
void ReadCompiledParams(const TideAotPlan& tables, const std::string& path, FrozenPlan* plan);

// The same for params.bin's bytes in memory (`what` names them in errors): each parameter a view
// into `bytes`, which must outlive the plan; nothing is copied.
void UseCompiledParams(const TideAotPlan& tables, const void* bytes, size_t size,
                       const std::string& what, FrozenPlan* plan);

}  // namespace tide::core
