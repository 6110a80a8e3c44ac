// feed_fetch.h: how a run's inputs and outputs pass through a program, as in Fluid: feed ops
// copy column `col` of the feed list into their variable, fetch ops copy theirs into column `col`
// of the fetch list. Prepare adds those ops; Run fills the one list and empties the other.
#pragma once

#include <string>
#include <vector>

#include "core/framework/scope.h"
#include "core/ir/block_desc.h"

namespace tide::core {

constexpr const char* kFeedVarName = "feed";
constexpr const char* kFetchVarName = "fetch";

// Adds feed ops (prepended) and fetch ops (appended) to `block` for `feeds` and `fetches`,
// unless it has them already (a saved inference model does); returns the feed and fetch targets
// in column order. A fetch list other than the block's own fetch targets (a subset, another
// order, an intermediate) replaces its fetch ops; a feed list must match its feed ops. Errors
// name a feed or fetch target the block does not declare.
void AddFeedFetchOps(BlockDesc* block, const std::vector<std::string>& feeds,
                     const std::vector<std::string>& fetches, std::vector<std::string>* feed_out,
                     std::vector<std::string>* fetch_out);

// memory_optimize's delete_var ops free a variable after its last use in the program; a run that
// fetches it reads it once more, at the end (Fluid's developer guide fetches `[avg_cost] +
// accuracy.metrics` after memory_optimize without a skip_opt_set). So the run's copy of `block`
// keeps its fetch targets: they are taken out of its delete_var ops (one left with nothing to free
// is removed).
void KeepFetchTargets(BlockDesc* block, const std::vector<std::string>& fetches);

// Moves the fetch ops at the end of `block` up to right after the last op that writes or reads
// their variable, runs sub-blocks or runs itself without kernels (control flow, collectives), in
// column order there: on a place with a copy-out stream the download starts while the ops after
// it (a training step's backward and optimizer) are still queued, and the run returns once the
// fetched values are down. A value is fetched as that op left it, as at the end of the block
// unless a later op writes its memory under another name.
void MoveFetchesEarly(BlockDesc* block);

// Checks the tensor fed to variable `desc`: it holds data of the declared data type and a shape
// the declared one matches (-1 matches any size), with a valid LoD. Errors name the feed.
void CheckFeed(const VarDesc& desc, const LoDTensor& t);

class PreparedBlock;

// Where the feed op of `block` should put variable `var`: the place every op reading it runs its
// kernel on (a fetch, or a kernel reading it as a host input, reads on the host), so that a feed
// only CPU-fallback ops read is never uploaded to be copied down again; `run_place` when its
// readers disagree, or one runs without a kernel (control flow) or has none chosen yet.
Place FeedPlace(const PreparedBlock& block, const std::string& var, const Place& run_place);

// Puts `feeds` in `scope`'s feed list, for the feed ops.
void SetFeedList(Scope* scope, const std::vector<LoDTensor>& feeds);
// Takes the `count` results the fetch ops left in `scope`'s fetch list, in a plain layout; the
// list is left empty, so the next run's results never alias these.
std::vector<LoDTensor> TakeFetchList(Scope* scope, size_t count);

}  // namespace tide::core
