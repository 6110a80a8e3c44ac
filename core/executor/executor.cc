// executor.cc: Prepare, Bind and the run loop. What the loop does to each op is in the modules
// it calls: kernel_choice, runtime_infer_shape with shape_cache, data_transform, kernel_outputs,
// run_checks, release_plan, and profiler as the loop's hook.
#include "core/executor/executor.h"

#include <algorithm>

#include "core/executor/aliased_inputs.h"
#include "core/executor/device_compile.h"
#include "core/executor/kernel_choice.h"
#include "core/executor/kernel_outputs.h"
#include "core/executor/profiler.h"
#include "core/executor/release_plan.h"
#include "core/executor/run_checks.h"
#include "core/executor/runtime_infer_shape.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/program_passes.h"
#include "core/registry/registry.h"

namespace tide::core {

PreparedBlock::Readers& PreparedBlock::ReadersOf(const std::string& var) const {
  auto [it, added] = readers_.try_emplace(var);
  if (added)
    for (const auto& op : ops_)
      for (size_t i = 0; i < op->inputs().size(); ++i) {
        const std::vector<std::string>& names = op->inputs()[i].names;
        if (std::find(names.begin(), names.end(), var) != names.end())
          it->second.ops.push_back({op.get(), i, op->type() == "fetch"});
      }
  return it->second;
}

Executor::Executor(const Place& place) : place_(place) {
  if (!Registry::Global().initialized())
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "cannot make an Executor on ", place.ToString(),
              ": the core is not started; call tide::core::Initialize() (core/host/initialize.h) "
              "once first: it registers the core's ops and loads the plugins on the plugin path");
  dctx_ = DeviceContextPool::Global().Get(place);  // checks the place exists
}

// --- Prepare ---

std::unique_ptr<PreparedBlock> Executor::PrepareBlock(std::shared_ptr<const ProgramDesc> program,
                                                      int block_idx, bool create_local_scope) {
  auto p = std::make_unique<PreparedBlock>();
  p->program_ = std::move(program);
  p->block_idx_ = block_idx;
  p->create_local_scope_ = create_local_scope;
  const BlockDesc& block = p->program_->Block(static_cast<size_t>(block_idx));
  for (size_t i = 0; i < block.OpSize(); ++i) {
    p->ops_.push_back(std::make_unique<OpInstance>(*block.Op(i), block, block_idx, i));
    OpInstance& op = *p->ops_.back();
    if (!op.info().run) KernelChoice::Prepare(op, block, place_);
  }
  return p;
}

std::unique_ptr<PreparedBlock> Executor::Prepare(const ProgramDesc& program, int block_idx,
                                                 const std::vector<std::string>& feed_names,
                                                 const std::vector<std::string>& fetch_names) {
  auto copy = std::make_shared<ProgramDesc>(program);
  BlockDesc* block = copy->MutableBlock(static_cast<size_t>(block_idx));
  std::vector<std::string> feeds, fetches;
  AddFeedFetchOps(block, feed_names, fetch_names, &feeds, &fetches);
  KeepFetchTargets(block, fetches);
  // Issue 33: the place's program passes (inference programs), then its device's claims.
  if (HasProgramPasses(place_.kind) && IsInferenceProgram(*copy)) {
    std::vector<std::string> keep = feeds;
    keep.insert(keep.end(), fetches.begin(), fetches.end());
    std::string bytes = copy->Serialize();
    if (!RunProgramPasses(&bytes, place_.kind, keep).empty()) *copy = ProgramDesc::Parse(bytes);
  }
  auto groups = ClaimSubgraphs(copy.get(), block_idx, place_, fetches);
  // Downloads start as soon as their values are computed where a copy-out stream takes them
  // (after the claims: a fetched intermediate leaves its group as the group's output).
  if (dctx_->HasRole(TIDE_STREAM_COPY_OUT))
    MoveFetchesEarly(copy->MutableBlock(static_cast<size_t>(block_idx)));
  auto p = PrepareBlock(copy, block_idx, /*create_local_scope=*/true);
  p->compiled_groups_ = std::move(groups);
  p->feed_names_ = feeds;
  p->fetch_names_ = fetches;
  p->release_names_ = PlanReleases(*copy, block_idx, fetches);
  p->moves_ = PlanViewMoves(p->ops_, p->release_names_);
  block = copy->MutableBlock(static_cast<size_t>(block_idx));  // the passes may have made a new one
  for (const auto& name : feeds) p->feed_descs_.push_back(block->FindVarRecursive(name));
  return p;
}

// --- Bind ---

Scope* Executor::Bind(PreparedBlock& p, Scope* scope) {
  const uint64_t epoch = Scope::EraseEpoch();
  if (p.bound_scope_ == scope->serial() && p.bound_epoch_ == epoch && p.run_scope_)
    return p.run_scope_;
  Scope* target = scope;
  if (p.create_local_scope_) {
    p.local_scope_ = Scope::NewDetached(scope);
    target = p.local_scope_.get();
  }
  p.arrays_.clear();
  p.fetched_.clear();
  for (const VarDesc* v : p.program_->Block(static_cast<size_t>(p.block_idx_)).AllVars()) {
    // Persistables (parameters) are shared down the scope chain: reuse one an ancestor holds.
    Variable* var = nullptr;
    if (v->persistable()) {
      var = scope->FindVar(v->name());
      if (!var) var = scope->Var(v->name());
    } else {
      var = target->Var(v->name());
    }
    if (!var->IsInitialized()) var->InitByType(v->type());
    if (!v->persistable() && var->IsType<LoDTensorArray>()) p.arrays_.push_back(var);
    if (!v->persistable() && var->IsType<LoDTensor>() &&
        std::find(p.fetch_names_.begin(), p.fetch_names_.end(), v->name()) != p.fetch_names_.end())
      p.fetched_.push_back(var);
  }
  for (auto& op : p.ops_) op->Bind(*target);
  p.releases_.assign(p.release_names_.size(), {});
  for (size_t i = 0; i < p.release_names_.size(); ++i)
    for (const std::string& name : p.release_names_[i])
      if (Variable* v = target->FindVar(name)) p.releases_[i].push_back(v);
  p.bound_scope_ = scope->serial();
  p.bound_epoch_ = epoch;
  p.run_scope_ = target;
  return target;
}

// --- Run ---

std::vector<LoDTensor> Executor::Run(PreparedBlock& p, Scope* scope,
                                     const std::vector<LoDTensor>& feeds) {
  TIDE_ENFORCE(scope != nullptr, "Executor::Run needs a scope");
  TIDE_ENFORCE(feeds.size() == p.feed_names_.size(), "the prepared program feeds ",
               p.feed_names_.size(), " variable(s), given ", feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) CheckFeed(*p.feed_descs_[i], feeds[i]);
  Scope* local = Bind(p, scope);
  // Nothing of a run's tensor arrays reaches the next, as in Fluid, whose runs each had a scope
  // of their own: a gradient array is written element by element (read_from_array's grad), and
  // the elements an earlier run left (another batch's) would be read as this run's gradients.
  for (Variable* a : p.arrays_) a->GetMutable<LoDTensorArray>()->clear();
  for (Variable* f : p.fetched_) {
    LoDTensor* t = f->GetMutable<LoDTensor>();
    if (t->holder() && t->holder()->lent()) t->Clear();
  }
  if (!p.feed_names_.empty()) SetFeedList(scope, feeds);
  try {
    RunOps(p, local);
  } catch (...) {
    p.downloads_.Drop();  // a failed run: nothing may land in its fetch list later
    throw;
  }
  p.downloads_.Finish();  // the fetched values on the host: the host waits for these copies only
  if (p.fetch_names_.empty()) return {};
  return TakeFetchList(scope, p.fetch_names_.size());
}

std::vector<LoDTensor> Executor::Run(const ProgramDesc& program, Scope* scope,
                                     const std::map<std::string, LoDTensor>& feeds,
                                     const std::vector<std::string>& fetch_names, int block_idx) {
  std::vector<std::string> names;
  std::vector<LoDTensor> tensors;
  for (const auto& kv : feeds) {
    names.push_back(kv.first);
    tensors.push_back(kv.second);
  }
  auto p = Prepare(program, block_idx, names, fetch_names);
  if (p->feed_names_ != names) {  // the program's own feed ops set the order
    std::vector<LoDTensor> ordered;
    for (const auto& n : p->feed_names_) ordered.push_back(feeds.at(n));
    tensors = std::move(ordered);
  }
  return Run(*p, scope, tensors);
}

namespace {
// How deep sub-block runs nest on this thread. A program whose sub-blocks run themselves is
// refused when loaded (ProgramDesc::CheckSubBlocks); this is the backstop against anything that
// still recurses (a plugin running block indices of its own), before the stack overflows.
thread_local int t_sub_block_depth = 0;
constexpr int kMaxSubBlockDepth = 64;

struct SubBlockDepth {
  SubBlockDepth(const PreparedBlock& parent, int block_idx) {
    if (t_sub_block_depth >= kMaxSubBlockDepth)
      TIDE_FAIL(TIDE_OUT_OF_RANGE, "block ", parent.block_idx(), " runs sub-block ", block_idx,
                " nested ", t_sub_block_depth + 1, " deep, past the limit of ", kMaxSubBlockDepth,
                " nested sub-block runs (a sub-block that runs itself?)");
    ++t_sub_block_depth;
  }
  ~SubBlockDepth() { --t_sub_block_depth; }
};
}  // namespace

void Executor::RunSubBlock(PreparedBlock& parent, int block_idx, Scope* scope) {
  SubBlockDepth depth(parent, block_idx);
  auto& sub = parent.sub_blocks_[block_idx];
  if (!sub) sub = PrepareBlock(parent.program_, block_idx, /*create_local_scope=*/false);
  RunOps(*sub, Bind(*sub, scope));
  sub->downloads_.Finish();  // a sub-block's own fetch ops (none in programs Fluid writes)
}

void Executor::RunOps(PreparedBlock& p, Scope* local) {
  p.counts_ = TransformCounts();
  OpTimer timer;  // resolves the run's device times when destroyed (the outermost run)
  OpTimer* const profile = FLAGS_profile_ops ? &timer : nullptr;  // the loop's one hook
  if (profile) profile->Begin();
  for (size_t i = 0, n = p.ops_.size(); i < n; ++i) {
    if (i + 1 < n) PrefetchBindings(*p.ops_[i + 1]);
    if (profile) profile->Start(*p.ops_[i], p.counts_.total());
    std::vector<ViewMove>* moves = ViewMovesOf(p.moves_, i);
    try {
      RunOp(p, *p.ops_[i], local, moves);
    } catch (...) {
      if (moves) UndoViewMoves(*p.ops_[i], moves);  // a failed op leaves no memory shared
      throw;
    }
    if (p.observe_) p.observe_(i);
    if (moves) FinishViewMoves(*p.ops_[i], moves);
    ReleaseAfter(p.releases_, i);
    if (profile) profile->Stop(*p.ops_[i], p.counts_.total());
  }
}

void Executor::RunOp(PreparedBlock& p, OpInstance& op, Scope* local, std::vector<ViewMove>* moves) {
  const OpInfo& info = op.info();
  if (info.run) {  // an op without kernels (feed, fetch, control flow) runs itself
    TideOpRunContext ctx{&op, local, dctx_, this, &p};
    CallPlugin([&] { return info.run(&ctx, info.run_data); }, op.label(), info.plugin_file);
    return;
  }
  AliasedInputsGuard aliased(op);
  // Inputs that are the tensors, dims and LoD of the op's last run (its shape cache says so) were
  // ready then: only an op whose inputs changed is checked again.
  bool unchanged = op.kernel() && op.shape_cache().Unchanged(op.inputs(), op.outputs());
  if (!unchanged) CheckInputsReady(op);
  for (;;) {  // once, unless the kernel declines this run (UNIMPLEMENTED): then the next one
    if (KernelChoice::Choose(op, place_)) {
      op.shape_cache().Reset();
      unchanged = false;
    }
    if (!unchanged && !op.shape_cache().Unchanged(op.inputs(), op.outputs()))
      InferShapeAtRunTime(op);
    aliased.Separate();
    TransformInputs(op, &p.counts_);
    if (moves) MoveViewInputs(op, moves);  // the kernel then finds its output holding the bytes
    if (op.kernel_key().layout != TIDE_LAYOUT_OPAQUE) LabelOutputLayouts(op);
    const KernelEntry& k = *op.kernel();
    TideKernelContext ctx{&op, op.kernel_dctx(), &k, {}};
    const uint64_t writes = TensorWritesSoFar();  // read again only if the kernel declines
    try {
      CallPlugin([&] { return k.compute(&ctx, k.user_data); },
                 [&] { return op.label() + " kernel " + k.key.ToString(); }, k.plugin_file);
      op.kernel_dctx()->NoteLaunch(&k);  // named if a fault of its queued work surfaces later
      break;
    } catch (const Error& e) {
      if (moves) UndoViewMoves(op, moves);  // the next kernel may read X converted
      DropUnbackedOutputs(op);
      if (e.code() != TIDE_UNIMPLEMENTED) throw;
      CheckDeclinedBeforeWriting(op, k, e, writes);  // no fallback onto what it half wrote
      KernelChoice::Decline(op, e, place_);          // throws when no other kernel can run the op
      op.shape_cache().Reset();
      unchanged = false;
    } catch (...) {
      DropUnbackedOutputs(op);
      throw;
    }
  }
  WaitForKernelIfDebugging(op);
  if (op.runs_widened()) RoundWidenedOutputs(op);
  TouchOutputs(op);
  GiveDeclaredRankZero(op);
  CheckOutputsWrittenOnce(op);
  if (FLAGS_check_nan_inf) CheckOutputsFinite(op);
  if (op.kernel_place() != place_) ReturnPersistableOutputs(op, place_, dctx_);
  op.shape_cache().Remember();
}

}  // namespace tide::core
