// registry.cc: lookups and the all-or-nothing commit of a plugin's registrations.
#include "core/registry/registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "core/platform/enforce.h"
#include "core/platform/place.h"

namespace tide::core {

const proto::OpProto::Var* OpInfo::FindInput(const std::string& param) const {
  for (const auto& v : proto.inputs())
    if (v.name() == param) return &v;
  return nullptr;
}

const proto::OpProto::Var* OpInfo::FindOutput(const std::string& param) const {
  for (const auto& v : proto.outputs())
    if (v.name() == param) return &v;
  return nullptr;
}

Registry& Registry::Global() {
  static auto* r = new Registry;  // never destroyed: plugins' callbacks outlive static teardown
  return *r;
}

std::string NotInitializedHint() {
  return Registry::Global().initialized() ? ""
                                          : "; tide::core::Initialize() (core/host/initialize.h) "
                                            "has not been called: it loads the "
                                            "plugins";
}

const OpInfo* Registry::FindOp(const std::string& type) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = ops_.find(type);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpInfo& Registry::GetOp(const std::string& type) const {
  const OpInfo* info = FindOp(type);
  if (!info)
    TIDE_FAIL(TIDE_NOT_FOUND, "op '", type, "' is not registered: no loaded plugin provides it (",
              NumOps(),
              " op(s) from loaded plugins; see `tide-plugins` for what loaded and what failed)",
              NotInitializedHint());
  return *info;
}

const KernelEntry* Registry::FindKernel(const std::string& op_type, const OpKernelType& key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = kernels_.find(op_type);
  if (it == kernels_.end()) return nullptr;
  auto k = it->second.find(key);
  return k == it->second.end() ? nullptr : k->second.get();
}

std::vector<const KernelEntry*> Registry::Kernels(const std::string& op_type) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<const KernelEntry*> out;
  auto it = kernels_.find(op_type);
  if (it != kernels_.end())
    for (const auto& kv : it->second) out.push_back(kv.second.get());
  std::sort(out.begin(), out.end(), [](const KernelEntry* a, const KernelEntry* b) {
    return a->key.ToString() < b->key.ToString();
  });
  return out;
}

const DeviceInfo* Registry::FindDevice(int32_t kind) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = devices_.find(kind);
  return it == devices_.end() ? nullptr : it->second.get();
}

const TransformEntry* Registry::FindLayoutTransform(int32_t kind, TideLayout from,
                                                    TideLayout to) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = layout_transforms_.find({kind, from, to});
  return it == layout_transforms_.end() ? nullptr : it->second.get();
}

const TransformEntry* Registry::FindCast(int32_t kind, DataType from, DataType to) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = casts_.find({kind, from, to});
  return it == casts_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Registry::OpTypes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& kv : ops_) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<const KernelEntry*> Registry::AllKernels() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<const KernelEntry*> out;
  for (const auto& op : kernels_)
    for (const auto& kv : op.second) out.push_back(kv.second.get());
  return out;
}

std::vector<std::string> OrphanKernelWarnings(const std::string& plugin_file) {
  const Registry& registry = Registry::Global();
  std::vector<std::string> out;
  for (const auto* k : registry.AllKernels()) {
    if (!plugin_file.empty() && k->plugin_file != plugin_file) continue;
    const std::string kernel =
        "kernel " + k->op_type + " " + k->key.ToString() + " (" + k->plugin_file + "): ";
    if (!registry.FindOp(k->op_type))
      out.push_back(kernel + "no loaded plugin defines op '" + k->op_type + "'");
    else if (!registry.FindDevice(k->key.place_kind))  // a misspelt kind, or a missing device
      out.push_back(kernel + "no loaded device plugin provides place kind '" +
                    PlaceKindName(k->key.place_kind) + "'");
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<const DeviceInfo*> Registry::AllDevices() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<const DeviceInfo*> out;
  for (const auto& kv : devices_) out.push_back(kv.second.get());
  return out;
}

std::vector<const ProgramPassEntry*> Registry::ProgramPasses() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<const ProgramPassEntry*> out;
  for (const auto& p : program_passes_) out.push_back(p.get());
  return out;
}

void Registry::AddLibrary(const LibraryInfo& lib) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const LibraryInfo& l : libraries_) {
    if (l.name != lib.name) continue;
    TIDE_ENFORCE(l.op_attr == lib.op_attr && l.flag == lib.flag, "library '", lib.name,
                 "' registered by ", lib.plugin, " with attribute '", lib.op_attr, "' and flag '",
                 lib.flag, "', but ", l.plugin, " registered it with '", l.op_attr, "' and '",
                 l.flag, "'");
    return;
  }
  libraries_.push_back(lib);
}

std::vector<LibraryInfo> Registry::Libraries() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return libraries_;
}

bool Registry::IsLibraryAttr(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (const LibraryInfo& l : libraries_)
    if (!l.op_attr.empty() && l.op_attr == name) return true;
  return false;
}

size_t Registry::NumOps() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return ops_.size();
}

size_t Registry::NumKernels() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  size_t n = 0;
  for (const auto& kv : kernels_) n += kv.second.size();
  return n;
}

size_t Registry::NumDevices() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return devices_.size();
}

std::string LayoutTransformName(const TransformEntry& t) {
  return PlaceKindName(t.place_kind) + ": " + LayoutName(static_cast<TideLayout>(t.from)) + " -> " +
         LayoutName(static_cast<TideLayout>(t.to));
}

std::string CastName(const TransformEntry& t) {
  return PlaceKindName(t.place_kind) + ": " + DataTypeName(static_cast<DataType>(t.from)) + " -> " +
         DataTypeName(static_cast<DataType>(t.to));
}

void Registry::Retain(PluginStaging&& leftover) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  retained_.push_back(std::move(leftover));
}

namespace {
std::string SchemaBytes(const proto::OpProto& p) {
  std::string s;
  p.SerializeToString(&s);
  return s;
}

// A kernel's host inputs (TideKernelDef.host_inputs) are inputs its op declares: checked once both
// are known, whichever plugin registers last.
void CheckHostInputs(const OpInfo& op, const KernelEntry& k) {
  for (const std::string& p : k.host_inputs) {
    if (op.FindInput(p)) continue;
    std::string inputs;
    for (const auto& v : op.proto.inputs()) inputs += (inputs.empty() ? "" : ", ") + v.name();
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "kernel ", k.op_type, " ", k.key.ToString(), " of plugin '",
              k.plugin, "' (", k.plugin_file, ") declares host input '", p, "', which op '",
              op.type, "' (", op.plugin_file, ") does not have; its inputs: ", inputs);
  }
}
}  // namespace

CommitSummary Registry::Commit(PluginStaging&& staged) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  // Validate everything first: a conflict must leave the tables untouched.
  std::set<std::string> new_ops;
  std::vector<bool> op_is_new;
  for (const auto& op : staged.ops) {
    if (!new_ops.insert(op->type).second)
      TIDE_FAIL(TIDE_ALREADY_EXISTS, "op '", op->type, "' is registered twice by this plugin");
    auto it = ops_.find(op->type);
    if (it == ops_.end()) {
      op_is_new.push_back(true);
      continue;
    }
    if (SchemaBytes(it->second->proto) != SchemaBytes(op->proto))
      TIDE_FAIL(TIDE_ALREADY_EXISTS, "op '", op->type, "' is already registered by ",
                it->second->plugin_file, " with a different schema");
    op_is_new.push_back(false);  // the same schema again: a no-op
  }
  std::vector<std::pair<std::string, OpKernelType>> seen;
  std::vector<bool> kernel_overrides;
  for (const auto& k : staged.kernels) {
    for (const auto& s : seen)
      if (s.first == k->op_type && s.second == k->key)
        TIDE_FAIL(TIDE_ALREADY_EXISTS, "kernel ", k->op_type, " ", k->key.ToString(),
                  " is registered twice by this plugin");
    seen.emplace_back(k->op_type, k->key);
    bool override = false;
    auto op_it = kernels_.find(k->op_type);
    if (op_it != kernels_.end()) {
      auto it = op_it->second.find(k->key);
      if (it != op_it->second.end()) {
        if (k->priority <= it->second->priority)
          TIDE_FAIL(TIDE_ALREADY_EXISTS, "kernel ", k->op_type, " ", k->key.ToString(),
                    " is already registered by ", it->second->plugin_file, " (priority ",
                    it->second->priority, "); register with a higher priority to override it");
        override = true;
      }
    }
    kernel_overrides.push_back(override);
    const OpInfo* op = nullptr;
    for (const auto& o : staged.ops)
      if (o->type == k->op_type) op = o.get();
    if (auto it = ops_.find(k->op_type); !op && it != ops_.end()) op = it->second.get();
    if (op) CheckHostInputs(*op, *k);
  }
  for (const auto& op : staged.ops)  // kernels an earlier plugin registered before the op
    if (auto it = kernels_.find(op->type); it != kernels_.end())
      for (const auto& kernel : it->second) CheckHostInputs(*op, *kernel.second);
  for (const auto& d : staged.devices) {
    auto it = devices_.find(d->kind);
    if (it != devices_.end())
      TIDE_FAIL(TIDE_ALREADY_EXISTS, "device kind '", d->kind_name, "' is already provided by ",
                it->second->plugin_file);
  }
  std::set<int32_t> kinds;
  for (const auto& d : staged.devices)
    if (!kinds.insert(d->kind).second)
      TIDE_FAIL(TIDE_ALREADY_EXISTS, "device kind '", d->kind_name,
                "' is registered twice by this plugin");

  auto check_transforms = [](const auto& staged_list, const auto& table, const char* what,
                             auto name_of) {
    std::set<std::tuple<int32_t, int32_t, int32_t>> seen;
    for (const auto& t : staged_list) {
      auto key = std::make_tuple(t->place_kind, t->from, t->to);
      auto it = table.find(key);
      if (it != table.end() || !seen.insert(key).second)
        TIDE_FAIL(TIDE_ALREADY_EXISTS, what, " ", name_of(*t), " is already registered",
                  it != table.end() ? " by " + it->second->plugin_file
                                    : std::string(" twice by this plugin"));
    }
  };
  check_transforms(staged.layout_transforms, layout_transforms_, "layout transform",
                   LayoutTransformName);
  check_transforms(staged.casts, casts_, "data-type cast", CastName);
  std::set<std::string> pass_names;
  for (const auto& p : program_passes_) pass_names.insert(p->name);
  for (const auto& p : staged.program_passes)
    if (!pass_names.insert(p->name).second)
      TIDE_FAIL(TIDE_ALREADY_EXISTS, "program pass '", p->name, "' is already registered");

  // Commit.
  CommitSummary summary;
  for (size_t i = 0; i < staged.ops.size(); ++i) {
    summary.ops.push_back(staged.ops[i]->type);
    if (op_is_new[i]) {
      ops_[staged.ops[i]->type] = std::move(staged.ops[i]);
      continue;
    }
    // The schemas match, but shape inference and the grad maker are code: the first one stays.
    const OpInfo& first = *ops_.at(staged.ops[i]->type);
    summary.warnings.push_back(StrCat("op '", first.type, "' is also defined by ",
                                      first.plugin_file,
                                      " with the same schema: its shape inference and gradient "
                                      "are used, this plugin's are not"));
  }
  for (size_t i = 0; i < staged.kernels.size(); ++i) {
    auto& k = staged.kernels[i];
    summary.kernels.push_back(k->op_type + " " + k->key.ToString());
    auto& slot = kernels_[k->op_type][k->key];
    if (kernel_overrides[i]) {
      LOG(WARNING) << "kernel " << k->op_type << " " << k->key.ToString() << " from "
                   << k->plugin_file << " (priority " << k->priority << ") overrides the one from "
                   << slot->plugin_file << " (priority " << slot->priority << ")";
      overridden_.push_back(std::move(slot));
    }
    slot = std::move(k);
  }
  for (auto& d : staged.devices) {
    summary.devices.push_back(d->kind_name);
    devices_[d->kind] = std::move(d);
  }
  for (auto& t : staged.layout_transforms) {
    summary.transforms.push_back(LayoutTransformName(*t));
    layout_transforms_[{t->place_kind, t->from, t->to}] = std::move(t);
  }
  for (auto& t : staged.casts) {
    summary.transforms.push_back(CastName(*t));
    casts_[{t->place_kind, t->from, t->to}] = std::move(t);
  }
  for (auto& p : staged.program_passes) {
    summary.program_passes.push_back(p->name);
    program_passes_.push_back(std::move(p));
  }
  return summary;
}

}  // namespace tide::core
