// initialize.h: starting the core. Nothing starts it behind a caller's back: every program calls
// Initialize() once before it makes an Executor (which refuses to exist before, naming this call).
// Python's `import tide`, tools/tide-plugins, the examples, benchmarks, fuzz targets and the
// tests' fixtures call it; a C++ program embedding the core calls it itself.
#pragma once

#include <string>
#include <vector>

namespace tide::core {

// Sets up flags and logging, registers the core's own ops (feed, fetch, delete_var), then loads
// the plugins on the plugin path (PluginManager::SearchPath). Once per process: later calls return
// at once; calls from several threads return only when the plugins are registered.
void Initialize();

// The same start-up, but loading only `plugin_files` (in their dependency order) instead of
// discovering the plugin path: a compiled model (core/compiled) loads the plugins its plan names
// and no other. Callable more than once and after Initialize(): files already loaded are skipped.
// A file that fails to load is recorded (PluginManager::Records), not thrown: the caller, which
// knows what it needed the plugin for, reports it.
void InitializeWithPlugins(const std::vector<std::string>& plugin_files);

}  // namespace tide::core
