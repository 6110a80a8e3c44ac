// source_writer.h: a frozen plan as C++ source (tide.aot.compile, issue 34; docs/aot.md):
// <name>.cc (model.cc by default) holds the plan as constant tables (tide/compiled_model.h's
// TideAotPlan) and defines <name>.h's C API over the core's tide_aot_model_*; params.bin holds
// the parameters, each at a multiple of 64 bytes after a 64-byte header. <name>.h, main.cc and
// CMakeLists.txt come from templates (python/tide/aot_template) tide.aot.compile fills in.
#pragma once

#include <string>
#include <vector>

#include "core/aot/frozen_plan.h"
#include "core/compiled/plan_plugins.h"

namespace tide::core {

// Per op of `plan`: whether model.cc calls its kernel directly (the SDK's header-only plain CPU
// kernel of the op and data type, tide/kernels/registry.hpp, on the CPU place, with nothing the
// frozen run does around it) instead of resolving it by its key through the plugins.
std::vector<bool> CalledDirectly(const FrozenPlan& plan);

// Writes <name>.cc (its C functions tide_<name>_create, ...) and params.bin into `dir` (which
// must exist), and with `embed_params` <name>_params.S, which puts params.bin into the library.
// `source` names the plan in the model's errors. Throws naming what it cannot hold (a string
// attribute with a NUL byte, a parameter with LoD), a name that is not a C identifier, or the
// file it cannot write.
void WriteCompiledSource(const FrozenPlan& plan, const std::string& source,
                         const std::vector<PluginRef>& plugins, const std::string& dir,
                         const std::string& name = "model", bool embed_params = false);

// ReadFrozenPlan(plan_path), PluginsForPlan (from the plugins loaded in this process; an op
// called directly needs no plugin for its kernel), then
// WriteCompiledSource into `dir` (made when missing).
void CompileFrozenPlan(const std::string& plan_path, const std::string& dir,
                       const std::string& name = "model", bool embed_params = false);

}  // namespace tide::core
