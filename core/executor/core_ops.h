// core_ops.h: the operators the core itself defines (feed, fetch and delete_var), registered by
// Initialize() (core/host/initialize.h) before any plugin, so a program runs with no op pack.
#pragma once

namespace tide::core {

// Frees its X variables' data (tide.memory_optimize inserts it after their last use).
constexpr const char* kDeleteVarOp = "delete_var";

class Registry;
// Defined with the executor, which runs them.
void RegisterCoreOps(Registry& registry);

}  // namespace tide::core
