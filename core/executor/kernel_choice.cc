// kernel_choice.cc: which kernel an op runs (Fluid's kernel-type inference): the run's place,
// the data type, the library the op asks for, a float32 kernel for float16/bfloat16 data that
// has none of its own, and a fallback to another place's kernel.
#include "core/executor/kernel_choice.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <mutex>
#include <set>

#include "core/device/device_context.h"
#include "core/executor/op_instance.h"
#include "core/ir/block_desc.h"
#include "core/platform/flags.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// Logs a fallback to another place once per op type and place pair.
void LogFallbackOnce(const OpInstance& op, const Place& from, const Place& to) {
  static std::mutex mu;
  static std::set<std::string> logged;
  std::lock_guard<std::mutex> lock(mu);
  if (logged.insert(op.type() + "@" + from.kind_name()).second)
    LOG(WARNING) << "op '" << op.type() << "' has no kernel on " << from.kind_name()
                 << "; running its " << to.kind_name()
                 << " kernel, with its inputs and outputs copied (logged once per op type)";
}

// The data type whose kernel runs `dt`'s data when `dt` has none: float16 and bfloat16 compute
// in float32 (the inputs widened, the outputs rounded back: data_transform.h, kernel_outputs.h).
// TIDE_UNDEFINED for the other types, which have no such stand-in.
DataType WidenedType(DataType dt) { return IsLowPrecision(dt) ? TIDE_FP32 : TIDE_UNDEFINED; }

// Logs a float16/bfloat16 op running a float32 kernel, once per op type, data type and place.
void LogWidenedOnce(const OpInstance& op, DataType dt, const KernelEntry& k, const Place& at) {
  static std::mutex mu;
  static std::set<std::string> logged;
  std::lock_guard<std::mutex> lock(mu);
  if (logged.insert(StrCat(op.type(), "@", DataTypeName(dt), "@", at.kind_name())).second)
    LOG(WARNING) << "op '" << op.type() << "' has no " << DataTypeName(dt) << " kernel on "
                 << at.kind_name() << "; running its " << k.key.ToString() << " kernel from "
                 << k.plugin << ", its " << DataTypeName(dt) << " inputs widened to "
                 << DataTypeName(k.key.dtype) << " and the outputs the program declares "
                 << DataTypeName(dt) << " rounded back (logged once per op type)";
}

const KernelEntry* FirstWhere(const std::vector<const KernelEntry*>& all,
                              const std::function<bool(const KernelEntry&)>& pred) {
  for (const KernelEntry* e : all)
    if (pred(*e)) return e;
  return nullptr;
}

// Logs a kernel's refusal once per op type and kernel.
void LogDeclineOnce(const OpInstance& op, const KernelEntry& k, const std::string& why,
                    const KernelEntry& next) {
  static std::mutex mu;
  static std::set<std::string> logged;
  std::lock_guard<std::mutex> lock(mu);
  if (logged.insert(op.type() + "@" + k.key.ToString()).second)
    LOG(WARNING) << "op '" << op.type() << "': kernel " << k.key.ToString() << " from " << k.plugin
                 << " declined (" << why << "); running " << next.key.ToString() << " from "
                 << next.plugin << " instead (logged once per op type and kernel)";
}

// The library an op asks for: its "library" attribute, or a registered library whose bool
// attribute the op sets or whose flag is on; 0 (plain) otherwise.
int32_t RequestedLibrary(const OpInstance& op) {
  const TideAttrValue* lib = op.attr_views().Find("library");
  if (lib && lib->type == TIDE_ATTR_STRING && lib->s[0]) return LibraryId(lib->s);
  for (const LibraryInfo& l : Registry::Global().Libraries()) {
    const TideAttrValue* a = l.op_attr.empty() ? nullptr : op.attr_views().Find(l.op_attr.c_str());
    std::string flag;
    if ((a && a->type == TIDE_ATTR_BOOLEAN && a->i) ||
        (!l.flag.empty() && GetFlag(l.flag, &flag) && flag == "true"))
      return LibraryId(l.name);
  }
  return 0;
}

// The data type op's kernel goes by now: its data-type attribute, else what its data-type input
// holds: its first variable's, passing over SelectedRows that list no rows (Fluid's sum takes the
// first with rows: an empty sparse gradient may have no value); TIDE_UNDEFINED when none holds
// data.
DataType KernelDataType(const OpInstance& op) {
  DataType dt = op.dtype_from_attr();
  if (dt != TIDE_UNDEFINED || op.dtype_input() < 0) return dt;
  const auto& vars = op.inputs()[op.dtype_input()].vars;
  for (const Variable* v : vars) {
    if (v && v->IsType<LoDTensor>()) return v->Get<LoDTensor>().dtype();
    if (v && v->IsType<SelectedRows>() && !v->Get<SelectedRows>().rows().empty())
      return v->Get<SelectedRows>().value().dtype();
  }
  const Variable* v = vars.empty() ? nullptr : vars[0];
  if (v && v->IsType<SelectedRows>()) dt = v->Get<SelectedRows>().value().dtype();
  return dt;
}

}  // namespace

void KernelChoice::Prepare(OpInstance& op, const BlockDesc& block, const Place& place) {
  op.library_ = RequestedLibrary(op);
  DataType dt = op.dtype_from_attr();
  if (dt == TIDE_UNDEFINED && op.dtype_input() >= 0) {
    const VarDesc* v = block.FindVarRecursive(op.inputs()[op.dtype_input()].names[0]);
    if (v && (v->type() == TIDE_VAR_LOD_TENSOR || v->type() == TIDE_VAR_SELECTED_ROWS))
      dt = v->dtype();
  }
  if (dt != TIDE_UNDEFINED) ChooseFor(op, dt, place);  // Run checks it against the data
}

bool KernelChoice::Choose(OpInstance& op, const Place& place) {
  return ChooseFor(op, KernelDataType(op), place);
}

bool KernelChoice::ChooseFor(OpInstance& op, DataType dt, const Place& place) {
  if (op.kernel_ && op.kernel_data_type_ == dt) return false;
  if (dt == TIDE_UNDEFINED)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, op.label(),
              ": cannot tell which data type's kernel to run: "
              "its data-type input holds no data");
  Registry& reg = Registry::Global();
  std::vector<const KernelEntry*> all = reg.Kernels(op.type());
  const int32_t kind = place.kind;
  OpKernelType want{kind, dt, TIDE_LAYOUT_ANY, op.library_};
  auto usable = [&](const KernelEntry* e) {
    return e && std::find(op.declined_.begin(), op.declined_.end(), e) == op.declined_.end()
               ? e
               : nullptr;
  };
  auto first_usable = [&](const std::function<bool(const KernelEntry&)>& pred) {
    return FirstWhere(all, [&](const KernelEntry& e) { return pred(e) && usable(&e); });
  };
  // The place's kernel for data type `d`: the library's when it has one (with its own, opaque,
  // layout), else the plain one, else any other.
  auto on_place = [&](DataType d) {
    const KernelEntry* e = nullptr;
    if (op.library_)
      e = first_usable([&](const KernelEntry& c) {
        return c.key.place_kind == kind && c.key.dtype == d && c.key.library == op.library_;
      });
    if (!e) e = usable(reg.FindKernel(op.type(), {kind, d, TIDE_LAYOUT_ANY, 0}));
    if (!e)
      e = first_usable(
          [&](const KernelEntry& c) { return c.key.place_kind == kind && c.key.dtype == d; });
    return e;
  };
  // Another place's kernel for `d`, the host's first; only a place some device plugin provides
  // (a kernel for a kind none does never runs: tide-plugins warns of it).
  auto elsewhere = [&](DataType d) {
    const int32_t host = PlaceKindId(kHostPlaceKind);
    const KernelEntry* e = usable(reg.FindKernel(op.type(), {host, d, TIDE_LAYOUT_ANY, 0}));
    if (!e)
      e = first_usable([&](const KernelEntry& c) {
        return c.key.dtype == d && reg.FindDevice(c.key.place_kind);
      });
    return e;
  };
  // The place's own kernel before another place's, and, for float16/bfloat16, the place's
  // float32 kernel before another place's float16/bfloat16 one: a cast is cheaper than a copy.
  const DataType wide = WidenedType(dt);
  const KernelEntry* k = on_place(dt);
  if (!k && wide != TIDE_UNDEFINED) k = on_place(wide);
  Place kernel_place = place;
  if (!k) {  // another place's kernel, with copies in and out
    k = elsewhere(dt);
    if (!k && wide != TIDE_UNDEFINED) k = elsewhere(wide);
    if (k) {
      kernel_place = Place(k->key.place_kind, 0);
      if (FLAGS_strict_kernel_placement)
        TIDE_FAIL(TIDE_NOT_FOUND, op.label(), ": no kernel for ", want.ToString(),
                  " and strict kernel "
                  "placement forbids running its ",
                  k->key.ToString(), " kernel instead");
      if (op.declined_.empty())
        LogFallbackOnce(op, place, kernel_place);  // else DeclineKernel logs
    }
  }
  if (!k) {
    std::string have;
    for (const KernelEntry* e : all)
      have += (have.empty() ? "" : ", ") + e->key.ToString() +
              (reg.FindDevice(e->key.place_kind) ? std::string()
                                                 : " (no loaded device plugin provides '" +
                                                       PlaceKindName(e->key.place_kind) + "')");
    TIDE_FAIL(TIDE_NOT_FOUND, op.label(), ": no kernel for ", want.ToString(),
              wide != TIDE_UNDEFINED ? StrCat(" (nor a ", DataTypeName(wide), " one to run it in)")
                                     : std::string(),
              " on any loaded place; registered: ",
              have.empty() ? "none (no loaded plugin provides kernels for this op)" : have);
  }
  if (k->key.dtype != dt) LogWidenedOnce(op, dt, *k, kernel_place);
  SetKernel(op, *k, dt, kernel_place);
  if (FLAGS_log_kernels)
    std::cerr << "tide: " << op.label() << " -> kernel " << k->key.ToString() << " from "
              << k->plugin
              << (kernel_place != place ? " (fallback to " + kernel_place.ToString() + ")"
                                        : std::string())
              << (k->key.dtype != dt ? StrCat(" (", DataTypeName(dt), " data, widened)")
                                     : std::string())
              << "\n";
  return true;
}

void KernelChoice::Decline(OpInstance& op, const Error& why, const Place& place) {
  const KernelEntry* declined = op.kernel_;
  op.declined_.push_back(declined);
  op.kernel_ = nullptr;
  generation_.fetch_add(1, std::memory_order_relaxed);
  try {
    Choose(op, place);
  } catch (const Error& none) {
    TIDE_FAIL(why.code(), why.what(), "; no other kernel can run it: ", none.what());
  }
  LogDeclineOnce(op, *declined, why.what(), *op.kernel_);
}

void KernelChoice::Fix(OpInstance& op, const KernelEntry& kernel, DataType data_type,
                       const Place& kernel_place) {
  op.library_ = kernel.key.library;
  SetKernel(op, kernel, data_type, kernel_place);
}

void KernelChoice::SetKernel(OpInstance& op, const KernelEntry& kernel, DataType data_type,
                             const Place& kernel_place) {
  op.kernel_ = &kernel;
  generation_.fetch_add(1, std::memory_order_relaxed);
  op.kernel_key_ = kernel.key;
  op.kernel_data_type_ = data_type;
  op.kernel_place_ = kernel_place;
  op.kernel_dctx_ = DeviceContextPool::Global().Get(kernel_place);
}

}  // namespace tide::core
