// initialize.cc: the core's start-up, in order: flags and logging, the core's own ops, the plugins.
#include "core/host/initialize.h"

#include <mutex>

#include "core/executor/core_ops.h"
#include "core/host/loader.h"
#include "core/platform/flags.h"
#include "core/registry/registry.h"

namespace tide::core {

namespace {
void RegisterCoreOpsOnce() {
  static std::once_flag core_ops;
  std::call_once(core_ops, [] { RegisterCoreOps(Registry::Global()); });
}
}  // namespace

void Initialize() {
  InitOnce();
  RegisterCoreOpsOnce();
  PluginManager::Global().EnsureDiscovered();  // waits for a discovery another thread runs
  Registry::Global().MarkInitialized();
}

void InitializeWithPlugins(const std::vector<std::string>& plugin_files) {
  InitOnce();
  RegisterCoreOpsOnce();
  PluginManager::Global().LoadAll(plugin_files);
  Registry::Global().MarkInitialized();
}

}  // namespace tide::core
