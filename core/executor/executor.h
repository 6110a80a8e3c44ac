// executor.h: Fluid's Executor, in three steps. Prepare turns a block into op instances once
// (feed and fetch ops added, attributes checked, kernels chosen where the program says the data
// type); Bind resolves their variables in a scope (persistable variables in the given scope,
// temporaries in a local child scope), once per scope; Run runs the ops in order, each through
// kernel choice, shape inference, input transforms, its kernel and the run checks. The modules
// of those steps live beside this file, one job each.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/device/device_context.h"
#include "core/device/download_queue.h"
#include "core/executor/data_transform.h"
#include "core/executor/device_compile.h"
#include "core/executor/feed_fetch.h"
#include "core/executor/op_instance.h"
#include "core/executor/release_plan.h"
#include "core/framework/scope.h"
#include "core/ir/program_desc.h"

namespace tide::core {

class PreparedBlock {
 public:
  // Where the fetch ops queue their downloads (the run finishes them before it returns).
  DownloadQueue& downloads() { return downloads_; }
  const ProgramDesc& program() const { return *program_; }
  int block_idx() const { return block_idx_; }
  const std::vector<std::string>& feed_names() const { return feed_names_; }
  const std::vector<std::string>& fetch_names() const { return fetch_names_; }
  size_t num_ops() const { return ops_.size(); }
  const OpInstance& op(size_t i) const { return *ops_.at(i); }
  // Transforms applied to inputs during the last Run (layout transforms, device copies, casts).
  const TransformCounts& transform_counts() const { return counts_; }
  // The groups of ops the place's device compiled (device_compile.h), by their nodes' "group".
  size_t num_compiled_groups() const { return compiled_groups_.size(); }
  CompiledGroup& compiled_group(size_t i) { return *compiled_groups_.at(i); }
  // The ops reading `var` and which of their inputs does, found once: a feed asks on every run.
  struct Reader {
    const OpInstance* op;
    size_t input;  // index into op->inputs()
    bool fetch;    // the op is a fetch: it reads on the host
  };
  struct Readers {
    std::vector<Reader> ops;
    // FeedPlace's last answer for `run_place`, while KernelChoice::Generation() is `generation`.
    uint64_t generation = UINT64_MAX;
    Place run_place, place;
  };
  Readers& ReadersOf(const std::string& var) const;
  // `var` is one of the block's fetch targets that is not persistable (a temporary of the run).
  bool FetchesTemporary(const Variable* var) const {
    return std::find(fetched_.begin(), fetched_.end(), var) != fetched_.end();
  }
  // This block's runs release no temporary (--free_temporaries=false for it alone): freezing
  // reads what every output holds after a run, without touching the flag other executors read.
  void KeepTemporaries() {
    release_names_.clear();
    releases_.clear();
    moves_.clear();
  }
  // Calls `fn` with each op's index right after the op runs, in this block's runs (freezing reads
  // the dims an op leaves in a variable that a later op writes again); empty: no call.
  void ObserveOps(std::function<void(size_t op_index)> fn) { observe_ = std::move(fn); }

 private:
  friend class Executor;
  std::shared_ptr<const ProgramDesc> program_;
  int block_idx_ = 0;
  bool create_local_scope_ = true;
  std::vector<std::unique_ptr<OpInstance>> ops_;
  std::vector<std::string> feed_names_, fetch_names_;
  std::vector<const VarDesc*> feed_descs_;
  // Bindings are kept while runs use the same scope (by serial: addresses get reused).
  uint64_t bound_scope_ = 0;
  uint64_t bound_epoch_ = 0;  // Scope::EraseEpoch() when bound: an erase since means rebinding
  std::unique_ptr<Scope> local_scope_;
  Scope* run_scope_ = nullptr;
  std::map<int, std::unique_ptr<PreparedBlock>> sub_blocks_;
  TransformCounts counts_;
  // Per op: the temporaries released after it (release_plan.h), by name and as bound.
  std::vector<std::vector<std::string>> release_names_;
  std::vector<std::vector<Variable*>> releases_;
  // Per op: the dying inputs whose memory a view output takes (release_plan.h's view moves).
  std::vector<std::vector<ViewMove>> moves_;
  // The block's tensor arrays that are not persistable, as bound: a run starts them empty.
  std::vector<Variable*> arrays_;
  // The fetch targets that are not persistable, as bound: their fetches lend their memory
  // (FetchRun), and a run starts by letting go of what the last run's fetches lent
  // (Allocation::lent), which its writers would else copy.
  std::vector<Variable*> fetched_;
  std::vector<std::unique_ptr<CompiledGroup>> compiled_groups_;
  // The fetch ops' downloads on a copy-out stream, finished before the run returns its fetches.
  DownloadQueue downloads_;
  mutable std::unordered_map<std::string, Readers> readers_;  // ReadersOf's answers
  std::function<void(size_t)> observe_;                       // ObserveOps'
};

class Executor {
 public:
  // Throws when `place` does not exist (no device plugin for its kind, or no such ordinal), and
  // before Initialize() (core/host/initialize.h) has started the core.
  explicit Executor(const Place& place);
  const Place& place() const { return place_; }

  // Prepares `block_idx` of a copy of `program`; with feed/fetch names, feed and fetch ops are
  // added (unless the program already has them, as a saved inference model does).
  std::unique_ptr<PreparedBlock> Prepare(const ProgramDesc& program, int block_idx = 0,
                                         const std::vector<std::string>& feed_names = {},
                                         const std::vector<std::string>& fetch_names = {});
  // Runs with `feeds` in the order of the prepared feed names; returns the fetched tensors (on
  // the host) in the order of the fetch names.
  std::vector<LoDTensor> Run(PreparedBlock& prepared, Scope* scope,
                             const std::vector<LoDTensor>& feeds = {});
  // Prepare + Run in one call.
  std::vector<LoDTensor> Run(const ProgramDesc& program, Scope* scope,
                             const std::map<std::string, LoDTensor>& feeds,
                             const std::vector<std::string>& fetch_names, int block_idx = 0);
  // Runs sub-block `block_idx` of `parent`'s program in `scope` (for control-flow ops).
  void RunSubBlock(PreparedBlock& parent, int block_idx, Scope* scope);

 private:
  std::unique_ptr<PreparedBlock> PrepareBlock(std::shared_ptr<const ProgramDesc> program,
                                              int block_idx, bool create_local_scope);
  // The scope the block's temporaries live in, with every op bound to its variables.
  Scope* Bind(PreparedBlock& p, Scope* scope);
  // The one run loop.
  void RunOps(PreparedBlock& p, Scope* local);
  // `moves`: the op's view moves this run (null: none).
  void RunOp(PreparedBlock& p, OpInstance& op, Scope* local, std::vector<ViewMove>* moves);

  Place place_;
  DeviceContext* dctx_;
};

}  // namespace tide::core
