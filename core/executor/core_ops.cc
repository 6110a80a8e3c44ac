// core_ops.cc: the core's own operators. feed and fetch (Fluid's feed_op / fetch_op) move tensors
// between the executor's feed/fetch lists and the program's variables with the core's own types,
// so a run's inputs and outputs never pass through a plugin; delete_var (inserted by
// tide.memory_optimize) lets go of variables the rest of the run no longer reads.
#include "core/executor/core_ops.h"

#include <memory>
#include <string>

#include "core/executor/data_transform.h"
#include "core/executor/device_compile.h"
#include "core/executor/executor.h"
#include "core/executor/feed_fetch.h"
#include "core/executor/op_instance.h"
#include "core/framework/tensor_util.h"
#include "core/framework/variable.h"
#include "core/ir/attribute.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// The most fetch targets one run may have: a larger `col` is a corrupt program, refused before
// the fetch list grows to it.
constexpr int32_t kMaxFetchColumns = 1 << 16;

Variable* Lookup(const TideOpRunContext* c, const char* op, const std::string& name) {
  Variable* v = c->scope->FindVar(name);
  TIDE_ENFORCE(v, "op '", op, "': variable '", name, "' is not in the scope");
  return v;
}

const std::string& Arg(const ArgBinding* b, const char* op, const char* param) {
  TIDE_ENFORCE(b && b->names.size() == 1, "op '", op, "' needs exactly one '", param, "' variable");
  return b->names[0];
}

int32_t Col(const TideOpRunContext* c) {
  auto it = c->op->attrs().find("col");
  return it != c->op->attrs().end() && std::holds_alternative<int32_t>(it->second)
             ? std::get<int32_t>(it->second)
             : 0;
}

std::vector<LoDTensor>* ListOf(Variable* v, const char* op, const std::string& name) {
  std::vector<LoDTensor>* list =
      v->IsInitialized() ? v->GetTensorList() : v->GetMutable<LoDTensorArray>();
  TIDE_ENFORCE(list, "op '", op, "': variable '", name, "' holds ", VarTypeName(v->type()),
               ", not a feed or fetch list");
  return list;
}

// Out = feed[col], on the place its readers run on (FeedPlace): shares the memory when it is
// already there.
TideStatus* FeedRun(TideOpRunContext* c, void*) {
  return StatusGuard([&] {
    const int32_t col = Col(c);
    const std::string& list_name = Arg(c->op->FindInput("X"), "feed", "X");
    const std::vector<LoDTensor>& list = *ListOf(Lookup(c, "feed", list_name), "feed", list_name);
    TIDE_ENFORCE(col >= 0 && static_cast<size_t>(col) < list.size(), "op 'feed': column ", col,
                 " is past the ", list.size(), " fed tensor(s)");
    const LoDTensor& src = list[col];
    const std::string& out_name = Arg(c->op->FindOutput("Out"), "feed", "Out");
    LoDTensor* dst = Lookup(c, "feed", out_name)->GetMutable<LoDTensor>();
    TIDE_ENFORCE(dst, "op 'feed': variable '", out_name, "' does not hold a LoDTensor");
    const Place place = FeedPlace(*c->block, out_name, c->dctx->place());
    if (src.place() == place) {
      dst->ShareDataWith(src);
      dst->set_lod(src.lod());
    } else {
      TensorUpload(src, place, dst, c->dctx);  // on the copy stream where the device has one
    }
  });
}

// Whether the fetch hands X's own host memory to the caller (lent: Allocation::lent) instead of a
// copy: a temporary of the run (not persistable: the next run's writers take fresh memory, an
// optimizer's in-place update of a parameter would copy it anyway), in a plain layout, not shared
// where writes go unseen (a fed numpy array).
bool LendsFetched(const TideOpRunContext* c, const Variable* var, const LoDTensor& src) {
  return c->block && c->block->FetchesTemporary(var) && src.place() == HostPlace() &&
         !NeedsLayoutTransform(src.layout(), TIDE_LAYOUT_ANY) &&
         src.holder()->content_version() != 0;
}

// fetch[col] = X on the host: X's own memory, lent (LendsFetched), or a copy, from the host copy
// a fallback op's input conversion made this run when it is still current, so the tensor is not
// copied down twice. A device's tensor comes down on its copy-out stream where it has one, in
// place when the run returns (Executor::Run).
TideStatus* FetchRun(TideOpRunContext* c, void*) {
  return StatusGuard([&] {
    const int32_t col = Col(c);
    TIDE_ENFORCE(col >= 0 && col < kMaxFetchColumns, "op 'fetch': column ", col, " is outside [0, ",
                 kMaxFetchColumns, ")");
    const std::string& name = Arg(c->op->FindInput("X"), "fetch", "X");
    Variable* var = Lookup(c, "fetch", name);
    // An is_sparse lookup's gradient: say so, and where its rows are.
    TIDE_ENFORCE(!var->IsType<SelectedRows>(), "op 'fetch': variable '", name,
                 "' holds SelectedRows (a sparse gradient, e.g. an is_sparse lookup's), fetch "
                 "takes LoDTensors: read it from the scope (a persistable variable's "
                 "get_selected_rows()) or set the lookup's is_sparse to False");
    TIDE_ENFORCE(var->IsType<LoDTensor>(), "op 'fetch': variable '", name,
                 "' does not hold a LoDTensor");
    const LoDTensor& src = var->Get<LoDTensor>();
    TIDE_ENFORCE(src.initialized(), "op 'fetch': variable '", name, "' holds no data");
    const std::string& list_name = Arg(c->op->FindOutput("Out"), "fetch", "Out");
    std::vector<LoDTensor>& list = *ListOf(Lookup(c, "fetch", list_name), "fetch", list_name);
    if (list.size() <= static_cast<size_t>(col)) list.resize(col + 1);
    if (LendsFetched(c, var, src)) {
      src.holder()->Lend();
      list[col].ShareDataWith(src);
      list[col].set_lod(src.lod());
      return;
    }
    const LoDTensor* from = &src;
    if (src.place() != HostPlace())
      if (const LoDTensor* copy = CurrentCopyOf(*c->block, src, HostPlace())) from = copy;
    if (from->place() != HostPlace())  // on the copy-out stream where there is one
      TensorDownload(*from, &list[col], &c->block->downloads());
    else
      TensorCopySync(*from, HostPlace(), &list[col]);
  });
}

// Drops the data of every X variable (a tensor keeps its dims; memory shared with another
// variable stays alive through that one).
TideStatus* DeleteVarRun(TideOpRunContext* c, void*) {
  return StatusGuard([&] {
    const ArgBinding* b = c->op->FindInput("X");
    if (!b) return;
    for (const std::string& name : b->names) {
      Variable* v = c->scope->FindVar(name);
      if (!v || !v->IsInitialized()) continue;
      if (v->IsType<LoDTensor>())
        v->GetMutable<LoDTensor>()->Clear();
      else if (v->IsType<LoDTensorArray>())
        v->GetMutable<LoDTensorArray>()->clear();
    }
  });
}

std::unique_ptr<OpInfo> ListOp(const char* type, const char* comment, const char* x,
                               const char* out, const char* col, TideOpRunFn run) {
  auto info = std::make_unique<OpInfo>();
  info->type = type;
  info->proto.set_type(type);
  info->proto.set_comment(comment);
  auto* in = info->proto.add_inputs();
  in->set_name("X");
  in->set_comment(x);
  auto* o = info->proto.add_outputs();
  o->set_name("Out");
  o->set_comment(out);
  AttrSpec spec;
  spec.name = "col";
  spec.type = TIDE_ATTR_INT;
  spec.has_default = true;
  spec.default_value = int32_t(0);
  auto* a = info->proto.add_attrs();
  a->set_name("col");
  a->set_type(proto::INT);
  a->set_comment(col);
  AttrToProto("col", spec.default_value, a->mutable_default_value());
  info->attrs.push_back(std::move(spec));
  info->no_gradient = true;
  info->run = run;
  info->plugin = "core";
  info->plugin_file = "(the Tide core)";
  return info;
}

}  // namespace

void RegisterCoreOps(Registry& registry) {
  PluginStaging staged;
  staged.ops.push_back(ListOp("feed", "Copies column `col` of the feed list X into Out.",
                              "the executor's feed list", "the fed variable",
                              "position in the feed list", FeedRun));
  staged.ops.push_back(ListOp("fetch",
                              "Copies X to the host, into column `col` of the fetch list Out.",
                              "the variable to fetch", "the executor's fetch list",
                              "position in the fetch list", FetchRun));
  auto del = std::make_unique<OpInfo>();
  del->type = kDeleteVarOp;
  del->proto.set_type(kDeleteVarOp);
  del->proto.set_comment(
      "Frees the data of the X variables (tide.memory_optimize inserts it after their last use).");
  auto* x = del->proto.add_inputs();
  x->set_name("X");
  x->set_comment("variables to free");
  x->set_duplicable(true);
  del->no_gradient = true;
  del->run = DeleteVarRun;
  del->plugin = "core";
  del->plugin_file = "(the Tide core)";
  staged.ops.push_back(std::move(del));
  AddCompiledGroupOp(&staged);
  registry.Commit(std::move(staged));
}

}  // namespace tide::core
