// plan_plugins.cc: see plan_plugins.h.
#include "core/compiled/plan_plugins.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/host/loader.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"

namespace tide::core {

std::vector<PluginRef> PluginsForPlan(const FrozenPlan& plan,
                                      const std::vector<bool>& called_directly) {
  std::map<std::string, PluginRecord> loaded;  // by name
  for (PluginRecord& r : PluginManager::Global().Records())
    if (r.loaded) loaded.emplace(r.name, std::move(r));

  std::set<std::string> wanted, kinds{plan.place_kind};
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const FrozenOp& op = plan.ops[i];
    if (i >= called_directly.size() || !called_directly[i]) {
      wanted.insert(op.kernel.plugin);
      // The op's own plugin too: a device plugin's kernel runs an op another pack defines.
      const OpInfo* info = Registry::Global().FindOp(op.type);
      if (info && loaded.count(info->plugin)) wanted.insert(info->plugin);
    }
    kinds.insert(op.kernel.place_kind);
  }
  for (const std::string& kind : kinds) {
    auto provider = std::find_if(loaded.begin(), loaded.end(), [&](const auto& entry) {
      const auto& devices = entry.second.devices;
      return std::find(devices.begin(), devices.end(), kind) != devices.end();
    });
    if (provider == loaded.end())
      TIDE_FAIL(TIDE_NOT_FOUND, "no loaded plugin provides the place kind '", kind,
                "' the plan runs on: load its device plugin before compiling");
    wanted.insert(provider->first);
  }

  // Depth first through the requirements: a plugin comes after those it requires.
  std::vector<PluginRef> order;
  std::set<std::string> placed;
  std::function<void(const std::string&, const std::string&)> place = [&](const std::string& name,
                                                                          const std::string& why) {
    if (placed.count(name)) return;
    auto it = loaded.find(name);
    if (it == loaded.end())
      TIDE_FAIL(TIDE_NOT_FOUND, "plugin '", name, "' (", why,
                ") is not loaded in this process: load it before compiling the plan");
    placed.insert(name);
    for (const std::string& q : it->second.requires) place(q, "required by plugin '" + name + "'");
    order.push_back({name, std::filesystem::path(it->second.path).filename().string()});
  };
  for (const std::string& name : wanted) place(name, "named by the plan");
  return order;
}

}  // namespace tide::core
