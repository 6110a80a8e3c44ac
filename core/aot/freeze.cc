// freeze.cc: see freeze.h. The executor prepares the block and runs it (the probes: at the
// variable dimension's upper end, its lower end and between, with memory kept), so every kernel,
// shape, transform and alias the plan records is one the executor chose or made.
#include "core/aot/freeze.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/aot/arena_plan.h"
#include "core/executor/executor.h"
#include "core/executor/feed_fetch.h"
#include "core/executor/release_plan.h"
#include "core/framework/tensor_util.h"
#include "core/ir/var_names.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// One probe: the variable dimension's value and, for LoD feeds, whether each row is a sequence
// (else the whole feed is one).
struct Probe {
  int64_t unit = 0;
  bool singleton_sequences = false;
};

// What a probe left in one variable.
struct Seen {
  bool initialized = false;
  std::vector<int64_t> dims;
  DataType dtype = TIDE_UNDEFINED;
  TideLayout layout = TIDE_LAYOUT_ANY;
  const Allocation* holder = nullptr;
  Place place;
  uint64_t bytes = 0;
};

// Ops the plan leaves out: feed and fetch (FrozenModel::Run takes and gives the tensors itself),
// and memory_optimize's delete_var (the arena's lifetimes free what it would).
bool LeftOut(const OpInstance& op) {
  return op.type() == "feed" || op.type() == "fetch" || op.type() == "delete_var";
}

// The feed's dims and LoD for `probe`, zero-filled on the host.
LoDTensor ProbeFeed(const FrozenFeed& f, const Probe& probe) {
  std::vector<int64_t> dims = f.dims;
  for (auto& d : dims)
    if (d < 0) d = probe.unit;
  LoDTensor t;
  t.Resize(DDim(dims));
  void* data = t.mutable_data(HostPlace(), f.dtype);
  std::memset(data, 0, static_cast<size_t>(t.numel()) * SizeOf(f.dtype));
  if (f.lod_level == 1) {
    const uint64_t rows = dims.empty() ? 0 : static_cast<uint64_t>(dims[0]);
    std::vector<uint64_t> offsets{0};
    if (probe.singleton_sequences)
      for (uint64_t r = 1; r <= rows; ++r) offsets.push_back(r);
    else
      offsets.push_back(rows);
    t.set_lod({offsets});
  }
  return t;
}

Seen Look(const Variable* v) {
  Seen s;
  if (!v || !v->IsType<LoDTensor>()) return s;
  const LoDTensor& t = v->Get<LoDTensor>();
  if (!t.initialized()) return s;
  s.initialized = true;
  s.dims = t.dims().ToVector();
  s.dtype = t.dtype();
  s.layout = t.layout();
  s.holder = t.holder().get();
  s.place = t.place();
  s.bytes = static_cast<uint64_t>(std::max<int64_t>(t.numel(), 0)) * SizeOf(t.dtype());
  return s;
}

// Whether the writers of a variable that several ops write all left it as the run ends with it
// (dims, data type, layout) at one probe: `after` holds what it held right after each writer.
// Then the plan's dims hold from its first writer on, and no writer needs its shapes inferred
// at run time.
bool WritersAgree(const std::vector<Seen>& after, const Seen& last, size_t n_writers) {
  if (after.size() != n_writers || !last.initialized) return false;
  for (const Seen& s : after)
    if (!s.initialized || s.dims != last.dims || s.dtype != last.dtype || s.layout != last.layout)
      return false;
  return true;
}

// The feeds as the plan declares them: dims with -1 for the variable dimension, whose range
// goes to `lower`/`upper`.
std::vector<FrozenFeed> DeclareFeeds(const PreparedBlock& p,
                                     const std::map<std::string, std::vector<DimRange>>& shapes,
                                     int64_t* lower, int64_t* upper) {
  const BlockDesc& block = p.program().Block(0);
  std::vector<FrozenFeed> feeds;
  bool ranged = false;
  for (const auto& [name, dims] : shapes)
    if (std::find(p.feed_names().begin(), p.feed_names().end(), name) == p.feed_names().end())
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "freeze: shapes names '", name,
                "', which is not a feed of the program");
  for (const std::string& name : p.feed_names()) {
    const VarDesc* v = block.FindVarRecursive(name);
    TIDE_ENFORCE(v, "freeze: feed '", name, "' is not declared in the program");
    FrozenFeed f;
    f.name = name;
    f.dtype = v->dtype();
    f.lod_level = v->lod_level();
    if (f.lod_level > 1)
      TIDE_FAIL(TIDE_UNIMPLEMENTED, "freeze: feed '", name, "' has LoD level ", f.lod_level,
                "; a frozen plan takes feeds of LoD level 0 or 1");
    auto it = shapes.find(name);
    if (it != shapes.end()) {
      for (const DimRange& d : it->second) {
        TIDE_ENFORCE(d.lower >= 0 && d.lower <= d.upper, "freeze: feed '", name,
                     "' declares a dimension with range [", d.lower, ", ", d.upper,
                     "]: expected 0 <= lower <= upper");
        if (d.lower == d.upper) {
          f.dims.push_back(d.upper);
          continue;
        }
        if (ranged && (d.lower != *lower || d.upper != *upper))
          TIDE_FAIL(TIDE_INVALID_ARGUMENT, "freeze: feed '", name, "' declares the range [",
                    d.lower, ", ", d.upper, "], another feed [", *lower, ", ", *upper,
                    "]: a plan has one variable dimension (the batch), one range for all feeds");
        ranged = true;
        *lower = d.lower;
        *upper = d.upper;
        f.dims.push_back(-1);
      }
    } else {
      for (int64_t d : v->shape())
        if (d < 0)
          TIDE_FAIL(TIDE_INVALID_ARGUMENT, "freeze: feed '", name, "' is declared ", v->ToString(),
                    ": give its dims (or a range for the batch) in shapes");
      f.dims = v->shape();
    }
    feeds.push_back(std::move(f));
  }
  if (!ranged) *lower = *upper = 0;
  return feeds;
}

// The parameters the kernel ops use, copied to the host from `scope` (before any probe runs).
std::vector<FrozenParam> SnapshotParams(const PreparedBlock& p, Scope* scope) {
  const BlockDesc& block = p.program().Block(0);
  std::set<std::string> names;
  for (size_t i = 0; i < p.num_ops(); ++i) {
    const OpInstance& op = p.op(i);
    if (LeftOut(op)) continue;
    for (const auto* list : {&op.inputs(), &op.outputs()})
      for (const ArgBinding& b : *list)
        for (const std::string& n : b.names) {
          const VarDesc* v = block.FindVarRecursive(n);
          if (v && v->persistable() && v->type() == TIDE_VAR_LOD_TENSOR) names.insert(n);
        }
  }
  std::vector<FrozenParam> params;
  for (const std::string& n : names) {
    const Variable* var = scope->FindVar(n);
    if (!var || !var->IsType<LoDTensor>() || !var->Get<LoDTensor>().initialized())
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "freeze: parameter '", n,
                "' holds no tensor in the scope: run the startup program or load the model "
                "into the scope first");
    LoDTensor host;
    TensorCopySync(var->Get<LoDTensor>(), HostPlace(), &host);
    FrozenParam fp;
    fp.name = n;
    fp.dtype = host.dtype();
    fp.dims = host.dims().ToVector();
    fp.lod = host.lod();
    fp.bytes.assign(static_cast<const char*>(host.data()),
                    static_cast<size_t>(host.numel()) * SizeOf(host.dtype()));
    params.push_back(std::move(fp));
  }
  return params;
}

// Puts the snapshot's values back into `scope`: the probes ran on zeros, and an op that updates a
// parameter (batch_norm's running statistics outside is_test) must not leave that in the caller's
// scope.
void RestoreParams(const std::vector<FrozenParam>& params, Scope* scope) {
  for (const FrozenParam& p : params) {
    LoDTensor host;
    host.Resize(DDim(p.dims));
    std::memcpy(host.mutable_data(HostPlace(), p.dtype), p.bytes.data(), p.bytes.size());
    host.set_lod(p.lod);
    LoDTensor* t = scope->FindVar(p.name)->GetMutable<LoDTensor>();
    const Place at = t->place();
    TensorCopySync(host, at, t);
  }
}

}  // namespace

FrozenPlan FreezeProgram(const ProgramDesc& program, const std::vector<std::string>& feeds,
                         const std::vector<std::string>& fetches, const Place& place,
                         const std::map<std::string, std::vector<DimRange>>& shapes, Scope* scope) {
  TIDE_ENFORCE(scope != nullptr, "freeze needs the scope that holds the parameters");
  Executor exec(place);
  std::unique_ptr<PreparedBlock> p = exec.Prepare(program, 0, feeds, fetches);
  const BlockDesc& block = p->program().Block(0);
  for (size_t i = 0; i < p->num_ops(); ++i) {
    const OpInstance& op = p->op(i);
    if (HasBlockAttr(op.attrs()) || (op.info().run && !LeftOut(op)))
      TIDE_FAIL(TIDE_UNIMPLEMENTED, "freeze: ", op.label(),
                HasBlockAttr(op.attrs()) ? " runs a sub-block" : " runs without a kernel",
                ": a frozen plan runs kernels in a fixed order, so control flow (and other ops "
                "that run themselves) is refused (docs/aot.md)");
  }

  FrozenPlan plan;
  plan.place_kind = place.kind_name();
  plan.feeds = DeclareFeeds(*p, shapes, &plan.lower, &plan.upper);
  plan.fetches = p->fetch_names();
  plan.params = SnapshotParams(*p, scope);
  if (const DeviceInfo* dev = Registry::Global().FindDevice(place.kind))
    plan.alignment = std::max<uint64_t>(plan.alignment, dev->def.alignment);
  const bool lod_feeds = std::any_of(plan.feeds.begin(), plan.feeds.end(),
                                     [](const FrozenFeed& f) { return f.lod_level > 0; });

  // The probes: the upper end first (its kernels, transforms and holders are the plan's).
  std::vector<Probe> probes{{plan.upper, false}};
  if (lod_feeds) probes.push_back({plan.upper, true});
  if (plan.lower < plan.upper) probes.push_back({plan.lower, false});
  const int64_t mid = plan.lower + (plan.upper - plan.lower) / 2;
  if (mid != plan.lower && mid != plan.upper) probes.push_back({mid, false});

  // What each kernel op left in each variable it wrote, per probe: for the variables several ops
  // write (an op that writes its input in place, as the inference transpiler's residual
  // convolutions do), whether the writers agree.
  std::vector<std::map<std::string, std::vector<Seen>>> after_writer(probes.size());
  size_t probe = 0;
  p->ObserveOps([&](size_t i) {
    if (LeftOut(p->op(i))) return;
    for (const ArgBinding& b : p->op(i).outputs())
      for (size_t j = 0; j < b.names.size() && j < b.vars.size(); ++j)
        if (b.names[j] != kEmptyVarName) after_writer[probe][b.names[j]].push_back(Look(b.vars[j]));
  });

  // Every variable the ops are bound to, by name.
  std::map<std::string, const Variable*> bound;
  std::vector<std::map<std::string, Seen>> seen(probes.size());
  p->KeepTemporaries();  // through the probes: the holders show which outputs alias which
  for (size_t k = 0; k < probes.size(); ++k) {
    std::vector<LoDTensor> in;
    for (const FrozenFeed& f : plan.feeds) in.push_back(ProbeFeed(f, probes[k]));
    probe = k;
    exec.Run(*p, scope, in);
    for (size_t i = 0; i < p->num_ops(); ++i)
      for (const auto* list : {&p->op(i).inputs(), &p->op(i).outputs()})
        for (const ArgBinding& b : *list)
          for (size_t j = 0; j < b.vars.size(); ++j)
            if (b.vars[j]) bound[b.names[j]] = b.vars[j];
    for (const auto& [name, var] : bound) seen[k][name] = Look(var);
  }
  p->ObserveOps(nullptr);
  RestoreParams(plan.params, scope);

  // The kernel ops, and who writes each variable.
  std::map<std::string, std::vector<size_t>> writers;  // by index into plan.ops
  std::map<std::string, size_t> first_write;           // by op index in the block
  std::set<std::string> feed_names(p->feed_names().begin(), p->feed_names().end());
  for (size_t i = 0; i < p->num_ops(); ++i) {
    const OpInstance& op = p->op(i);
    if (LeftOut(op)) continue;
    const KernelEntry* k = op.kernel();
    TIDE_ENFORCE(k, "freeze: ", op.label(), " ran no kernel in the probe runs");
    const OpDesc& desc = *block.Op(i);
    FrozenOp fo;
    fo.index = static_cast<uint32_t>(i);
    fo.type = op.type();
    fo.inputs = desc.inputs();
    fo.outputs = desc.outputs();
    fo.attrs = op.attrs();
    fo.kernel = {PlaceKindName(k->key.place_kind),
                 LibraryName(k->key.library),
                 k->key.dtype,
                 k->key.layout,
                 op.kernel_data_type(),
                 k->plugin,
                 k->plugin_file};
    for (const ArgBinding& b : op.inputs()) {
      for (size_t j = 0; j < b.names.size(); ++j) {
        const std::string& n = b.names[j];
        const VarDesc* v = block.FindVarRecursive(n);
        if (n == kEmptyVarName || feed_names.count(n) || (v && v->persistable())) continue;
        if (!first_write.count(n))
          TIDE_FAIL(TIDE_FAILED_PRECONDITION, "freeze: ", op.label(), " input '", b.param,
                    "' reads '", n,
                    "', which no earlier op writes and which is neither a feed nor a parameter: "
                    "a frozen run carries nothing from one run to the next");
        if (j < b.transforms.size() && !b.transforms[j].last_plan.empty())
          fo.transforms.push_back(
              StrCat("input '", b.param, "' ('", n, "'): ", b.transforms[j].last_plan));
      }
    }
    for (const ArgBinding& b : op.outputs())
      for (const std::string& n : b.names) {
        if (n == kEmptyVarName) continue;
        writers[n].push_back(plan.ops.size());
        first_write.emplace(n, i);
      }
    plan.ops.push_back(std::move(fo));
  }

  // Liveness: a temporary lives from its first writer through the op the release plan frees it
  // after (to the end when the plan keeps it: fetch targets).
  const size_t n_ops = p->num_ops();
  std::map<std::string, size_t> last_use;
  const auto releases = PlanReleases(p->program(), 0, p->fetch_names());
  for (size_t i = 0; i < releases.size(); ++i)
    for (const std::string& n : releases[i]) last_use[n] = i;

  // Holders the probe's tensors did not get from an op of their own: the feeds' and the
  // parameters'; an output sharing one (a reshape viewing its input) has no slot of its own.
  const std::map<std::string, Seen>& top = seen[0];
  std::map<const Allocation*, std::string> owner;
  for (const auto& [name, s] : top)
    if (s.holder && (feed_names.count(name) || !writers.count(name))) owner.emplace(s.holder, "");

  std::vector<std::string> order;  // the written variables, by first writer
  for (const auto& [name, at] : first_write) order.push_back(name);
  std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return first_write[a] != first_write[b] ? first_write[a] < first_write[b] : a < b;
  });
  std::vector<ArenaRequest> requests;
  std::vector<size_t> request_var;  // index into plan.vars
  std::map<std::string, size_t> request_of;
  std::map<std::string, size_t> var_index;

  // Every variable the kernel ops name gets an entry; written temporaries get their shapes.
  std::set<std::string> named;
  for (const FrozenOp& op : plan.ops)
    for (const auto* m : {&op.inputs, &op.outputs})
      for (const auto& [param, names] : *m) named.insert(names.begin(), names.end());
  named.insert(plan.fetches.begin(), plan.fetches.end());
  named.erase(kEmptyVarName);
  for (const std::string& name : named) {
    const VarDesc* v = block.FindVarRecursive(name);
    TIDE_ENFORCE(v, "freeze: variable '", name, "' is not declared in the program");
    FrozenVar fv;
    fv.name = name;
    fv.type = v->type();
    fv.dtype = v->dtype();
    fv.persistable = v->persistable();
    fv.zero_dim = v->zero_dim();
    fv.lod_level = v->lod_level();
    var_index[name] = plan.vars.size();
    plan.vars.push_back(std::move(fv));
  }

  for (const std::string& name : order) {
    if (!var_index.count(name)) continue;
    FrozenVar& fv = plan.vars[var_index[name]];
    auto it = top.find(name);
    if (fv.persistable || feed_names.count(name) || it == top.end() || !it->second.initialized)
      continue;
    const Seen& s = it->second;
    fv.dtype = s.dtype;
    fv.layout = s.layout;
    fv.dims = s.dims;
    fv.per_unit.assign(s.dims.size(), 0);
    // Linear in the variable dimension? Fit on the first probe at another value, check on all.
    bool linear = true;
    size_t fit = 1;
    while (fit < probes.size() && probes[fit].unit == probes[0].unit) ++fit;
    for (size_t k = 1; k < probes.size() && linear; ++k) {
      const Seen& o = seen[k][name];
      const int64_t du = probes[k].unit - probes[0].unit;
      linear = o.initialized && o.dims.size() == s.dims.size();
      for (size_t d = 0; linear && d < s.dims.size(); ++d) {
        const int64_t delta = o.dims[d] - s.dims[d];
        if (k == fit) {
          linear = delta % du == 0 && delta / du >= 0;  // memory never shrinks as it grows
          fv.per_unit[d] = delta / du;
        }
        linear = linear && delta == fv.per_unit[d] * du;
      }
    }
    // Several writers: each must leave the dims the plan records, at every probe (so, as for
    // any temporary, at every batch of the range: they are linear), else each infers its own.
    bool writers_agree = true;
    for (size_t k = 0; k < probes.size() && writers_agree && writers[name].size() > 1; ++k)
      writers_agree = WritersAgree(after_writer[k][name], seen[k][name], writers[name].size());
    if (!linear || lod_feeds || !writers_agree)
      for (size_t w : writers[name]) plan.ops[w].infer_at_run = true;
    uint64_t bytes = 0;
    for (size_t k = 0; k < probes.size(); ++k) bytes = std::max(bytes, seen[k][name].bytes);
    if (s.place != place) continue;  // another place's kernel made it: that kernel allocates
    auto own = owner.find(s.holder);
    if (own != owner.end()) {  // a view of an earlier variable's memory: that one lives longer
      if (!own->second.empty()) {
        size_t r = request_of[own->second];
        const size_t last = last_use.count(name) ? last_use[name] : n_ops - 1;
        requests[r].last = std::max(requests[r].last, last);
      }
      continue;
    }
    owner.emplace(s.holder, name);
    request_of[name] = requests.size();
    requests.push_back(
        {bytes, first_write[name], last_use.count(name) ? last_use[name] : n_ops - 1});
    request_var.push_back(var_index[name]);
  }

  const ArenaLayout layout = PlanArena(requests, plan.alignment);
  for (size_t r = 0; r < requests.size(); ++r) {
    FrozenVar& fv = plan.vars[request_var[r]];
    fv.offset = static_cast<int64_t>(layout.offsets[r]);
    fv.bytes = requests[r].bytes;
  }
  plan.arena_bytes = layout.bytes;
  return plan;
}

}  // namespace tide::core
