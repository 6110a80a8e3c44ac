// device_compile.h: subgraph claim-and-compile (TideDeviceCompiler, issue 33). At Prepare the
// place's device answers which groups of ops of the block it takes (ClaimSubgraphs); each group
// is checked and replaced by one node, an op of the core's type kCompiledGroupOp, whose inputs
// are what the group reads from outside and whose outputs are what is read outside it. The node
// runs the device's compiled function for its inputs' shapes (compiled on first use, cached by
// place, the device's key and the shapes, least recently used dropped past
// --device_compile_cache_capacity), or, where the device declines those shapes, the
// group's ops one by one (kept as a block of their own).
#pragma once

#include <tide/plugin_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/program_desc.h"
#include "core/platform/place.h"
#include "core/registry/op_info.h"

struct TideOpRunContext;

namespace tide::core {

class LoDTensor;
struct PluginStaging;

// The node's op type (registered by RegisterCoreOps). Attributes: "group" (the index of its
// CompiledGroup in the prepared block) and "fallback_block" (the block holding the group's ops;
// an int, not a block attribute, so that the release plan sees the node's own inputs and
// outputs only).
constexpr const char* kCompiledGroupOp = "device_compiled_group";

// What one node runs.
class CompiledGroup {
 public:
  CompiledGroup(const DeviceInfo& device, const Place& place,
                std::shared_ptr<const std::string> program, int block_idx, std::vector<int32_t> ops,
                std::string cache_key, std::string label, std::vector<std::string> internal);
  // The device's function for the inputs' shapes and data types, else the ops one by one.
  void Run(TideOpRunContext* c);
  // "device 'sim' (<plugin file>) group 0 of block 0 (ops #3 elementwise_add, #4 relu)"
  const std::string& label() const { return label_; }
  // Runs so far through the compiled function, and op by op.
  uint64_t compiled_runs() const { return compiled_runs_; }
  uint64_t fallback_runs() const { return fallback_runs_; }

  struct Compiled;  // one entry of the cache of compiled functions (device_compile.cc)

 private:
  const Compiled& ForShapes(const std::vector<const LoDTensor*>& inputs,
                            const std::vector<std::string>& input_names,
                            const std::vector<std::string>& output_names);
  std::unique_ptr<Compiled> Compile(const std::vector<const LoDTensor*>& inputs,
                                    const std::vector<std::string>& input_names,
                                    const std::vector<std::string>& output_names,
                                    const std::string& signature) const;
  void RunOpByOp(TideOpRunContext* c, const char* why);

  const DeviceInfo* device_;
  Place place_;
  std::shared_ptr<const std::string> program_;  // as get_capability saw it
  int block_idx_;
  std::vector<int32_t> ops_;
  std::string cache_key_, label_;
  std::vector<std::string> internal_;  // temporaries only its ops read (released after a fallback)
  KernelEntry launch_;  // what the place's context names as the last launch after a run
  // The last shapes' entry, so that a run of unchanged shapes does not look the cache up (held:
  // the cache may drop it meanwhile).
  std::string last_signature_;
  std::shared_ptr<const Compiled> last_;
  uint64_t compiled_runs_ = 0, fallback_runs_ = 0;
};

// With --disable_device_compile off and a device of `place` that has a compiler: asks it for the
// groups of block `block_idx` of `program` it takes, checks them (naming the plugin file and the
// group when one is refused) and rewrites the block, each group replaced by its node (ops
// between a group's first and last op that depend on its results move after the node, those it
// depends on stay before). `keep`: names read from outside the block (fetch targets). Returns
// the groups, indexed by their nodes' "group" attribute.
std::vector<std::unique_ptr<CompiledGroup>> ClaimSubgraphs(ProgramDesc* program, int block_idx,
                                                           const Place& place,
                                                           const std::vector<std::string>& keep);

// Adds the node's op (kCompiledGroupOp) to the core's ops.
void AddCompiledGroupOp(PluginStaging* staged);

}  // namespace tide::core
