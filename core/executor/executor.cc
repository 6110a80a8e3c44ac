// executor.cc: Prepare, Bind and the run loop.
#include "core/executor/executor.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <mutex>
#include <set>

#include "core/executor/kernel_choice.h"
#include "core/executor/profiler.h"
#include "core/executor/release_plan.h"
#include "core/executor/runtime_infer_shape.h"
#include "core/framework/tensor_util.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// Adds feed ops (prepended) and fetch ops (appended) to `block`, Fluid-style, unless it has
// them already; returns the feed and fetch targets in column order.
void AddFeedFetchOps(BlockDesc* block, const std::vector<std::string>& feeds,
                     const std::vector<std::string>& fetches, std::vector<std::string>* feed_out,
                     std::vector<std::string>* fetch_out) {
  std::vector<std::pair<int, std::string>> have_feed, have_fetch;
  auto col_of = [](const OpDesc& op) {
    const int32_t* col = std::get_if<int32_t>(&op.GetAttr("col"));
    TIDE_ENFORCE(col != nullptr, "op '", op.type(), "': attribute 'col' must be an int");
    return *col;
  };
  for (OpDesc* op : block->AllOps()) {
    const bool feed = op->type() == "feed", fetch = op->type() == "fetch";
    if (!(feed || fetch) || !op->HasAttr("col")) continue;
    const char* param = feed ? "Out" : "X";
    const auto& args = feed ? op->Output(param) : op->Input(param);
    TIDE_ENFORCE(args.size() == 1, "op '", op->type(), "' (col ", col_of(*op), ") must have one ",
                 param, " variable, has ", args.size());
    (feed ? have_feed : have_fetch).emplace_back(col_of(*op), args[0]);
  }
  auto targets = [](std::vector<std::pair<int, std::string>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    for (auto& p : v) out.push_back(p.second);
    return out;
  };
  if (!have_feed.empty()) {
    *feed_out = targets(have_feed);
    auto a = *feed_out, b = feeds;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    TIDE_ENFORCE(b.empty() || a == b, "the program already feeds [", StrCat(a.size()),
                 " variable(s)] through its feed ops; feed exactly those");
  } else if (!feeds.empty()) {
    VarDesc* fv = block->Var(kFeedVarName);
    fv->set_type(TIDE_VAR_FEED_MINIBATCH);
    fv->set_persistable(true);
    for (size_t i = feeds.size(); i-- > 0;) {
      OpDesc* op = block->PrependOp();
      *op = OpDesc("feed", {{"X", {kFeedVarName}}}, {{"Out", {feeds[i]}}},
                   {{"col", static_cast<int32_t>(i)}});
      op->set_block(block);
    }
    *feed_out = feeds;
  }
  if (!have_fetch.empty()) {
    *fetch_out = targets(have_fetch);
  } else if (!fetches.empty()) {
    VarDesc* fv = block->Var(kFetchVarName);
    fv->set_type(TIDE_VAR_FETCH_LIST);
    fv->set_persistable(true);
    for (size_t i = 0; i < fetches.size(); ++i) {
      TIDE_ENFORCE(block->FindVarRecursive(fetches[i]) != nullptr, "cannot fetch '", fetches[i],
                   "': no variable of that name in block ", block->idx(), " or its parents");
      OpDesc* op = block->AppendOp();
      *op = OpDesc("fetch", {{"X", {fetches[i]}}}, {{"Out", {kFetchVarName}}},
                   {{"col", static_cast<int32_t>(i)}});
      op->set_block(block);
    }
    *fetch_out = fetches;
  }
}

std::string ShapeString(const std::vector<int64_t>& s) { return DDim(s).ToString(); }

}  // namespace

Executor::Executor(const Place& place) : place_(place) {
  if (!Registry::Global().initialized())
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "cannot make an Executor on ", place.ToString(),
              ": the core is not started; call tide::core::Initialize() (core/host/initialize.h) "
              "once first: it registers the core's ops and loads the plugins on the plugin path");
  dctx_ = DeviceContextPool::Global().Get(place);  // checks the place exists
}

std::unique_ptr<PreparedBlock> Executor::PrepareBlock(std::shared_ptr<const ProgramDesc> program,
                                                      int block_idx, bool create_local_scope) {
  auto p = std::make_unique<PreparedBlock>();
  p->program_ = std::move(program);
  p->block_idx_ = block_idx;
  p->create_local_scope_ = create_local_scope;
  const BlockDesc& block = p->program_->Block(static_cast<size_t>(block_idx));
  for (size_t i = 0; i < block.OpSize(); ++i) {
    p->ops_.push_back(std::make_unique<OpInstance>(*block.Op(i), block_idx, i));
    OpInstance& op = *p->ops_.back();
    if (op.info().run) continue;
    for (size_t b = 0; b < op.outputs().size(); ++b)
      for (size_t i = 0; i < op.outputs()[b].names.size(); ++i) {
        const VarDesc* v = block.FindVarRecursive(op.outputs()[b].names[i]);
        if (v && v->persistable()) op.persistable_outputs.emplace_back(b, i);
      }
    op.library = RequestedLibrary(op);
    // Choose the kernel now when the data type is known from the program; Run re-checks it.
    DataType dt = op.dtype_from_attr;
    if (dt == TIDE_UNDEFINED && op.dtype_input >= 0) {
      const VarDesc* v = block.FindVarRecursive(op.inputs()[op.dtype_input].names[0]);
      if (v && (v->type() == TIDE_VAR_LOD_TENSOR || v->type() == TIDE_VAR_SELECTED_ROWS)) dt = v->dtype();
    }
    if (dt != TIDE_UNDEFINED) ChooseKernel(op, dt, place_);
  }
  return p;
}

std::unique_ptr<PreparedBlock> Executor::Prepare(const ProgramDesc& program, int block_idx,
                                                 const std::vector<std::string>& feed_names,
                                                 const std::vector<std::string>& fetch_names) {
  auto copy = std::make_shared<ProgramDesc>(program);
  BlockDesc* block = copy->MutableBlock(static_cast<size_t>(block_idx));
  std::vector<std::string> feeds, fetches;
  for (const auto& name : feed_names)
    TIDE_ENFORCE(block->FindVarRecursive(name) != nullptr, "cannot feed '", name,
                 "': no variable of that name in block ", block_idx, " or its parents");
  AddFeedFetchOps(block, feed_names, fetch_names, &feeds, &fetches);
  auto p = PrepareBlock(copy, block_idx, /*create_local_scope=*/true);
  p->feed_names_ = feeds;
  p->fetch_names_ = fetches;
  p->release_names_ = PlanReleases(*copy, block_idx, fetches);
  for (const auto& name : feeds) p->feed_descs_.push_back(block->FindVarRecursive(name));
  return p;
}

void Executor::CheckFeed(const PreparedBlock& p, size_t i, const LoDTensor& t) const {
  const std::string& name = p.feed_names_[i];
  const VarDesc* desc = p.feed_descs_[i];
  TIDE_ENFORCE(t.initialized(), "feed '", name, "' holds no data");
  if (desc->dtype() != TIDE_UNDEFINED && t.dtype() != desc->dtype())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", name, "': data type ", DataTypeName(t.dtype()),
              " does not match the variable's ", DataTypeName(desc->dtype()));
  const auto& want = desc->shape();
  if (!want.empty()) {
    bool ok = static_cast<int>(want.size()) == t.dims().size();
    for (size_t d = 0; ok && d < want.size(); ++d)
      ok = want[d] < 0 || want[d] == t.dims()[static_cast<int>(d)];
    if (!ok)
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", name, "': shape ", t.dims().ToString(),
                " does not match the variable's ", ShapeString(want), " (-1 matches any size)");
  }
  std::string lod_error = CheckLoD(t.lod(), t.dims().size() ? t.dims()[0] : 0);
  TIDE_ENFORCE(lod_error.empty(), "feed '", name, "': invalid LoD ", LoDToString(t.lod()), ": ",
               lod_error);
}

Scope* Executor::Bind(PreparedBlock& p, Scope* scope) {
  const uint64_t epoch = Scope::EraseEpoch();
  if (p.bound_scope_ == scope->serial() && p.bound_epoch_ == epoch && p.run_scope_)
    return p.run_scope_;
  Scope* target = scope;
  if (p.create_local_scope_) {
    p.local_scope_ = Scope::NewDetached(scope);
    target = p.local_scope_.get();
  }
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

std::vector<LoDTensor> Executor::Run(PreparedBlock& p, Scope* scope,
                                     const std::vector<LoDTensor>& feeds) {
  TIDE_ENFORCE(scope != nullptr, "Executor::Run needs a scope");
  TIDE_ENFORCE(feeds.size() == p.feed_names_.size(), "the prepared program feeds ",
               p.feed_names_.size(), " variable(s), given ", feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) CheckFeed(p, i, feeds[i]);
  Scope* local = Bind(p, scope);
  if (!p.feed_names_.empty()) {
    auto* list = scope->Var(kFeedVarName)->GetMutable<FeedList>();
    list->assign(feeds.begin(), feeds.end());
  }
  RunOps(p, local);
  std::vector<LoDTensor> out;
  if (!p.fetch_names_.empty()) {
    auto* list = scope->Var(kFetchVarName)->GetMutable<FetchList>();
    TIDE_ENFORCE(list->size() == p.fetch_names_.size(), "the fetch ops produced ", list->size(),
                 " result(s) for ", p.fetch_names_.size(), " fetch target(s)");
    out.assign(std::make_move_iterator(list->begin()), std::make_move_iterator(list->end()));
    list->clear();  // the next run fills fresh tensors: results never alias
    for (auto& t : out) ToPlainLayout(&t);
  }
  return out;
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

void Executor::ToPlainLayout(LoDTensor* t) {
  if (!t->initialized() || !NeedsLayoutTransform(t->layout(), TIDE_LAYOUT_ANY)) return;
  Place at = t->place();
  const TransformEntry* e = Registry::Global().FindLayoutTransform(at.kind, t->layout(), TIDE_LAYOUT_ANY);
  if (!e) e = Registry::Global().FindLayoutTransform(at.kind, t->layout(), TIDE_LAYOUT_NCHW);
  if (!e)
    TIDE_FAIL(TIDE_UNIMPLEMENTED, "a fetched tensor is in layout ", LayoutName(t->layout()),
              " and no plugin registers a ", at.kind_name(), " transform to a plain layout");
  LoDTensor plain;
  plain.Resize(t->dims());
  plain.set_lod(t->lod());
  CallPlugin([&] { return e->fn(Wrap(static_cast<const LoDTensor*>(t)), Wrap(&plain), Wrap(DeviceContextPool::Global().Get(at)), e->user_data); },
             [&] { return "converting a fetched tensor: " + LayoutTransformName(*e); }, e->plugin_file);
  *t = std::move(plain);
}

void Executor::RunSubBlock(PreparedBlock& parent, int block_idx, Scope* scope) {
  auto& sub = parent.sub_blocks_[block_idx];
  if (!sub) sub = PrepareBlock(parent.program_, block_idx, /*create_local_scope=*/false);
  RunOps(*sub, Bind(*sub, scope));
}

namespace {
// Asks the CPU for the next op's argument bindings while the current one runs: on a chain of tiny
// ops, each op's first look at its bindings was a cache miss costing about a fifth of its time.
void PrefetchBindings(const OpInstance& op) {
  for (const std::vector<ArgBinding>* list : {&op.inputs(), &op.outputs()}) {
    const char* begin = reinterpret_cast<const char*>(list->data());
    const char* end = reinterpret_cast<const char*>(list->data() + list->size());
    for (const char* line = begin; line < end; line += 64) __builtin_prefetch(line);
  }
}
}  // namespace

void Executor::RunOps(PreparedBlock& p, Scope* local) {
  p.counts_ = TransformCounts();
  if (!FLAGS_profile_ops) {
    for (size_t i = 0, n = p.ops_.size(); i < n; ++i) {
      if (i + 1 < n) PrefetchBindings(*p.ops_[i + 1]);
      RunOp(p, *p.ops_[i], local);
      ReleaseAfter(p, i);
    }
    return;
  }
  for (size_t i = 0; i < p.ops_.size(); ++i) {
    OpInstance* op = p.ops_[i].get();
    auto t0 = std::chrono::steady_clock::now();
    uint64_t transforms = p.counts_.total();
    RunOp(p, *op, local);
    ReleaseAfter(p, i);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string kernel = op->kernel ? op->kernel->key.ToString() : std::string();
    std::string name = op->type() + (kernel.empty() ? "" : " " + kernel);
    if (p.counts_.total() != transforms) name += " +transforms";
    RecordOpTime(name, ms);
    RecordOpEvent(op->type(), kernel, t0, ms);
  }
}

// Below this a temporary keeps its memory: giving it back and taking it again costs about 30 ns
// an op (a chain of 1000 tiny adds: 146 -> 178 ns an op), more than so small a tensor saves.
constexpr size_t kMinReleasedBytes = 64 << 10;

// The memory of temporaries whose last use op `op_index` was goes back to the allocator; their
// dims stay, so shapes inferred for the next run still hold. On an asynchronous device the
// allocator hands it out again only to work queued after this op's (as delete_var does).
void Executor::ReleaseAfter(PreparedBlock& p, size_t op_index) {
  if (!FLAGS_free_temporaries || op_index >= p.releases_.size()) return;
  for (Variable* v : p.releases_[op_index]) {
    if (!v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (t->memory_size() >= kMinReleasedBytes) t->Clear();
  }
}

void Executor::CheckInputsReady(const OpInstance& op) {
  for (const auto& b : op.inputs()) {
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v) continue;
      bool empty = !v->IsInitialized() ||
                   (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized() &&
                    v->Get<LoDTensor>().dims().size() == 0);
      if (empty)
        TIDE_FAIL(TIDE_FAILED_PRECONDITION, op.label(), " input '", b.param, "': variable '",
                  b.names[i], "' holds no data (it is not fed, not set by the startup program, "
                  "and no earlier op writes it)");
    }
  }
}



void Executor::TransformInputs(PreparedBlock& p, OpInstance& op) {
  const OpKernelType& key = op.kernel_key;
  for (auto& b : op.mutable_inputs())
    for (size_t i = 0; i < b.vars.size(); ++i) {
      Variable* v = b.vars[i];
      if (!v || !v->IsType<LoDTensor>()) continue;
      const LoDTensor& t = v->Get<LoDTensor>();
      InputTransform& tr = b.transforms[i];
      // The common case, inline: already in the kernel's place, layout and data type.
      bool ready = t.layout() == key.layout || (key.layout == TIDE_LAYOUT_ANY && t.layout() != TIDE_LAYOUT_OPAQUE);
      if (ready && t.dtype() == key.dtype && t.place() == op.kernel_place && tr.last_plan.empty()) {
        tr.result = nullptr;
        continue;
      }
      tr.result = nullptr;
      tr.result = TransformInput(op, b, i, &tr, &p.counts_);
    }
}

namespace {
// True when no watched tensor changed dims or LoD since the last run (then shape inference can
// be skipped). Builds the watch list on first use.
bool ShapesUnchanged(OpInstance& op) {
  if (!op.watch_shapes) return false;
  if (op.watched.empty()) {
    for (const auto* list : {&op.inputs(), &op.outputs()})
      for (const auto& b : *list)
        for (const Variable* v : b.vars) {
          if (!v) continue;
          if (!v->IsType<LoDTensor>()) {
            op.watch_shapes = false;
            op.watched.clear();
            return false;
          }
          op.watched.push_back(&v->Get<LoDTensor>());
        }
    op.versions.assign(op.watched.size(), UINT64_MAX);
    return false;
  }
  for (size_t i = 0; i < op.watched.size(); ++i)
    if (op.watched[i]->version() != op.versions[i]) return false;
  return true;
}

// A plain kernel writes plain data: outputs that held another layout (a library's opaque data
// from an earlier op) must not keep that label. (Inputs were converted already.)
void ResetOutputLayouts(OpInstance& op) {
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars)
      if (v && v->IsType<LoDTensor>()) {
        auto* t = v->GetMutable<LoDTensor>();
        if (t->layout() != TIDE_LAYOUT_ANY && t->layout() != op.kernel_key.layout) {
          t->set_layout(op.kernel_key.layout);
          t->set_format(0);
        }
      }
}

// A kernel writes every output it declares (dispensable and intermediate ones aside): one left
// without data is named here, with the kernel and its plugin, not by the next op reading it.
void CheckOutputsWritten(const OpInstance& op, const KernelEntry& k) {
  for (const auto& b : op.outputs()) {
    const auto& specs = op.info().proto.outputs();
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const auto& v) { return v.name() == b.param; });
    if (spec != specs.end() && (spec->dispensable() || spec->intermediate())) continue;
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (v && (!v->IsInitialized() || (v->IsType<LoDTensor>() && !v->Get<LoDTensor>().initialized())))
        TIDE_FAIL(TIDE_INTERNAL, op.label(), " kernel ", k.key.ToString(), " did not write its output '",
                  b.param, "' (variable '", b.names[i], "'): a bug in plugin ", k.plugin_file);
    }
  }
}

// The kernel may have written its outputs through pointers it got before (or not through
// mutable_data at all): their contents are new, whatever a converted copy of them says.
void TouchOutputs(const OpInstance& op) {
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars)
      if (v && v->IsType<LoDTensor>()) {
        const LoDTensor& t = v->Get<LoDTensor>();
        if (t.holder()) t.holder()->Touch();
      }
}

void SnapshotShapes(OpInstance& op) {
  for (size_t i = 0; i < op.watched.size(); ++i) op.versions[i] = op.watched[i]->version();
}
}  // namespace

namespace {
// A kernel that failed after shape inference resized its outputs may have left an output with
// dims larger than its memory: drop that memory, so nothing (the next op, numpy, DLPack) reads
// past it; the output then holds no data and says so.
void DropUnbackedOutputs(const OpInstance& op) {
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars) {
      if (!v || !v->IsType<LoDTensor>()) continue;
      LoDTensor* t = v->GetMutable<LoDTensor>();
      if (!t->initialized() || t->dims().size() == 0) continue;
      const size_t need = static_cast<size_t>(t->numel()) * SizeOf(t->dtype());
      if (t->memory_size() < need) t->Clear();
    }
}

template <typename T>
int64_t FirstNonFinite(const LoDTensor& t) {
  const T* d = t.data<T>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (!std::isfinite(d[i])) return i;
  return -1;
}
}  // namespace

// --check_nan_inf: the first output of a float type that holds a NaN or an Inf stops the run,
// naming the op, the kernel, the variable and the element (device data is read back).
void Executor::CheckOutputsFinite(const OpInstance& op, const KernelEntry& k) {
  for (const auto& b : op.outputs())
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v || !v->IsType<LoDTensor>()) continue;
      const LoDTensor& t = v->Get<LoDTensor>();
      if (!t.initialized() || (t.dtype() != TIDE_FP32 && t.dtype() != TIDE_FP64)) continue;
      if (t.layout() == TIDE_LAYOUT_OPAQUE) continue;  // a library's own format: not plain values
      // The kernel's device was synchronised after it ran (RunOp); other memory is copied back.
      LoDTensor host;
      const LoDTensor* at = &t;
      if (!DeviceContextPool::Global().Get(t.place())->host_accessible()) {
        TensorCopySync(t, HostPlace(), &host);
        at = &host;
      }
      const int64_t bad = t.dtype() == TIDE_FP32 ? FirstNonFinite<float>(*at) : FirstNonFinite<double>(*at);
      if (bad < 0) continue;
      const double value = t.dtype() == TIDE_FP32 ? at->data<float>()[bad] : at->data<double>()[bad];
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "check_nan_inf: ", op.label(), " kernel ", k.key.ToString(),
                " wrote ", std::isnan(value) ? "NaN" : "Inf", " into output ", b.param, " ('",
                b.names[i], "') at element ", bad, " of ", t.dims().ToString());
    }
}

// A fallback kernel (another place's) wrote its outputs there. Parameters and other persistable
// variables go back to the run's place at once: the startup program's initialisers and an
// optimizer without a device kernel would otherwise leave every parameter on the host, to be
// copied to the device again by every op that reads it.
void Executor::ReturnPersistableOutputs(OpInstance& op) {
  for (const auto& [b, i] : op.persistable_outputs) {
    Variable* v = op.outputs()[b].vars[i];
    if (!v || !v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (t->initialized() && t->place() != place_) TensorCopySync(*t, place_, t, dctx_);
  }
}

void Executor::RunOp(PreparedBlock& p, OpInstance& op, Scope* local) {
  const OpInfo& info = op.info();
  if (info.run) {
    TideOpRunContext ctx{&op, local, dctx_, this, &p};
    CallPlugin([&] { return info.run(&ctx, info.run_data); }, op.label(), info.plugin_file);
    return;
  }
  CheckInputsReady(op);
  for (;;) {  // once, unless the kernel declines this run (UNIMPLEMENTED): then the next one
    SelectKernel(op, place_);
    if (!ShapesUnchanged(op)) InferShapeAtRunTime(op);
    TransformInputs(p, op);
    if (op.kernel_key.layout != TIDE_LAYOUT_OPAQUE) ResetOutputLayouts(op);
    const KernelEntry& k = *op.kernel;
    TideKernelContext ctx{&op, op.kernel_dctx, &k, {}};
    try {
      CallPlugin([&] { return k.compute(&ctx, k.user_data); },
                 [&] { return op.label() + " kernel " + k.key.ToString(); }, k.plugin_file);
      break;
    } catch (const Error& e) {
      DropUnbackedOutputs(op);
      if (e.code() != TIDE_UNIMPLEMENTED) throw;
      DeclineKernel(op, e, place_);  // throws when no other kernel can run the op
    } catch (...) {
      DropUnbackedOutputs(op);
      throw;
    }
  }
  const KernelEntry& k = *op.kernel;
  // Debugging and profiling wait for the device, so that an asynchronous fault and the device
  // time are charged to the op that launched them, not to whichever synchronises next (and
  // check_nan_inf reads finished outputs).
  if (FLAGS_sync_ops || FLAGS_profile_ops || FLAGS_check_nan_inf) {
    try {
      op.kernel_dctx->Synchronize();
    } catch (const Error& e) {
      TIDE_FAIL(e.code(), op.label(), " kernel ", k.key.ToString(), " (", k.plugin_file,
                ") failed on the device: ", e.what());
    }
  }
  TouchOutputs(op);
  if (!op.outputs_checked) {
    CheckOutputsWritten(op, k);
    op.outputs_checked = true;
  }
  if (FLAGS_check_nan_inf) CheckOutputsFinite(op, k);
  if (op.kernel_place != place_) ReturnPersistableOutputs(op);
  SnapshotShapes(op);
}

}  // namespace tide::core
