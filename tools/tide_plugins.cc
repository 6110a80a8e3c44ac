// tide_plugins.cc: `tide-plugins`, the command-line plugin listing: the search path, and per
// plugin file what loaded, what failed and why, and what it registered. Exit 1 if any failed.
#include <gflags/gflags.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/platform/flags.h"
#include "core/registry/registry.h"

DEFINE_bool(json, false, "print the load records as JSON");
DEFINE_bool(verbose, false, "list every kernel key (default: the number of kernels per op)");
DEFINE_bool(
    strict, false,
    "exit non-zero on a warning: a kernel for an op no loaded plugin defines, an op outside "
    "Tide's plugin directory without a vendor prefix");
DEFINE_bool(timing, false,
            "print each plugin file's load time and its share of the total, slowest first");

namespace {

using tide::core::PluginRecord;

// "label (n): a, b, c", wrapped under the label's indent.
void PrintList(const std::string& label, const std::vector<std::string>& items) {
  std::string line = "  " + label + " (" + std::to_string(items.size()) + "):";
  const size_t indent = 6, width = 100;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > width && line.size() > indent) {
      std::cout << line << "\n";
      line = std::string(indent - 1, ' ');
    }
    line += " " + item;
  }
  std::cout << line << "\n";
}

// Kernels are recorded as "<op> <key>": by default a count per op, with --verbose every key.
void PrintKernels(const std::vector<std::string>& kernels) {
  if (FLAGS_verbose) {
    std::cout << "  kernels (" << kernels.size() << "):\n";
    for (const auto& k : kernels) std::cout << "    " << k << "\n";
    return;
  }
  std::map<std::string, int> per_op;
  for (const auto& k : kernels) per_op[k.substr(0, k.find(' '))]++;
  std::vector<std::string> items;
  for (const auto& [op, n] : per_op) items.push_back(op + " x" + std::to_string(n));
  PrintList("kernels", items);
}

void PrintRecord(const PluginRecord& r) {
  std::string file = r.path.substr(r.path.find_last_of('/') + 1);
  std::cout << "\n" << (r.name.empty() ? "(" + file + ")" : r.name);
  if (!r.version.empty()) std::cout << " " << r.version;
  if (!r.description.empty()) std::cout << " - " << r.description;
  std::cout << "\n  file:     " << r.path << "\n  abi:      "
            << (r.abi_major ? std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor) : "-")
            << "\n  status:   " << (r.loaded ? "loaded" : "failed: " + r.error) << "\n";
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.2f ms", r.load_ms);
  std::cout << "  load:     " << ms << "\n";
  if (!r.requires.empty()) PrintList("requires", r.requires);
  if (!r.loaded) return;
  PrintList("ops", r.ops);
  PrintKernels(r.kernels);
  PrintList("devices", r.devices);
  for (const auto& kind : r.devices)  // a kind without devices says why (its plugin's reason)
    if (tide::core::DeviceCount(kind) == 0) {
      const std::string why = tide::core::DeviceUnavailableReason(kind);
      std::cout << "  no '" << kind << "' device" << (why.empty() ? "" : ": " + why) << "\n";
    }
}

// --timing: one line per file (open + register), slowest first, with its share of the total.
void PrintTiming(std::vector<PluginRecord> records) {
  double total = 0;
  for (const auto& r : records) total += r.load_ms;
  std::stable_sort(
      records.begin(), records.end(),
      [](const PluginRecord& a, const PluginRecord& b) { return a.load_ms > b.load_ms; });
  std::printf("plugin load time: %.2f ms in %zu file(s)\n", total, records.size());
  std::printf("  %9s %6s  %s\n", "ms", "share", "plugin (file)");
  for (const auto& r : records) {
    std::string file = r.path.substr(r.path.find_last_of('/') + 1);
    std::printf("  %9.2f %5.1f%%  %s (%s)%s\n", r.load_ms,
                total > 0 ? 100.0 * r.load_ms / total : 0.0, r.name.empty() ? "?" : r.name.c_str(),
                file.c_str(), r.loaded ? "" : " [failed]");
  }
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "lists Tide's plugins: what loaded, what failed and why, what each registered\n"
      "  tide-plugins [--plugin_path=DIR_OR_FILE:...] [--json] [--verbose] [--strict] [--timing]");
  tide::core::InitFromArgs(&argc, &argv);
  if (argc > 1) {
    std::cerr << "tide-plugins: unexpected argument '" << argv[1] << "' (see --help)\n";
    return 2;
  }
  tide::core::Initialize();
  auto& manager = tide::core::PluginManager::Global();
  std::vector<PluginRecord> records = manager.Records();
  size_t loaded =
      std::count_if(records.begin(), records.end(), [](const PluginRecord& r) { return r.loaded; });
  int rc = loaded == records.size() ? 0 : 1;
  // Kernels for an op no loaded plugin defines, then the plugins' own warnings.
  std::vector<std::string> warnings = tide::core::OrphanKernelWarnings();
  for (const auto& r : records)
    warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
  for (const auto& o : warnings) std::cerr << "tide-plugins: warning: " << o << "\n";
  if (FLAGS_strict && !warnings.empty()) rc = 1;
  if (FLAGS_json) {
    std::cout << manager.RecordsJson();
    return rc;
  }
  if (FLAGS_timing) {
    PrintTiming(records);
    return rc;
  }
  std::cout << "Tide plugin ABI " << TIDE_ABI_MAJOR << "." << TIDE_ABI_MINOR << "\nsearch path:";
  std::vector<std::string> path = manager.SearchPath();
  if (path.empty()) std::cout << " (empty)";
  for (const auto& p : path) std::cout << "\n  " << p;
  std::cout << "\n"
            << records.size() << " plugin file(s): " << loaded << " loaded, "
            << records.size() - loaded << " failed\n";
  for (const auto& r : records) PrintRecord(r);
  const auto& reg = tide::core::Registry::Global();
  std::cout << "\nregistry: " << reg.NumOps() << " ops, " << reg.NumKernels() << " kernels, "
            << reg.NumDevices() << " devices\n";
  return rc;
}
