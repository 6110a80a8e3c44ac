// source_writer.h: a frozen plan as C++ source (tide.aot.compile, issue 34; docs/aot.md):
// model.cc holds the plan as constant tables (tide/compiled_model.h's TideAotPlan) and defines
// model.h's C API over the core's tide_aot_model_*; params.bin holds the parameters, each at a
// multiple of 64 bytes after a 64-byte header. model.h, main.cc and CMakeLists.txt are the same
// for every model: tide.aot.compile copies them beside these.
#pragma once

#include <string>
#include <vector>

#include "core/aot/frozen_plan.h"
#include "core/compiled/plan_plugins.h"

namespace tide::core {

// Writes model.cc and params.bin into `dir` (which must exist). `source` names the plan in the
// model's errors. Throws naming what it cannot hold (a string attribute with a NUL byte, a
// parameter with LoD) or the file it cannot write.
void WriteCompiledSource(const FrozenPlan& plan, const std::string& source,
                         const std::vector<PluginRef>& plugins, const std::string& dir);

// ReadFrozenPlan(plan_path), PluginsForPlan (from the plugins loaded in this process), then
// WriteCompiledSource into `dir` (made when missing).
void CompileFrozenPlan(const std::string& plan_path, const std::string& dir);

}  // namespace tide::core
