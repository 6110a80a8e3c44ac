// registrar.cc: converting a plugin's C registration records into staged core records, with
// every field checked (struct_size first) and every problem reported with the op or kernel name.
#include "core/plugin/registrar.h"

#include <glog/logging.h>

#include <cctype>
#include <cstring>
#include <set>

#include "core/platform/data_type.h"
#include "core/platform/flags.h"
#include "core/platform/place.h"
#include "core/platform/status.h"

namespace tide::core {
namespace {

std::string Str(const char* s) { return s ? s : ""; }

// Op names: letters, digits, '_' and '.', starting with a letter or '_'.
bool ValidName(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

void AddArgs(const std::string& op, const TideArgDef* args, size_t n, const char* side,
             google::protobuf::RepeatedPtrField<proto::OpProto::Var>* out) {
  std::set<std::string> seen;
  for (size_t i = 0; i < n; ++i) {
    const TideArgDef& a = args[i];
    TIDE_ENFORCE(a.struct_size >= TIDE_STRUCT_SIZE(TideArgDef, flags), "op '", op, "' ", side, " #",
                 i, ": struct_size ", a.struct_size, " is too small");
    std::string name = Str(a.name);
    TIDE_ENFORCE(!name.empty(), "op '", op, "' ", side, " #", i, " has no name");
    TIDE_ENFORCE(seen.insert(name).second, "op '", op, "' declares ", side, " '", name, "' twice");
    auto* v = out->Add();
    v->set_name(name);
    v->set_comment(Str(a.comment));
    v->set_duplicable(a.flags & TIDE_ARG_DUPLICABLE);
    v->set_dispensable(a.flags & TIDE_ARG_DISPENSABLE);
    v->set_intermediate(a.flags & TIDE_ARG_INTERMEDIATE);
  }
}

// TideOpDef.in_place / .views (`what`: "in-place pair", "view pair"): each pair's input and
// output must be the op's.
void AddPairs(const OpInfo& info, const TideInPlacePair* pairs, size_t n, const char* field,
              const char* what, std::vector<std::pair<std::string, std::string>>* out) {
  TIDE_ENFORCE(n == 0 || pairs, "op '", info.type, "': num_", field, " is ", n, " but ", field,
               " is null");
  for (size_t i = 0; i < n; ++i) {
    const std::string in = Str(pairs[i].input), out_param = Str(pairs[i].output);
    TIDE_ENFORCE(info.FindInput(in) && info.FindOutput(out_param), "op '", info.type, "' declares ",
                 what, " #", i, " (input '", in, "', output '", out_param, "'), but the op has no ",
                 info.FindInput(in) ? "output '" + out_param : "input '" + in, "'");
    out->emplace_back(in, out_param);
  }
}

}  // namespace

TideStatus* RegistrarAddOp(TideRegistrar* r, const TideOpDef* def) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def, "Registrar_AddOp: null argument");
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(TideOpDef, run_data),
                 "Registrar_AddOp: TideOpDef.struct_size ", def->struct_size,
                 " is smaller than ABI 1.0's");
    for (const void* data : {def->infer_shape_data, def->grad_maker_data, def->run_data})
      if (data) r->staged.callback_data.push_back(data);
    auto info = std::make_unique<OpInfo>();
    info->type = Str(def->type);
    TIDE_ENFORCE(ValidName(info->type), "invalid op type '", info->type,
                 "': use letters, digits, '_' and '.' (\"vendor.name\" outside Tide)");
    const std::string& op = info->type;
    info->proto.set_type(op);
    info->proto.set_comment(Str(def->comment));
    AddArgs(op, def->inputs, def->num_inputs, "input", info->proto.mutable_inputs());
    for (size_t i = 0; i < def->num_inputs; ++i)
      if (def->inputs[i].flags & TIDE_ARG_FLOAT32_PARAM)
        info->float32_params.push_back(Str(def->inputs[i].name));
    AddArgs(op, def->outputs, def->num_outputs, "output", info->proto.mutable_outputs());
    std::set<std::string> seen;
    for (size_t i = 0; i < def->num_attrs; ++i) {
      const TideAttrDef& a = def->attrs[i];
      TIDE_ENFORCE(a.struct_size >= TIDE_STRUCT_SIZE(TideAttrDef, check_data), "op '", op,
                   "' attribute #", i, ": struct_size ", a.struct_size, " is too small");
      AttrSpec spec;
      spec.name = Str(a.name);
      TIDE_ENFORCE(!spec.name.empty(), "op '", op, "' attribute #", i, " has no name");
      TIDE_ENFORCE(seen.insert(spec.name).second, "op '", op, "' declares attribute '", spec.name,
                   "' twice");
      const bool known_type =
          (a.type >= TIDE_ATTR_INT && a.type <= TIDE_ATTR_FLOAT64S) || a.type == TIDE_ATTR_FLOAT64;
      TIDE_ENFORCE(known_type, "op '", op, "' attribute '", spec.name, "' has unknown type ",
                   int(a.type));
      spec.type = a.type;
      spec.check = a.check;
      spec.check_data = a.check_data;
      auto* pa = info->proto.add_attrs();
      pa->set_name(spec.name);
      pa->set_type(static_cast<proto::AttrType>(a.type));
      pa->set_comment(Str(a.comment));
      if (a.default_value) {
        Attribute given = AttrFromC(*a.default_value);
        TIDE_ENFORCE(ConvertAttr(given, spec.type, &spec.default_value), "op '", op,
                     "' attribute '", spec.name, "' is declared ", AttrTypeName(spec.type),
                     " but its default is ", AttrTypeName(AttrTypeOf(given)));
        spec.has_default = true;
        AttrToProto(spec.name, spec.default_value, pa->mutable_default_value());
      }
      info->attrs.push_back(std::move(spec));
    }
    info->infer_shape = def->infer_shape;
    info->infer_shape_data = def->infer_shape_data;
    info->grad_maker = def->grad_maker;
    info->grad_maker_data = def->grad_maker_data;
    info->default_grad_op = Str(def->default_grad_op);
    info->kernel_dtype_source = Str(def->kernel_dtype_source);
    info->run = def->run;
    info->run_data = def->run_data;
    if (def->struct_size >= TIDE_STRUCT_SIZE(TideOpDef, no_gradient))
      info->no_gradient = def->no_gradient != 0;
    if (def->struct_size >= TIDE_STRUCT_SIZE(TideOpDef, num_in_place))
      AddPairs(*info, def->in_place, def->num_in_place, "in_place", "in-place pair",
               &info->in_place);
    if (def->struct_size >= TIDE_STRUCT_SIZE(TideOpDef, num_views))
      AddPairs(*info, def->views, def->num_views, "views", "view pair", &info->views);
    TIDE_ENFORCE(info->run || info->infer_shape, "op '", op,
                 "' has kernels but no shape inference: "
                 "give its schema InferShape(...) (its outputs would have no dims, and the error "
                 "would appear in the next op)");
    info->plugin = r->plugin;
    info->plugin_file = r->plugin_file;
    r->staged.ops.push_back(std::move(info));
  });
}

TideStatus* RegistrarAddKernel(TideRegistrar* r, const TideKernelDef* def) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def, "Registrar_AddKernel: null argument");
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(TideKernelDef, priority),
                 "Registrar_AddKernel: TideKernelDef.struct_size ", def->struct_size,
                 " is smaller than ABI 1.0's");
    auto k = std::make_unique<KernelEntry>();
    k->op_type = Str(def->op_type);
    TIDE_ENFORCE(ValidName(k->op_type), "kernel for invalid op type '", k->op_type, "'");
    std::string kind = Str(def->place_kind);
    TIDE_ENFORCE(!kind.empty(), "kernel of op '", k->op_type, "' has no place kind");
    TIDE_ENFORCE(IsValidDataType(def->dtype), "kernel of op '", k->op_type,
                 "' has unknown data type ", int(def->dtype));
    TIDE_ENFORCE(def->layout >= TIDE_LAYOUT_ANY && def->layout <= TIDE_LAYOUT_OPAQUE,
                 "kernel of op '", k->op_type, "' has unknown layout ", int(def->layout));
    TIDE_ENFORCE(def->compute != nullptr, "kernel of op '", k->op_type,
                 "' has no compute function");
    TIDE_ENFORCE(def->priority >= 0, "kernel of op '", k->op_type, "' has a negative priority");
    std::string lib = def->library && *def->library ? def->library : kPlainLibrary;
    k->key = OpKernelType{PlaceKindId(kind), def->dtype, def->layout, LibraryId(lib)};
    k->compute = def->compute;
    k->user_data = def->user_data;
    k->priority = def->priority;
    k->plugin = r->plugin;
    k->plugin_file = r->plugin_file;
    if (TIDE_HAS_FIELD(def, TideKernelDef, num_host_inputs) && def->num_host_inputs > 0) {
      TIDE_ENFORCE(def->host_inputs, "kernel ", k->op_type, " ", k->key.ToString(), " declares ",
                   def->num_host_inputs, " host input(s) but host_inputs is NULL");
      for (size_t i = 0; i < def->num_host_inputs; ++i) {
        const std::string name = Str(def->host_inputs[i]);
        TIDE_ENFORCE(!name.empty(), "kernel ", k->op_type, " ", k->key.ToString(), ": host input #",
                     i, " has no name");
        TIDE_ENFORCE(!k->ReadsOnHost(name), "kernel ", k->op_type, " ", k->key.ToString(),
                     " declares host input '", name, "' twice");
        k->host_inputs.push_back(name);
      }
    }
    r->staged.kernels.push_back(std::move(k));
  });
}

TideStatus* RegistrarAddLibrary(TideRegistrar* r, const TideLibraryDef* def) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def && def->name, "Registrar_AddLibrary: null argument");
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(TideLibraryDef, description),
                 "Registrar_AddLibrary: TideLibraryDef.struct_size ", def->struct_size,
                 " is too small");
    LibraryInfo lib{Str(def->name), Str(def->op_attr), Str(def->flag), r->plugin};
    for (const std::string* n : {&lib.name, &lib.op_attr, &lib.flag})
      TIDE_ENFORCE(n->empty() || ValidName(*n), "library '", lib.name, "': invalid name '", *n,
                   "'");
    TIDE_ENFORCE(!lib.name.empty() && lib.name != "plain", "a library cannot be named '", lib.name,
                 "'");
    if (!lib.flag.empty())
      DefineBoolFlag(lib.flag, def->description && def->description[0]
                                   ? def->description
                                   : "prefer " + lib.name + " kernels where the library has them");
    Registry::Global().AddLibrary(lib);
    LibraryId(lib.name);
  });
}

TideStatus* RegistrarAddDevice(TideRegistrar* r, const TideDeviceDef* def) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def, "Registrar_AddDevice: null argument");
    // Every field of TideDeviceDef is ABI 1.0's (optional entries are NULL, not absent).
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(TideDeviceDef, finalize),
                 "Registrar_AddDevice: TideDeviceDef.struct_size ", def->struct_size,
                 " is smaller than ABI 1.0's");
    auto d = std::make_unique<DeviceInfo>();
    d->kind_name = Str(def->kind);
    TIDE_ENFORCE(ValidName(d->kind_name), "invalid device kind '", d->kind_name, "'");
    std::memcpy(&d->def, def, std::min(def->struct_size, sizeof(TideDeviceDef)));
    const char* missing = !def->device_count      ? "device_count"
                          : !def->alloc           ? "alloc"
                          : !def->free            ? "free"
                          : !def->context_create  ? "context_create"
                          : !def->context_destroy ? "context_destroy"
                          : !def->synchronize     ? "synchronize"
                          : !def->copy            ? "copy"
                                                  : nullptr;
    TIDE_ENFORCE(!missing, "device '", d->kind_name, "' has no ", missing, " function");
    const TideDeviceDef& n = d->def;  // zero past the plugin's struct_size
    TIDE_ENFORCE(!n.host_alloc == !n.host_free, "device '", d->kind_name,
                 "' has only one of host_alloc and host_free; give both or neither");
    const int events = !!n.event_create + !!n.event_destroy + !!n.event_record + !!n.event_query +
                       !!n.event_synchronize + !!n.context_wait_event;
    TIDE_ENFORCE(events == 0 || events == 6, "device '", d->kind_name, "' has ", events,
                 " of the 6 event functions (event_create, event_destroy, event_record, "
                 "event_query, event_synchronize, context_wait_event); give all or none");
    TIDE_ENFORCE(!n.event_elapsed_ms || events == 6, "device '", d->kind_name,
                 "' has event_elapsed_ms but not the 6 event functions it times");
    TIDE_ENFORCE(!n.context_create_role || events == 6, "device '", d->kind_name,
                 "' has context_create_role but not the 6 event functions that order its "
                 "contexts");
    if (const TideDeviceTracer* t = n.tracer) {
      TIDE_ENFORCE(t->struct_size >= TIDE_STRUCT_SIZE(TideDeviceTracer, now_ns), "device '",
                   d->kind_name, "': TideDeviceTracer.struct_size ", t->struct_size,
                   " is smaller than ABI 1.0's");
      TIDE_ENFORCE(t->start && t->stop && t->collect && t->now_ns, "device '", d->kind_name,
                   "' has a tracer without all of start, stop, collect and now_ns");
    }
    if (const TideDeviceCompiler* c = n.compiler) {
      TIDE_ENFORCE(c->struct_size >= TIDE_STRUCT_SIZE(TideDeviceCompiler, release_compiled),
                   "device '", d->kind_name, "' (", r->plugin_file,
                   "): TideDeviceCompiler.struct_size ", c->struct_size, " is too small");
      TIDE_ENFORCE(c->get_capability && c->release_capability && c->compile && c->run_compiled &&
                       c->release_compiled,
                   "device '", d->kind_name, "' (", r->plugin_file,
                   ") has a compiler without all of get_capability, release_capability, compile, "
                   "run_compiled and release_compiled");
    }
    if (const TideDeviceGraphs* g = n.graphs) {
      TIDE_ENFORCE(g->struct_size >= TIDE_STRUCT_SIZE(TideDeviceGraphs, graph_destroy), "device '",
                   d->kind_name, "' (", r->plugin_file, "): TideDeviceGraphs.struct_size ",
                   g->struct_size, " is too small");
      TIDE_ENFORCE(g->capture_begin && g->capture_end && g->graph_launch && g->graph_destroy,
                   "device '", d->kind_name, "' (", r->plugin_file,
                   ") has graphs without all of capture_begin, capture_end, graph_launch and "
                   "graph_destroy");
    }
    // Newer contracts than ours are refused (we would not keep their rules); older ones the
    // core keeps working by synchronising as they need (DeviceContext::Copy, the allocator).
    TIDE_ENFORCE(n.contract <= TIDE_DEVICE_CONTRACT, "device '", d->kind_name, "' (",
                 r->plugin_file, ") declares device contract ", n.contract,
                 "; this core knows contracts 1 to ", TIDE_DEVICE_CONTRACT,
                 " (upgrade Tide, or build the plugin against this SDK)");
    d->contract = n.contract ? n.contract : 1;
    if (d->contract < TIDE_DEVICE_CONTRACT)
      LOG(WARNING) << "device '" << d->kind_name << "' (" << r->plugin_file << ") declares "
                   << (n.contract ? StrCat("device contract ", n.contract)
                                  : std::string("no device contract"))
                   << ": the core follows contract 1 for it (it synchronises the device after each "
                      "host-to-device copy and before each free; rebuild the plugin against this "
                      "SDK, contract "
                   << TIDE_DEVICE_CONTRACT << ", to overlap them)";
    d->def.kind = nullptr;  // the plugin's string; kind_name is ours
    d->kind = PlaceKindId(d->kind_name);
    // Its memory flags, before its first allocation.
    DefineDeviceKindFlags(d->kind_name, d->def.memory_fraction_default,
                          d->def.initial_memory_mb_default);
    d->plugin = r->plugin;
    d->plugin_file = r->plugin_file;
    r->staged.devices.push_back(std::move(d));
  });
}

namespace {
// Stages a layout transform or cast (same record shape): `check` validates from/to.
template <typename Def, typename Check>
TideStatus* AddTransform(TideRegistrar* r, const Def* def, const char* what,
                         std::vector<std::unique_ptr<TransformEntry>>* list, Check check) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def, what, ": null argument");
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(Def, user_data), what, ": struct_size ",
                 def->struct_size, " is smaller than ABI 1.0's");
    TIDE_ENFORCE(def->place_kind && *def->place_kind, what, " without a place kind");
    TIDE_ENFORCE(def->fn, what, " without a function");
    check(*def);
    auto t = std::make_unique<TransformEntry>();
    t->place_kind = PlaceKindId(def->place_kind);
    t->from = def->from;
    t->to = def->to;
    t->fn = def->fn;
    t->user_data = def->user_data;
    t->plugin = r->plugin;
    t->plugin_file = r->plugin_file;
    list->push_back(std::move(t));
  });
}
}  // namespace

TideStatus* RegistrarAddLayoutTransform(TideRegistrar* r, const TideLayoutTransformDef* def) {
  return AddTransform(r, def, "layout transform", r ? &r->staged.layout_transforms : nullptr,
                      [](const TideLayoutTransformDef& d) {
                        TIDE_ENFORCE(d.from != d.to, "layout transform from ", LayoutName(d.from),
                                     " to itself");
                        for (TideLayout l : {d.from, d.to})
                          TIDE_ENFORCE(l >= TIDE_LAYOUT_ANY && l <= TIDE_LAYOUT_OPAQUE,
                                       "layout transform with unknown layout ", int(l));
                      });
}

TideStatus* RegistrarAddDataTypeCast(TideRegistrar* r, const TideDataTypeCastDef* def) {
  return AddTransform(
      r, def, "data-type cast", r ? &r->staged.casts : nullptr, [](const TideDataTypeCastDef& d) {
        TIDE_ENFORCE(IsValidDataType(d.from) && IsValidDataType(d.to) && d.from != d.to,
                     "data-type cast between invalid or equal types ", int(d.from), " and ",
                     int(d.to));
      });
}

TideStatus* RegistrarAddProgramPass(TideRegistrar* r, const TideProgramPassDef* def) {
  return StatusGuard([&] {
    TIDE_ENFORCE(r && def, "Registrar_AddProgramPass: null argument");
    TIDE_ENFORCE(def->struct_size >= TIDE_STRUCT_SIZE(TideProgramPassDef, user_data),
                 "Registrar_AddProgramPass: TideProgramPassDef.struct_size ", def->struct_size,
                 " is too small");
    auto p = std::make_unique<ProgramPassEntry>();
    p->name = Str(def->name);
    TIDE_ENFORCE(ValidName(p->name), "invalid program pass name '", p->name, "'");
    TIDE_ENFORCE(def->run, "program pass '", p->name, "' has no function");
    if (def->place_kind && *def->place_kind) p->place_kind = PlaceKindId(def->place_kind);
    p->run = def->run;
    p->user_data = def->user_data;
    p->plugin = r->plugin;
    p->plugin_file = r->plugin_file;
    r->staged.program_passes.push_back(std::move(p));
  });
}

}  // namespace tide::core
