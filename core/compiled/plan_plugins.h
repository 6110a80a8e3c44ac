// plan_plugins.h: the plugins a frozen plan needs, for a compiled model to load those and no
// other: the plugins whose kernels it calls, the device plugins of its places, and what those
// require, as the loaded plugins' records say.
#pragma once

#include <string>
#include <vector>

#include "core/aot/frozen_plan.h"

namespace tide::core {

struct PluginRef {
  std::string name;
  std::string file;  // the file's name, without its directory
};

// In load order (each after the plugins it requires). Throws naming the plugin when a plugin
// the plan names (or one it requires) is not loaded in this process, or no loaded plugin
// provides one of its place kinds. An op whose `called_directly` entry is true (the compiled
// model calls its kernel itself, tide/kernels/registry.hpp) needs no plugin for its kernel.
std::vector<PluginRef> PluginsForPlan(const FrozenPlan& plan,
                                      const std::vector<bool>& called_directly = {});

}  // namespace tide::core
