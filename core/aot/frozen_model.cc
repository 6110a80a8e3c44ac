// frozen_model.cc: see frozen_model.h.
#include "core/aot/frozen_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>

#include "core/executor/aliased_inputs.h"
#include "core/executor/data_transform.h"
#include "core/executor/kernel_choice.h"
#include "core/executor/kernel_outputs.h"
#include "core/executor/runtime_infer_shape.h"
#include "core/framework/tensor_util.h"
#include "core/memory/memory.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// The kernel `op` of `plan` names, from the loaded plugins.
const KernelEntry& ResolveKernel(const FrozenOp& op, const std::string& path) {
  const Registry& reg = Registry::Global();
  const FrozenKernel& k = op.kernel;
  const std::string what =
      StrCat("frozen plan '", path, "': op '", op.type, "' (#", op.index, ") runs kernel ",
             k.ToString(), ", from plugin '", k.plugin, "' (", k.plugin_file, ") when frozen");
  if (!reg.FindOp(op.type))
    TIDE_FAIL(TIDE_NOT_FOUND, what, "; no loaded plugin registers op '", op.type,
              "' (is that plugin on the plugin path?)");
  const OpKernelType key{PlaceKindId(k.place_kind), k.dtype, k.layout, LibraryId(k.library)};
  const KernelEntry* e = reg.FindKernel(op.type, key);
  if (!e)
    TIDE_FAIL(TIDE_NOT_FOUND, what, "; no loaded plugin registers that kernel (is ", k.plugin_file,
              " loaded?)");
  return *e;
}

// The kernel entry of `op`'s directly called kernel (a compiled model's, FrozenOp::direct): its
// frozen key, the function model.cc holds.
std::unique_ptr<KernelEntry> DirectKernel(const FrozenOp& op, const std::string& path) {
  const FrozenKernel& k = op.kernel;
  auto e = std::make_unique<KernelEntry>();
  e->op_type = op.type;
  e->key = OpKernelType{PlaceKindId(k.place_kind), k.dtype, k.layout, LibraryId(k.library)};
  e->compute = op.direct;
  e->plugin = "compiled model";
  e->plugin_file = path;
  return e;
}

// An op's info from the plan alone, for a directly called kernel whose op no loaded plugin
// registers (the op pack is not loaded): the plan's arguments and attributes as declared, which
// the freeze checked against the real op.
std::unique_ptr<OpInfo> DirectOpInfo(const FrozenOp& op) {
  auto info = std::make_unique<OpInfo>();
  info->type = op.type;
  info->proto.set_type(op.type);
  for (const auto& [param, names] : op.inputs) {
    proto::OpProto::Var* v = info->proto.add_inputs();
    v->set_name(param);
    v->set_duplicable(true);
    v->set_dispensable(true);
  }
  for (const auto& [param, names] : op.outputs) {
    proto::OpProto::Var* v = info->proto.add_outputs();
    v->set_name(param);
    v->set_duplicable(true);
    v->set_dispensable(true);
  }
  for (const auto& [name, value] : op.attrs) info->attrs.push_back({name, AttrTypeOf(value)});
  info->plugin = "compiled model";
  return info;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<int64_t> DimsAt(const FrozenVar& v, int64_t unit, int64_t upper) {
  std::vector<int64_t> d = v.dims;
  for (size_t i = 0; i < d.size(); ++i) d[i] += v.per_unit[i] * (unit - upper);
  return d;
}

}  // namespace

std::unique_ptr<FrozenModel> FrozenModel::Load(const std::string& path, const Place& place) {
  TIDE_ENFORCE(Registry::Global().initialized(), "cannot load frozen plan '", path,
               "': the core is not started; call tide::core::Initialize() first");
  return FromPlan(ReadFrozenPlan(path), path, place);
}

std::unique_ptr<FrozenModel> FrozenModel::FromPlan(FrozenPlan plan, const std::string& source,
                                                   const Place& place) {
  TIDE_ENFORCE(Registry::Global().initialized(), "cannot load frozen plan '", source,
               "': the core is not started; call tide::core::Initialize() first");
  std::unique_ptr<FrozenModel> m(new FrozenModel());
  m->plan_ = std::move(plan);
  m->path_ = source;
  m->place_ = place;
  if (m->plan_.place_kind != place.kind_name())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "frozen plan '", source, "' was frozen for place kind '",
              m->plan_.place_kind, "'; cannot load it on ", place.ToString(),
              ": freeze the program for that place");
  m->dctx_ = DeviceContextPool::Global().Get(place);
  m->Build(source);
  return m;
}

// A captured run: the device's graph, the tensors' addresses it was recorded with, and every
// block it reads or writes, kept alive and in place until the graph goes.
struct FrozenModel::Graph {
  void* graph = nullptr;
  int64_t unit = -1;
  std::vector<std::pair<const LoDTensor*, const void*>> addresses;
  std::vector<AllocationPtr> kept;
};

FrozenModel::~FrozenModel() {
  try {
    DropGraph();
  } catch (const std::exception& e) {
    LOG(WARNING) << "frozen plan '" << path_ << "': releasing its captured graph: " << e.what();
  }
  ops_.clear();  // kernel states first, then the variables, then the arena they point into
  scope_.reset();
}

void FrozenModel::Build(const std::string& path) {
  // Every kernel first: a missing plugin is the likeliest failure, and names itself best here.
  std::vector<const KernelEntry*> kernels;
  for (const FrozenOp& op : plan_.ops) {
    if (op.direct) {
      direct_kernels_.push_back(DirectKernel(op, path));
      kernels.push_back(direct_kernels_.back().get());
    } else {
      kernels.push_back(&ResolveKernel(op, path));
    }
  }

  BlockDesc* block = program_.MutableBlock(0);
  for (const FrozenVar& v : plan_.vars) {
    VarDesc* d = block->Var(v.name);
    d->set_type(v.type);
    d->set_dtype(v.dtype);
    d->set_persistable(v.persistable);
    d->set_lod_level(v.lod_level);
    if (v.zero_dim) d->set_zero_dim();
  }
  scope_ = std::make_unique<Scope>();
  for (const FrozenVar& v : plan_.vars) scope_->Var(v.name)->InitByType(v.type);
  for (const FrozenFeed& f : plan_.feeds) {
    feed_names_.push_back(f.name);
    Variable* var = scope_->Var(f.name);
    var->InitByType(TIDE_VAR_LOD_TENSOR);
    feed_vars_.push_back(var);
  }
  feed_shared_.assign(feed_vars_.size(), false);
  for (const std::string& f : plan_.fetches) fetch_vars_.push_back(scope_->FindVar(f));

  for (FrozenParam& p : plan_.params) {
    const std::string_view bytes = p.data();
    LoDTensor view;  // the parameter where the file's bytes are, read in place on the host
    view.ResetHolder(
        plan_.file, p.dtype, DDim(p.dims),
        static_cast<size_t>(bytes.data() - static_cast<const char*>(plan_.file->ptr())));
    TIDE_ENFORCE(bytes.size() == static_cast<size_t>(view.numel()) * SizeOf(p.dtype),
                 "frozen plan '", path, "': parameter '", p.name, "' holds ", bytes.size(),
                 " bytes for dims ", view.dims().ToString());
    view.set_lod(p.lod);
    LoDTensor* param = scope_->Var(p.name)->GetMutable<LoDTensor>();
    if (place_ == HostPlace())
      *param = std::move(view);
    else
      TensorCopySync(view, place_, param, dctx_);
    p.view = {};
  }
  plan_.file.reset();  // held by the host parameters that view it, freed when elsewhere

  // The arena, once; each temporary's slot as a view into it that the kernel's mutable_data
  // finds big enough, so it writes there.
  arena_ = memory::AllocShared(place_, std::max<uint64_t>(plan_.arena_bytes, 1));
  char* base = static_cast<char*>(arena_->ptr());
  for (const FrozenVar& v : plan_.vars) {
    if (v.persistable || (v.dims.empty() && v.offset < 0)) continue;
    LoDTensor* t = scope_->FindVar(v.name)->GetMutable<LoDTensor>();
    if (v.offset >= 0) {
      auto slot = std::make_shared<Allocation>(base + v.offset, v.bytes, place_, nullptr);
      t->ResetHolder(std::move(slot), v.dtype, DDim(v.dims));
    } else {
      t->Resize(DDim(v.dims));
    }
    t->set_layout(v.layout);
    if (std::any_of(v.per_unit.begin(), v.per_unit.end(), [](int64_t u) { return u != 0; }))
      sized_.push_back({t, &v});
  }
  unit_ = plan_.upper;

  for (size_t i = 0; i < plan_.ops.size(); ++i) {
    const FrozenOp& fo = plan_.ops[i];
    OpDesc* d = block->AppendOp();
    d->set_type(fo.type);
    for (const auto& [param, names] : fo.inputs) d->SetInput(param, names);
    for (const auto& [param, names] : fo.outputs) d->SetOutput(param, names);
    *d->mutable_attrs() = fo.attrs;
    const OpInfo* info = nullptr;
    if (fo.direct && !Registry::Global().FindOp(fo.type)) {
      direct_infos_.push_back(DirectOpInfo(fo));
      info = direct_infos_.back().get();
    }
    ops_.push_back(std::make_unique<OpInstance>(*d, *block, 0, fo.index, info));
    OpInstance& op = *ops_.back();
    op.Bind(*scope_);
    const KernelEntry& k = *kernels[i];
    const Place kernel_place =
        k.key.place_kind == place_.kind ? place_ : Place(k.key.place_kind, 0);
    KernelChoice::Fix(op, k, fo.kernel.data_type, kernel_place);
    Step s;
    s.op = &op;
    s.kernel = &k;
    s.dctx = op.kernel_dctx();
    s.infer_at_run = fo.infer_at_run;
    // A kernel with host inputs: the plan's variables live on place_, so they go to the host.
    s.special = !fo.transforms.empty() || k.key.layout != TIDE_LAYOUT_ANY ||
                kernel_place != place_ || op.runs_widened() || !op.zero_dim_outputs().empty() ||
                !k.host_inputs.empty();
    touch_outputs_ = touch_outputs_ || !fo.transforms.empty();
    steps_.push_back(s);
  }
}

size_t FrozenModel::num_ops_inferring_shapes() const {
  return static_cast<size_t>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& s) { return s.infer_at_run; }));
}

void FrozenModel::SetFeeds(const std::vector<LoDTensor>& inputs) {
  TIDE_ENFORCE(inputs.size() == plan_.feeds.size(), "frozen plan '", path_, "' takes ",
               plan_.feeds.size(), " feed(s) (", Joined(feed_names_), "), given ", inputs.size());
  int64_t unit = -1;
  std::string unit_from;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FrozenFeed& f = plan_.feeds[i];
    const LoDTensor& t = inputs[i];
    TIDE_ENFORCE(t.initialized(), "feed '", f.name, "' holds no data");
    TIDE_ENFORCE(t.dtype() == f.dtype, "feed '", f.name, "' is ", DataTypeName(t.dtype()),
                 "; the plan was frozen for ", DataTypeName(f.dtype));
    const DDim& dims = t.dims();
    TIDE_ENFORCE(static_cast<size_t>(dims.size()) == f.dims.size(), "feed '", f.name, "' has dims ",
                 dims.ToString(), "; the plan was frozen for rank ", f.dims.size());
    for (size_t d = 0; d < f.dims.size(); ++d) {
      if (f.dims[d] >= 0) {
        TIDE_ENFORCE(dims[d] == f.dims[d], "feed '", f.name, "' dimension ", d, " is ", dims[d],
                     "; the plan was frozen for ", f.dims[d], " (dims ", dims.ToString(), ")");
        continue;
      }
      if (dims[d] < plan_.lower || dims[d] > plan_.upper)
        TIDE_FAIL(TIDE_OUT_OF_RANGE, "feed '", f.name, "' dimension ", d, " is ", dims[d],
                  ", outside the range [", plan_.lower, ", ", plan_.upper,
                  "] the plan was frozen for");
      if (unit >= 0 && dims[d] != unit)
        TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", f.name, "' dimension ", d, " is ", dims[d],
                  " but ", unit_from, " is ", unit,
                  ": the plan's variable dimensions are one (the batch)");
      unit = dims[d];
      unit_from = StrCat("feed '", f.name, "' dimension ", d);
    }
    // Either way: sequences given to a dense input would be read as plain rows, silently.
    TIDE_ENFORCE(t.lod_levels() == static_cast<size_t>(f.lod_level), "feed '", f.name, "' has ",
                 t.lod_levels(), " LoD level(s); the plan was frozen for ", f.lod_level,
                 f.lod_level ? "" : " (a dense input: its rows are not sequences)");
    if (f.lod_level > 0) {
      const std::string bad = CheckLoD(t.lod(), dims.size() ? dims[0] : 0);
      TIDE_ENFORCE(bad.empty(), "feed '", f.name, "': ", bad);
    }
    LoDTensor* var = feed_vars_[i]->GetMutable<LoDTensor>();
    if (feed_shared_[i]) *var = LoDTensor();  // never write into the caller's tensor
    feed_shared_[i] = t.place() == place_ && !capture_;
    if (feed_shared_[i]) {
      var->ShareDataWith(t);  // the caller's memory, read in place
      var->set_lod(t.lod());
    } else {
      TensorCopySync(t, place_, var, dctx_);  // into the model's own block while it fits
    }
  }
  if (unit >= 0 && unit != unit_) ResizeFor(unit);
}

void FrozenModel::ResizeFor(int64_t unit) {
  for (const Sized& s : sized_) s.tensor->Resize(DDim(DimsAt(*s.var, unit, plan_.upper)));
  unit_ = unit;
}

void FrozenModel::RunSpecial(Step& s) {
  OpInstance& op = *s.op;
  TransformCounts counts;
  TransformInputs(op, &counts);
  if (op.kernel_key().layout != TIDE_LAYOUT_OPAQUE) LabelOutputLayouts(op);
}

void FrozenModel::FinishSpecial(Step& s) {
  OpInstance& op = *s.op;
  if (op.runs_widened()) RoundWidenedOutputs(op);
  GiveDeclaredRankZero(op);
  if (op.kernel_place() != place_) ReturnPersistableOutputs(op, place_, dctx_);
}

std::string FrozenModel::CaptureBlocker() const {
  if (!dctx_->has_graphs())
    return StrCat("the device of ", place_.ToString(), " (", dctx_->device().plugin_file,
                  ") cannot capture and replay (it has no TideDeviceGraphs)");
  for (const FrozenFeed& f : plan_.feeds)
    if (f.lod_level > 0) return StrCat("feed '", f.name, "' carries LoD");
  for (const Step& s : steps_) {
    const std::string& op = s.op->label();
    if (s.infer_at_run) return op + " infers its shapes at run time";
    if (s.special)
      return StrCat(op, " runs kernel ", s.kernel->key.ToString(),
                    ", which needs the host around it (its inputs converted or copied, host "
                    "inputs, another place, widened data or 0-D outputs)");
  }
  return "";
}

void FrozenModel::EnableCapture(bool on) {
  if (on == capture_) return;
  DropGraph();
  warm_unit_ = -1;
  capture_ = on;
  capture_blocked_ = on ? CaptureBlocker() : "";
  if (!capture_blocked_.empty())
    LOG(INFO) << "frozen plan '" << path_ << "' on " << place_.ToString() << " " << capture_note();
}

std::string FrozenModel::capture_note() const {
  if (!capture_) return "";
  if (!capture_blocked_.empty()) return "runs op by op: " + capture_blocked_;
  return graph_ ? "captured" : "warming up";
}

void FrozenModel::DropGraph() {
  if (!graph_) return;
  std::unique_ptr<Graph> g = std::move(graph_);
  dctx_->Synchronize();  // its last launch done before the device lets it go
  dctx_->DestroyGraph(g->graph);
}

bool FrozenModel::GraphStillValid() const {
  if (graph_->unit != unit_) return false;
  for (const auto& [tensor, ptr] : graph_->addresses)
    if (tensor->data() != ptr) return false;
  return true;
}

bool FrozenModel::Capture() {
  auto g = std::make_unique<Graph>();
  g->unit = unit_;
  auto give_up = [&](const std::string& why) {
    capture_blocked_ = why;
    LOG(WARNING) << "frozen plan '" << path_ << "' on " << place_.ToString() << " "
                 << capture_note();
    return false;
  };
  dctx_->BeginCapture();
  try {
    RunSteps(&g->kept);
  } catch (const std::exception& e) {
    try {
      dctx_->DestroyGraph(dctx_->EndCapture());
    } catch (const std::exception&) {  // the device failed the capture itself: expected here
    }
    return give_up(StrCat("capturing its run failed: ", e.what()));
  }
  try {
    g->graph = dctx_->EndCapture();
  } catch (const std::exception& e) {
    return give_up(StrCat("the device could not record its run: ", e.what()));
  }
  // Every tensor the graph may touch stays where it is while the graph lives.
  for (const std::string& name : scope_->LocalVarNames()) {
    const Variable* v = scope_->FindVar(name);
    if (!v || !v->IsType<LoDTensor>()) continue;
    const LoDTensor& t = v->Get<LoDTensor>();
    if (!t.initialized()) continue;
    g->addresses.emplace_back(&t, t.data());
    g->kept.push_back(t.holder());
  }
  graph_ = std::move(g);
  return true;
}

void FrozenModel::RunSteps(std::vector<AllocationPtr>* kept) {
  for (size_t i = 0, n = steps_.size(); i < n; ++i) {
    Step& s = steps_[i];
    if (i + 1 < n) PrefetchBindings(*steps_[i + 1].op);
    OpInstance& op = *s.op;
    AliasedInputsGuard aliased(op);
    if (s.infer_at_run && !op.shape_cache().Unchanged(op.inputs(), op.outputs()))
      InferShapeAtRunTime(op);
    aliased.Separate();
    if (s.special) RunSpecial(s);
    const KernelEntry& k = *s.kernel;
    TideKernelContext ctx{&op, s.dctx, &k, {}};
    CallPlugin([&] { return k.compute(&ctx, k.user_data); },
               [&] { return op.label() + " kernel " + k.key.ToString(); }, k.plugin_file);
    if (kept)  // a captured kernel's scratch is read again by every replay
      for (AllocationPtr& t : ctx.temps) kept->push_back(std::move(t));
    if (touch_outputs_) TouchOutputs(op);
    if (s.special) FinishSpecial(s);
    if (s.infer_at_run) op.shape_cache().Remember();
  }
}

std::vector<LoDTensor> FrozenModel::Run(const std::vector<LoDTensor>& inputs) {
  SetFeeds(inputs);
  if (capture_ && capture_blocked_.empty()) {
    if (graph_ && !GraphStillValid()) DropGraph();  // another batch size, or a block moved
    if (!graph_ && warm_unit_ == unit_) Capture();
    if (graph_) {
      dctx_->LaunchGraph(graph_->graph);
      ++replays_;
      return Fetch();
    }
    warm_unit_ = unit_;  // this run, op by op, warms the kernels up for a capture at this size
  }
  RunSteps();
  return Fetch();
}

std::vector<LoDTensor> FrozenModel::Fetch() {
  std::vector<LoDTensor> out(fetch_vars_.size());
  for (size_t i = 0; i < fetch_vars_.size(); ++i) {
    const Variable* v = fetch_vars_[i];
    TIDE_ENFORCE(v && v->IsType<LoDTensor>() && v->Get<LoDTensor>().initialized(), "frozen plan '",
                 path_, "': fetch target '", plan_.fetches[i], "' holds no tensor after the run");
    TensorCopySync(v->Get<LoDTensor>(), HostPlace(), &out[i], dctx_);
    ToPlainLayout(&out[i]);
  }
  return out;
}

}  // namespace tide::core
