// loader.h: finds plugins on the plugin path, loads them with Boost.DLL (RTLD_LOCAL), checks
// their ABI, orders them by their requirements and registers them. Every candidate file gets a
// load record; a plugin that fails is reported with its file and reason and the others still load.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tide::core {

struct PluginRecord {
  std::string path;
  std::string name, version, description;  // empty when the file never said
  uint32_t abi_major = 0, abi_minor = 0;   // what the plugin speaks
  std::vector<std::string>
  requires;
  bool loaded = false;
  std::string error;  // why it failed to load
  std::vector<std::string> ops, kernels, devices, transforms;
  // Loaded, but not as a third party should: an op named without a vendor prefix outside Tide's
  // own plugin directory (tide-plugins prints these; --strict fails on them).
  std::vector<std::string> warnings;
  double load_ms = 0;
};

class PluginManager {
 public:
  static PluginManager& Global();

  // The directories and files searched: --plugin_path if set (only those); else the entries of
  // $TIDE_PLUGIN_PATH followed by the install's lib/tide/plugins, or with TIDE_PLUGIN_PATH_ONLY=1
  // the entries of $TIDE_PLUGIN_PATH alone (unset or empty: none).
  std::vector<std::string> SearchPath() const;
  // Scans the search path once per process; thread-safe; later calls do nothing.
  void EnsureDiscovered();
  // Loads every plugin file in `entries` (directories are scanned for *.so), in dependency order.
  void LoadAll(const std::vector<std::string>& entries);
  // Loads one more plugin file now; throws Error with the loader's reason when it fails (the
  // failure is also recorded).
  PluginRecord Load(const std::string& path);

  std::vector<PluginRecord> Records() const;
  // The records as the JSON `tide-plugins --json` prints.
  std::string RecordsJson() const;

 private:
  void LoadAllLocked(const std::vector<std::string>& entries);  // mu_ held

  mutable std::mutex mu_;
  bool discovered_ = false;
  std::vector<PluginRecord> records_;
};

// Ends the plugins' lives now instead of at exit (tide.shutdown()): synchronises and destroys
// every device context, gives the memory pools' free blocks back, finalizes each device, then
// runs each plugin's tide_plugin_finalize, last loaded first. Once per process (a later call, and
// the one at exit, do nothing); afterwards no device can be used again.
void ShutdownPlugins();

// The install's (or build tree's) default plugin directory: <dir of libtide_core.so>/tide/plugins.
std::string DefaultPluginDir();
// A ':'-separated path's entries (empty ones dropped), as $TIDE_PLUGIN_PATH is read.
std::vector<std::string> SplitPluginPath(const std::string& path);
// TIDE_PLUGIN_PATH_ONLY is set to a true value: $TIDE_PLUGIN_PATH is the whole search path.
bool PluginPathOnly();

}  // namespace tide::core
