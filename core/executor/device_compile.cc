// device_compile.cc: see device_compile.h. Three parts: the cache of compiled functions, the
// claim (asking the device, checking its groups, rewriting the block) and the node's run.
#include "core/executor/device_compile.h"

#include <glog/logging.h>

#include <algorithm>
#include <list>
#include <mutex>
#include <set>

#include "core/device/device_context.h"
#include "core/executor/executor.h"
#include "core/executor/kernel_outputs.h"
#include "core/executor/release_plan.h"
#include "core/ir/var_names.h"
#include "core/platform/data_type.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/registry/registry.h"

namespace tide::core {

// --- The cache: (device, ordinal, the device's key, the inputs' shapes) -> compiled function ---

struct CompiledGroup::Compiled {
  const DeviceInfo* device = nullptr;
  TideCompiled* fn = nullptr;  // null: the device declined these shapes
  std::string declined;        // its reason
  ~Compiled();
};

namespace {

// Compiled functions not yet given back to their devices: the cache's and those a node still
// holds after the cache let go of them. At device shutdown every one goes back (before the
// devices' finalize); an entry destroyed later has nothing left to give back.
class LiveCompiled {
 public:
  static LiveCompiled& Global() {
    static auto* live = new LiveCompiled;  // never destroyed: entries may outlive statics
    return *live;
  }
  void Add(CompiledGroup::Compiled* e) {
    static std::once_flag hook;
    std::call_once(hook, [] { AddDeviceShutdownHook([] { Global().ReleaseAll(); }); });
    std::lock_guard<std::mutex> lock(mu_);
    entries_.insert(e);
  }
  // Gives e's function back, once (from its destructor or at shutdown).
  void Release(CompiledGroup::Compiled* e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.erase(e)) GiveBack(e);
  }

 private:
  void ReleaseAll() {
    std::lock_guard<std::mutex> lock(mu_);
    for (CompiledGroup::Compiled* e : entries_) GiveBack(e);
    entries_.clear();
  }
  static void GiveBack(CompiledGroup::Compiled* e) {
    if (e->fn) e->device->def.compiler->release_compiled(e->device->def.self, e->fn);
    e->fn = nullptr;
  }
  std::mutex mu_;
  std::set<CompiledGroup::Compiled*> entries_;
};

// The least recently used entries beyond --device_compile_cache_capacity leave the cache; a
// node running those shapes keeps its entry (shared) until its shapes change.
class CompiledCache {
 public:
  static CompiledCache& Global() {
    static auto* cache = new CompiledCache;  // never destroyed: emptied at device shutdown
    return *cache;
  }
  std::mutex& mu() { return mu_; }
  // Under mu(): the entry of `key`, now the most recently used; null when there is none.
  std::shared_ptr<const CompiledGroup::Compiled> Find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  // Under mu(): keeps `entry` under `key` (a new key), dropping the least recently used past
  // the capacity.
  std::shared_ptr<const CompiledGroup::Compiled> Add(
      const std::string& key, std::unique_ptr<CompiledGroup::Compiled> entry) {
    static std::once_flag hook;
    std::call_once(hook, [] { AddDeviceShutdownHook(&CompiledCache::Clear); });
    std::shared_ptr<CompiledGroup::Compiled> shared(std::move(entry));
    if (shared->fn) LiveCompiled::Global().Add(shared.get());
    order_.emplace_front(key, shared);
    index_[key] = order_.begin();
    const size_t capacity = std::max<uint64_t>(FLAGS_device_compile_cache_capacity, 1);
    while (order_.size() > capacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return shared;
  }

 private:
  static void Clear() {  // the functions themselves go back through LiveCompiled's hook
    CompiledCache& c = Global();
    std::lock_guard<std::mutex> lock(c.mu_);
    c.index_.clear();
    c.order_.clear();
  }
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledGroup::Compiled>>;
  std::mutex mu_;
  std::list<Entry> order_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace

CompiledGroup::Compiled::~Compiled() {
  if (fn) LiveCompiled::Global().Release(this);
}

namespace {

std::string DimsText(const int64_t* dims, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

// --- The node ---

CompiledGroup::CompiledGroup(const DeviceInfo& device, const Place& place,
                             std::shared_ptr<const std::string> program, int block_idx,
                             std::vector<int32_t> ops, std::string cache_key, std::string label,
                             std::vector<std::string> internal)
    : device_(&device),
      place_(place),
      program_(std::move(program)),
      block_idx_(block_idx),
      ops_(std::move(ops)),
      cache_key_(std::move(cache_key)),
      label_(std::move(label)),
      internal_(std::move(internal)) {
  // Named by a fault of its queued work surfacing later (DeviceContext::Synchronize).
  launch_.op_type = StrCat(kCompiledGroupOp, " (", label_, ")");
  launch_.key.place_kind = place.kind;
  launch_.plugin = device.plugin;
  launch_.plugin_file = device.plugin_file;
}

std::unique_ptr<CompiledGroup::Compiled> CompiledGroup::Compile(
    const std::vector<const LoDTensor*>& inputs, const std::vector<std::string>& input_names,
    const std::vector<std::string>& output_names, const std::string& signature) const {
  // What the device compiles for: the inputs as they are, the outputs as declared.
  const ProgramDesc program = ProgramDesc::Parse(*program_);
  const BlockDesc& block = program.Block(static_cast<size_t>(block_idx_));
  std::vector<TideCompileValue> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TideCompileValue v{};
    v.struct_size = TIDE_STRUCT_SIZE(TideCompileValue, rank);
    v.name = input_names[i].c_str();
    v.dtype = inputs[i]->dtype();
    v.dims = inputs[i]->dims().data();
    v.rank = inputs[i]->dims().size();
    ins.push_back(v);
  }
  for (const std::string& name : output_names) {
    const VarDesc* var = block.FindVarRecursive(name);
    TideCompileValue v{};
    v.struct_size = TIDE_STRUCT_SIZE(TideCompileValue, rank);
    v.name = name.c_str();
    v.dtype = var ? var->dtype() : TIDE_UNDEFINED;
    v.dims = var ? var->shape().data() : nullptr;
    v.rank = var ? static_cast<int32_t>(var->shape().size()) : 0;
    outs.push_back(v);
  }
  TideSubgraphGroup group{};
  group.struct_size = TIDE_STRUCT_SIZE(TideSubgraphGroup, cache_key);
  group.ops = ops_.data(), group.num_ops = ops_.size(), group.cache_key = cache_key_.c_str();
  TideCompileRequest request{};
  request.struct_size = TIDE_STRUCT_SIZE(TideCompileRequest, num_outputs);
  request.device = place_.device;
  request.program = program_->data(), request.program_len = program_->size();
  request.block_idx = block_idx_;
  request.group = &group;
  request.inputs = ins.data(), request.num_inputs = ins.size();
  request.outputs = outs.data(), request.num_outputs = outs.size();
  auto entry = std::make_unique<Compiled>();
  entry->device = device_;
  try {
    CallPlugin(
        [&] { return device_->def.compiler->compile(device_->def.self, &request, &entry->fn); },
        [&] { return StrCat(label_, ": compile for inputs ", signature); }, device_->plugin_file);
  } catch (const Error& e) {
    if (e.code() != TIDE_UNIMPLEMENTED) throw;  // a failure: the next run asks again
    entry->fn = nullptr;
    entry->declined = e.what();
    LOG(INFO) << label_ << " runs op by op for inputs " << signature << ": " << e.what();
    return entry;
  }
  if (!entry->fn)
    TIDE_FAIL(TIDE_INTERNAL, label_, ": compile (", device_->plugin_file,
              ") succeeded without a compiled function");
  return entry;
}

const CompiledGroup::Compiled& CompiledGroup::ForShapes(
    const std::vector<const LoDTensor*>& inputs, const std::vector<std::string>& input_names,
    const std::vector<std::string>& output_names) {
  std::string signature;
  for (const LoDTensor* t : inputs)
    signature += StrCat(DataTypeName(t->dtype()), DimsText(t->dims().data(), t->dims().size()));
  if (last_ && signature == last_signature_) return *last_;
  const std::string key =
      StrCat(device_->kind_name, ":", place_.device, "|", cache_key_, "|", signature);
  CompiledCache& cache = CompiledCache::Global();
  std::lock_guard<std::mutex> lock(cache.mu());  // compiling is rare: one at a time
  std::shared_ptr<const Compiled> entry = cache.Find(key);
  if (!entry) entry = cache.Add(key, Compile(inputs, input_names, output_names, signature));
  last_signature_ = signature;
  last_ = std::move(entry);
  return *last_;
}

void CompiledGroup::RunOpByOp(TideOpRunContext* c, const char* why) {
  ++fallback_runs_;
  VLOG(2) << label_ << " runs op by op: " << why;
  const auto& attrs = c->op->attrs();
  const int32_t fallback = std::get<int32_t>(attrs.at("fallback_block"));
  c->executor->RunSubBlock(*c->block, fallback, c->scope);
  // Its temporaries were made by the ops; nothing else reads them.
  if (FLAGS_free_temporaries) {
    std::vector<Variable*> vars;
    for (const std::string& name : internal_)
      if (Variable* v = c->scope->FindVar(name)) vars.push_back(v);
    ReleaseTemporaries(vars);
  }
}

void CompiledGroup::Run(TideOpRunContext* c) {
  const ArgBinding* x = c->op->FindInput("X");
  const ArgBinding* out = c->op->FindOutput("Out");
  static const ArgBinding kNone;
  if (!x) x = &kNone;
  if (!out) out = &kNone;
  std::vector<const LoDTensor*> inputs;
  for (size_t i = 0; i < x->vars.size(); ++i) {
    Variable* v = x->vars[i];
    // What the compiled function cannot take as it is (data elsewhere, a LoD): the ops' kernels
    // convert or carry it.
    if (!v || !v->IsType<LoDTensor>()) return RunOpByOp(c, "an input holds no tensor");
    const LoDTensor& t = v->Get<LoDTensor>();
    if (!t.initialized())
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, label_, ": input '", x->names[i],
                "' has no data (not fed, or not computed before the group runs)");
    if (t.place() != place_) return RunOpByOp(c, "an input is on another place");
    if (t.lod_levels() > 0) return RunOpByOp(c, "an input has a LoD");
    inputs.push_back(&t);
  }
  const Compiled& compiled = ForShapes(inputs, x->names, out->names);
  if (!compiled.fn) return RunOpByOp(c, "the device declined these shapes");
  std::vector<const TideTensor*> in;
  for (const LoDTensor* t : inputs) in.push_back(Wrap(t));
  std::vector<TideTensor*> outs;
  for (Variable* v : out->vars) outs.push_back(Wrap(v->GetMutable<LoDTensor>()));
  const TideDeviceCompiler& compiler = *device_->def.compiler;
  CallPlugin(
      [&] {
        return compiler.run_compiled(device_->def.self, compiled.fn, c->dctx->plugin_context(),
                                     in.data(), in.size(), outs.data(), outs.size());
      },
      [&] { return label_ + ": run_compiled"; }, device_->plugin_file);
  for (size_t i = 0; i < outs.size(); ++i) {
    const LoDTensor& t = *Unwrap(outs[i]);
    if (!t.initialized() || t.place() != place_)
      TIDE_FAIL(TIDE_INTERNAL, label_, ": run_compiled (", device_->plugin_file, ") left output '",
                out->names[i], "' ",
                t.initialized() ? "on " + t.place().ToString() : std::string("without data"),
                "; it must allocate every output on ", place_.ToString());
  }
  c->dctx->NoteLaunch(&launch_);
  if (FLAGS_sync_ops) c->dctx->Synchronize();  // a fault then names the group
  TouchOutputs(*c->op);
  ++compiled_runs_;
}

// --- The claim ---

namespace {

// One op of the block being rewritten (an original op, or a node in place of a group), with
// the names it reads and writes.
struct Item {
  std::shared_ptr<OpDesc> desc;
  std::set<std::string> reads, writes;
  int group = -1;  // the claimed group it belongs to
};

Item MakeItem(const OpDesc& op) {
  Item it;
  it.desc = std::make_shared<OpDesc>(op);
  for (const std::string& n : op.InputArgumentNames())
    if (n != kEmptyVarName) it.reads.insert(n);
  for (const std::string& n : op.OutputArgumentNames())
    if (n != kEmptyVarName) it.writes.insert(n);
  return it;
}

bool Meets(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& n : a)
    if (b.count(n)) return true;
  return false;
}

// b must run after a (a before it in the block): it reads what a writes, writes what a reads or
// writes.
bool Conflict(const Item& a, const Item& b) {
  return Meets(a.writes, b.reads) || Meets(a.writes, b.writes) || Meets(a.reads, b.writes);
}

struct Claim {
  std::vector<int32_t> ops;  // ascending
  std::string key;
};

class Claimer {
 public:
  Claimer(ProgramDesc* program, int block_idx, const DeviceInfo& device, const Place& place,
          const std::vector<std::string>& keep)
      : program_(program),
        block_(program->MutableBlock(static_cast<size_t>(block_idx))),
        block_idx_(block_idx),
        device_(device),
        place_(place),
        keep_(keep.begin(), keep.end()) {}

  std::vector<std::unique_ptr<CompiledGroup>> Run();

 private:
  std::vector<Claim> Ask();
  void Check(std::vector<Claim>* claims);
  [[noreturn]] void Refuse(size_t g, const Claim& c, const std::string& why) const;
  std::string GroupText(size_t g, const Claim& c) const;
  std::unique_ptr<CompiledGroup> Fuse(size_t g, const Claim& c);

  ProgramDesc* program_;
  BlockDesc* block_;
  int block_idx_;
  const DeviceInfo& device_;
  Place place_;
  std::set<std::string> keep_;
  std::shared_ptr<const std::string> bytes_;
  std::vector<OpDesc*> original_;    // the block's ops as the device saw them
  std::vector<Item> items_;          // the block as it is being rewritten
  std::set<std::string> elsewhere_;  // names other blocks use
};

std::string Claimer::GroupText(size_t g, const Claim& c) const {
  std::string ops;
  for (size_t i = 0; i < c.ops.size() && i < 8; ++i) {
    const int32_t k = c.ops[i];
    ops += (i ? ", #" : "#") + std::to_string(k) +
           (k >= 0 && static_cast<size_t>(k) < original_.size() ? " " + original_[k]->type()
                                                                : std::string());
  }
  if (c.ops.size() > 8) ops += StrCat(", ... (", c.ops.size(), " ops)");
  return StrCat("device '", device_.kind_name, "' (", device_.plugin_file, ") group ", g,
                " of block ", block_idx_, " (ops ", ops, ")");
}

void Claimer::Refuse(size_t g, const Claim& c, const std::string& why) const {
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, "get_capability of ", GroupText(g, c), " is refused: ", why);
}

std::vector<Claim> Claimer::Ask() {
  const TideDeviceCompiler& compiler = *device_.def.compiler;
  TideCapability cap{};
  cap.struct_size = TIDE_STRUCT_SIZE(TideCapability, release_arg);
  CallPlugin(
      [&] {
        return compiler.get_capability(device_.def.self, place_.device, bytes_->data(),
                                       bytes_->size(), block_idx_, &cap);
      },
      [&] {
        return StrCat("device '", device_.kind_name, "' get_capability on block ", block_idx_);
      },
      device_.plugin_file);
  std::vector<Claim> claims;
  std::string bad;
  for (size_t g = 0; g < cap.num_groups && cap.groups; ++g) {
    const TideSubgraphGroup& group = cap.groups[g];
    if (group.struct_size < TIDE_STRUCT_SIZE(TideSubgraphGroup, cache_key)) {
      bad = StrCat("group ", g, ": TideSubgraphGroup.struct_size ", group.struct_size,
                   " is too small");
      break;
    }
    Claim c;
    if (group.ops) c.ops.assign(group.ops, group.ops + group.num_ops);
    c.key = group.cache_key ? group.cache_key : "";
    claims.push_back(std::move(c));
  }
  compiler.release_capability(device_.def.self, &cap);
  if (!bad.empty())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "get_capability of device '", device_.kind_name, "' (",
              device_.plugin_file, ") on block ", block_idx_, ": ", bad);
  return claims;
}

void Claimer::Check(std::vector<Claim>* claims) {
  std::vector<int> owner(original_.size(), -1);
  for (size_t g = 0; g < claims->size(); ++g) {
    Claim& c = (*claims)[g];
    if (c.ops.empty()) Refuse(g, c, "it has no op");
    for (int32_t k : c.ops) {
      if (k < 0 || static_cast<size_t>(k) >= original_.size())
        Refuse(
            g, c,
            StrCat("op index ", k, " is out of range (the block has ", original_.size(), " ops)"));
      if (owner[k] == static_cast<int>(g)) Refuse(g, c, StrCat("op #", k, " is in it twice"));
      if (owner[k] >= 0) Refuse(g, c, StrCat("op #", k, " is also in group ", owner[k]));
      owner[k] = static_cast<int>(g);
      const OpDesc& op = *original_[k];
      const OpInfo* info = Registry::Global().FindOp(op.type());
      if (!info || info->run)
        Refuse(g, c,
               StrCat("op #", k, " '", op.type(),
                      "' has no kernels (feed, fetch, control flow): no device takes it"));
      if (HasBlockAttr(op.attrs()))
        Refuse(g, c, StrCat("op #", k, " '", op.type(), "' runs a sub-block"));
      for (const auto& list : {op.InputArgumentNames(), op.OutputArgumentNames()})
        for (const std::string& n : list) {
          if (n == kEmptyVarName) continue;
          const VarDesc* v = block_->FindVarRecursive(n);
          if (!v || v->type() != TIDE_VAR_LOD_TENSOR)
            Refuse(g, c,
                   StrCat("op #", k, " '", op.type(), "' uses variable '", n, "', ",
                          v ? "not a LoDTensor" : "which the program does not declare"));
        }
    }
    std::sort(c.ops.begin(), c.ops.end());
  }
}

std::unique_ptr<CompiledGroup> Claimer::Fuse(size_t g, const Claim& c) {
  // Where the group's ops are now, and what crosses its border.
  std::vector<size_t> at;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].group == static_cast<int>(g)) at.push_back(i);
  std::set<std::string> outside;  // names an op outside the group reads or writes
  for (const Item& it : items_)
    if (it.group != static_cast<int>(g)) {
      outside.insert(it.reads.begin(), it.reads.end());
      outside.insert(it.writes.begin(), it.writes.end());
    }
  std::vector<std::string> inputs, outputs, internal;
  std::set<std::string> written, seen_in, seen_out;
  for (size_t i : at) {
    for (const std::string& n : items_[i].reads)
      if (!written.count(n) && seen_in.insert(n).second) inputs.push_back(n);
    for (const std::string& n : items_[i].writes) written.insert(n);
  }
  for (size_t i : at)
    for (const std::string& n : items_[i].writes) {
      if (!seen_out.insert(n).second) continue;
      const VarDesc* v = block_->FindVar(n);  // a parent block's variable lives in its scope
      const bool read_outside =
          outside.count(n) || elsewhere_.count(n) || keep_.count(n) || !v || v->persistable();
      (read_outside ? outputs : internal).push_back(n);
    }
  // The ops between its first and last: those that depend on its results go after the node,
  // the others stay before it; one that does both would make a cycle.
  const size_t lo = at.front(), hi = at.back();
  std::vector<char> in_group(items_.size(), 0), after(items_.size(), 0), before(items_.size(), 0);
  for (size_t i : at) in_group[i] = 1;
  for (size_t k = lo + 1; k < hi; ++k) {
    if (in_group[k]) continue;
    for (size_t j = lo; j < k && !after[k]; ++j)
      if ((in_group[j] || after[j]) && Conflict(items_[j], items_[k])) after[k] = 1;
  }
  for (size_t k = hi; k-- > lo + 1;) {
    if (in_group[k]) continue;
    for (size_t j = hi; j > k && !before[k]; --j)
      if ((in_group[j] || before[j]) && Conflict(items_[k], items_[j])) before[k] = 1;
    if (before[k] && after[k])
      Refuse(g, c,
             StrCat("op '", items_[k].desc->type(),
                    "' outside it reads the group's results and feeds the group: fusing "
                    "would make a cycle"));
  }
  // The fallback: the group's ops, in a block of their own.
  BlockDesc* sub = program_->AppendBlock(*block_);
  for (size_t i : at) {
    OpDesc* op = sub->AppendOp();
    *op = *items_[i].desc;
    op->set_block(sub);
  }
  Item node;
  node.desc = std::make_shared<OpDesc>(
      kCompiledGroupOp, VariableNameMap{{"X", inputs}}, VariableNameMap{{"Out", outputs}},
      AttributeMap{{"group", static_cast<int32_t>(g)}, {"fallback_block", sub->idx()}});
  node.reads.insert(inputs.begin(), inputs.end());
  node.writes.insert(outputs.begin(), outputs.end());
  std::vector<Item> order;
  for (size_t k = 0; k < lo; ++k) order.push_back(std::move(items_[k]));
  for (size_t k = lo; k <= hi; ++k)
    if (!in_group[k] && !after[k]) order.push_back(std::move(items_[k]));
  order.push_back(std::move(node));
  for (size_t k = lo; k <= hi; ++k)
    if (after[k]) order.push_back(std::move(items_[k]));
  for (size_t k = hi + 1; k < items_.size(); ++k) order.push_back(std::move(items_[k]));
  items_ = std::move(order);
  return std::make_unique<CompiledGroup>(device_, place_, bytes_, block_idx_, c.ops, c.key,
                                         GroupText(g, c), std::move(internal));
}

std::vector<std::unique_ptr<CompiledGroup>> Claimer::Run() {
  bytes_ = std::make_shared<const std::string>(program_->Serialize());
  original_ = block_->AllOps();
  std::vector<Claim> claims = Ask();
  if (claims.empty()) return {};
  Check(&claims);
  for (const OpDesc* op : original_) items_.push_back(MakeItem(*op));
  for (size_t g = 0; g < claims.size(); ++g)
    for (int32_t k : claims[g].ops) items_[k].group = static_cast<int>(g);
  for (size_t b = 0; b < program_->Size(); ++b) {
    if (static_cast<int>(b) == block_idx_) continue;
    for (const OpDesc* op : program_->Block(b).AllOps())
      for (const auto& list : {op->InputArgumentNames(), op->OutputArgumentNames()})
        elsewhere_.insert(list.begin(), list.end());
  }
  std::vector<std::unique_ptr<CompiledGroup>> groups;
  for (size_t g = 0; g < claims.size(); ++g) groups.push_back(Fuse(g, claims[g]));
  block_->RemoveOps(0, block_->OpSize());
  for (const Item& it : items_) {
    OpDesc* op = block_->AppendOp();
    *op = *it.desc;
    op->set_block(block_);
  }
  for (const auto& group : groups) VLOG(1) << group->label() << " runs as one compiled node";
  return groups;
}

}  // namespace

std::vector<std::unique_ptr<CompiledGroup>> ClaimSubgraphs(ProgramDesc* program, int block_idx,
                                                           const Place& place,
                                                           const std::vector<std::string>& keep) {
  if (FLAGS_disable_device_compile) return {};
  const DeviceInfo* device = Registry::Global().FindDevice(place.kind);
  if (!device || !device->def.compiler) return {};
  return Claimer(program, block_idx, *device, place, keep).Run();
}

// --- The node's op ---

namespace {
TideStatus* CompiledGroupRun(TideOpRunContext* c, void*) {
  return StatusGuard([&] {
    const int32_t g = std::get<int32_t>(c->op->attrs().at("group"));
    // The executor makes this op for its own groups; a program that carries one names another's.
    TIDE_ENFORCE(g >= 0 && static_cast<size_t>(g) < c->block->num_compiled_groups(), "op '",
                 kCompiledGroupOp, "': attribute group = ", g,
                 " names no group this run compiled (", c->block->num_compiled_groups(),
                 "): the op is the executor's own, never part of a saved or hand-written program");
    c->block->compiled_group(static_cast<size_t>(g)).Run(c);
  });
}

void AddIntAttr(OpInfo* info, const char* name, const char* comment) {
  AttrSpec spec;
  spec.name = name;
  spec.type = TIDE_ATTR_INT;
  auto* a = info->proto.add_attrs();
  a->set_name(name);
  a->set_type(proto::INT);
  a->set_comment(comment);
  info->attrs.push_back(std::move(spec));
}
}  // namespace

void AddCompiledGroupOp(PluginStaging* staged) {
  auto info = std::make_unique<OpInfo>();
  info->type = kCompiledGroupOp;
  info->proto.set_type(kCompiledGroupOp);
  info->proto.set_comment(
      "A group of ops a device compiled into one function (made at Prepare, never in a saved "
      "program): runs the function, or the group's ops one by one where the device declined.");
  auto* x = info->proto.add_inputs();
  x->set_name("X");
  x->set_comment("what the group reads from outside");
  x->set_duplicable(true);
  x->set_dispensable(true);
  auto* out = info->proto.add_outputs();
  out->set_name("Out");
  out->set_comment("what is read outside the group");
  out->set_duplicable(true);
  out->set_dispensable(true);
  AddIntAttr(info.get(), "group", "the group's index in the prepared block");
  AddIntAttr(info.get(), "fallback_block", "the block holding the group's ops");
  info->no_gradient = true;
  info->run = CompiledGroupRun;
  info->plugin = "core";
  info->plugin_file = "(the Tide core)";
  staged->ops.push_back(std::move(info));
}

}  // namespace tide::core
