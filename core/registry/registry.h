// registry.h: the process-wide tables of ops, kernels and devices that plugins fill. Starts
// empty: Initialize() (core/host/initialize.h) adds the core's own ops, then the plugins' records.
// A plugin's records are committed all at once or not at all, so a plugin that fails leaves no
// trace but its load record.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/registry/op_info.h"

namespace tide::core {

// What one plugin registers, staged until its registration succeeds.
struct PluginStaging {
  // The callback data of every op definition the plugin handed over, refused ones included: the
  // core keeps what it was given, so a plugin's memory behind it stays reachable.
  std::vector<const void*> callback_data;
  std::vector<std::unique_ptr<OpInfo>> ops;
  std::vector<std::unique_ptr<KernelEntry>> kernels;
  std::vector<std::unique_ptr<DeviceInfo>> devices;
  std::vector<std::unique_ptr<TransformEntry>> layout_transforms, casts;
  std::vector<std::unique_ptr<ProgramPassEntry>> program_passes;
};

// What a commit added, for the plugin's load record.
struct CommitSummary {
  std::vector<std::string> ops, kernels, devices, transforms, program_passes;
  std::vector<std::string> warnings;  // what registered but may surprise its author
};

// A kernel library a plugin registered (TideLibraryDef): how ops ask for its kernels.
struct LibraryInfo {
  std::string name;     // the library field of its kernels' keys
  std::string op_attr;  // a bool attribute any op may carry; empty: none
  std::string flag;     // a bool flag asking for it on every op; empty: none
  std::string plugin;
};

// "cpu: OPAQUE -> NCHW", "cpu: float32 -> float64".
std::string LayoutTransformName(const TransformEntry& t);
std::string CastName(const TransformEntry& t);

class Registry {
 public:
  static Registry& Global();

  // nullptr when no plugin provides `type`.
  const OpInfo* FindOp(const std::string& type) const;
  // Throws NOT_FOUND naming the op and saying no loaded plugin provides it.
  const OpInfo& GetOp(const std::string& type) const;
  const KernelEntry* FindKernel(const std::string& op_type, const OpKernelType& key) const;
  std::vector<const KernelEntry*> Kernels(const std::string& op_type) const;
  const DeviceInfo* FindDevice(int32_t place_kind) const;
  // nullptr when no plugin registered that transform.
  const TransformEntry* FindLayoutTransform(int32_t place_kind, TideLayout from,
                                            TideLayout to) const;
  const TransformEntry* FindCast(int32_t place_kind, DataType from, DataType to) const;

  std::vector<std::string> OpTypes() const;  // sorted
  std::vector<const KernelEntry*> AllKernels() const;
  std::vector<const DeviceInfo*> AllDevices() const;
  // The program passes plugins registered, in registration order.
  std::vector<const ProgramPassEntry*> ProgramPasses() const;
  // Adds a library; the same name again with the same attribute and flag is a no-op, with
  // others an error.
  void AddLibrary(const LibraryInfo& lib);
  std::vector<LibraryInfo> Libraries() const;
  // True when some library's op attribute is `name` (any op may carry it).
  bool IsLibraryAttr(const std::string& name) const;
  size_t NumOps() const;
  size_t NumKernels() const;
  size_t NumDevices() const;

  // Validates and adds one plugin's records, moving them out of `staged`; throws (adding and
  // moving nothing) on a conflict. An op whose same schema is already registered stays there.
  CommitSummary Commit(PluginStaging&& staged);
  // Initialize() (core/host/initialize.h) has filled the registry: the core's ops are in and the
  // plugin path is loaded. Before, nothing can run: the executor refuses to, naming the call.
  void MarkInitialized() { initialized_.store(true, std::memory_order_release); }
  bool initialized() const { return initialized_.load(std::memory_order_acquire); }

  // Keeps what a plugin registered but the registry did not take (a failed registration, a
  // conflict, a repeated schema) for the life of the process: its records point into the
  // plugin's memory (callback data), which is never freed, as plugins are never unloaded.
  void Retain(PluginStaging&& leftover);

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<OpInfo>> ops_;
  std::unordered_map<
      std::string, std::unordered_map<OpKernelType, std::unique_ptr<KernelEntry>, OpKernelTypeHash>>
      kernels_;
  std::unordered_map<int32_t, std::unique_ptr<DeviceInfo>> devices_;
  // Keyed by (place kind, from, to).
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::unique_ptr<TransformEntry>>
      layout_transforms_, casts_;
  std::vector<LibraryInfo> libraries_;
  std::vector<std::unique_ptr<ProgramPassEntry>> program_passes_;
  // Overridden kernels stay alive: prepared programs may still point at them.
  std::vector<std::unique_ptr<KernelEntry>> overridden_;
  std::vector<PluginStaging> retained_;
  std::atomic<bool> initialized_{false};
};

// Kernels that never run: for an op no loaded plugin defines (a misspelt op type, or a missing
// pack), or for a place kind no loaded device plugin provides (a misspelt kind, or a missing
// device): one warning each naming the kernel, its plugin file and the op or kind, sorted; only
// those of `plugin_file` when it is given. tide-plugins prints them, tide.load_plugin and import
// warn.
std::vector<std::string> OrphanKernelWarnings(const std::string& plugin_file = "");

// Why nothing is registered yet when Initialize() has not run ("" once it has): appended to errors
// about a missing op or device, so a C++ program that forgot the call is told to make it.
std::string NotInitializedHint();

}  // namespace tide::core
