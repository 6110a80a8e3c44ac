// host_api.cc: the core functions behind TideHostApi. Each one is noexcept in effect: core
// errors become statuses (or safe defaults for the getters), never exceptions into plugin code.
#include "core/host/host_api.h"

#include <glog/logging.h>

#include <cstdlib>
#include <cstring>

#include "core/executor/executor.h"
#include "core/executor/kernel_outputs.h"
#include "core/executor/op_instance.h"
#include "core/framework/tensor_util.h"
#include "core/memory/memory.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/plugin/registrar.h"
#include "core/registry/param_errors.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// --- Status and logging ---
TideStatus* StatusCreate(TideCode code, const char* message) {
  return NewStatus(code, message ? message : "");
}
void StatusFree(TideStatus* s) { delete s; }
TideCode StatusCode(const TideStatus* s) { return s ? s->code : TIDE_OK; }
const char* StatusMessage(const TideStatus* s) { return s ? s->message.c_str() : ""; }

void Log(TideLogSeverity severity, const char* plugin, const char* message) {
  const char* who = plugin ? plugin : "plugin";
  switch (severity) {
    case TIDE_LOG_INFO:
      LOG(INFO) << "[" << who << "] " << message;
      break;
    case TIDE_LOG_WARNING:
      LOG(WARNING) << "[" << who << "] " << message;
      break;
    default:
      LOG(ERROR) << "[" << who << "] " << message;
      break;
  }
}

int64_t FlagGet(const char* name, char* value, size_t capacity) {
  std::string v;
  if (!name || !GetFlag(name, &v)) return -1;
  if (value && capacity) {
    size_t n = std::min(v.size(), capacity - 1);
    std::memcpy(value, v.data(), n);
    value[n] = '\0';
  }
  return static_cast<int64_t>(v.size());
}

// --- Places ---
int32_t PlaceKindIdC(const char* name) { return PlaceKindId(name ? name : ""); }
const char* PlaceKindNameC(int32_t kind) {
  const std::string& n = PlaceKindName(kind);
  return n == "?" ? nullptr : n.c_str();
}

// --- Tensors ---
TideDataType TensorDataType(const TideTensor* t) { return Unwrap(t)->dtype(); }
int32_t TensorRank(const TideTensor* t) { return Unwrap(t)->dims().size(); }
const int64_t* TensorDims(const TideTensor* t) { return Unwrap(t)->dims().data(); }
int64_t TensorNumel(const TideTensor* t) { return Unwrap(t)->numel(); }
TideLayout TensorLayout(const TideTensor* t) { return Unwrap(t)->layout(); }
void TensorSetLayout(TideTensor* t, TideLayout l) { Unwrap(t)->set_layout(l); }
int64_t TensorFormat(const TideTensor* t) { return Unwrap(t)->format(); }
uint64_t TensorContentVersion(const TideTensor* t) {
  const LoDTensor* x = Unwrap(t);
  return x->holder() ? x->holder()->content_version() : 0;
}
void TensorSetFormat(TideTensor* t, int64_t f) { Unwrap(t)->set_format(f); }
TidePlace TensorPlace(const TideTensor* t) { return Unwrap(t)->place().c(); }
const void* TensorData(const TideTensor* t) { return Unwrap(t)->data(); }

TideStatus* TensorResize(TideTensor* t, const int64_t* dims, int32_t rank) {
  return StatusGuard([&] { Unwrap(t)->Resize(DDim(dims, rank)); });
}
// The entries that give a tensor data (these two, Tensor_CopyTo's destination, Tensor_AdoptData)
// note it (NoteTensorWrite), so that a kernel that declines after writing an output is caught
// (kernel_outputs.h).
TideStatus* TensorMutableData(TideTensor* t, TideDataType dtype, TidePlace place, void** data) {
  *data = nullptr;
  NoteTensorWrite(Unwrap(t));
  return StatusGuard([&] { *data = Unwrap(t)->mutable_data(Place(place), dtype); });
}
TideStatus* TensorShareDataWith(TideTensor* dst, const TideTensor* src) {
  NoteTensorWrite(Unwrap(dst));
  return StatusGuard([&] { Unwrap(dst)->ShareDataWith(*Unwrap(src)); });
}
TideStatus* TensorCopyTo(const TideTensor* src, TidePlace place, TideDeviceContext* ctx,
                         TideTensor* dst) {
  NoteTensorWrite(Unwrap(dst));
  return StatusGuard([&] { TensorCopySync(*Unwrap(src), Place(place), Unwrap(dst), Unwrap(ctx)); });
}
size_t TensorLoDLevels(const TideTensor* t) { return Unwrap(t)->lod().size(); }
const uint64_t* TensorLoD(const TideTensor* t, size_t level, size_t* length) {
  const LoD& lod = Unwrap(t)->lod();
  if (level >= lod.size()) {
    *length = 0;
    return nullptr;
  }
  *length = lod[level].size();
  return lod[level].data();
}
TideStatus* TensorSetLoD(TideTensor* t, const uint64_t* const* offsets, const size_t* lengths,
                         size_t levels) {
  return StatusGuard([&] {
    LoD lod(levels);
    for (size_t l = 0; l < levels; ++l) lod[l].assign(offsets[l], offsets[l] + lengths[l]);
    LoDTensor* x = Unwrap(t);
    std::string err = CheckLoD(lod, x->dims().size() ? x->dims()[0] : 0);
    TIDE_ENFORCE(err.empty(), "invalid LoD ", LoDToString(lod), " for a tensor of dims ",
                 x->dims().ToString(), ": ", err);
    x->set_lod(lod);
  });
}
TideStatus* TensorAdoptData(TideTensor* t, void* data, size_t bytes, TideDataType dtype,
                            TidePlace place, void (*release)(void*), void* arg) {
  NoteTensorWrite(Unwrap(t));
  return StatusGuard([&] {
    LoDTensor* x = Unwrap(t);
    TIDE_ENFORCE(SizeOf(dtype) > 0, "Tensor_AdoptData: data type ", DataTypeName(dtype),
                 " has no size");
    TIDE_ENFORCE(data || bytes == 0, "Tensor_AdoptData: null data");
    int64_t n = x->numel();
    TIDE_ENFORCE(n >= 0 && static_cast<size_t>(n) * SizeOf(dtype) <= bytes,
                 "Tensor_AdoptData: ", bytes, " bytes cannot hold dims ", x->dims().ToString(),
                 " of ", DataTypeName(dtype));
    TIDE_ENFORCE(reinterpret_cast<uintptr_t>(data) % SizeOf(dtype) == 0,
                 "Tensor_AdoptData: data is not aligned for ", DataTypeName(dtype));
    Place p(place);
    CheckedDevice(p);
    auto holder = std::make_shared<Allocation>(data, bytes, p, [release, arg](void*) {
      if (release) release(arg);
    });
    holder->MarkShared();  // its owner may write the bytes unseen
    x->ResetHolder(std::move(holder), dtype, x->dims());
  });
}
TideTensor* TensorCreate() { return Wrap(new LoDTensor()); }
void TensorDestroy(TideTensor* t) { delete Unwrap(t); }

// --- Variables ---
TideVarType VariableType(const TideVariable* v) { return Unwrap(v)->type(); }
TideStatus* VariableGetTensor(TideVariable* v, TideTensor** out) {
  *out = nullptr;
  return StatusGuard([&] { *out = Wrap(Unwrap(v)->GetMutable<LoDTensor>()); });
}
TideStatus* VariableGetSelectedRows(TideVariable* v, TideSelectedRows** out) {
  *out = nullptr;
  return StatusGuard([&] { *out = Wrap(Unwrap(v)->GetMutable<SelectedRows>()); });
}
TideStatus* VariableGetRankTable(TideVariable* v, TideTensor** out) {
  *out = nullptr;
  return StatusGuard([&] { *out = Wrap(&Unwrap(v)->GetMutable<LoDRankTable>()->table); });
}
TideStatus* VariableGetTensorArray(TideVariable* v, TideTensorArray** out) {
  *out = nullptr;
  return StatusGuard([&] {
    Variable* var = Unwrap(v);
    std::vector<LoDTensor>* list =
        var->IsInitialized() ? var->GetTensorList() : var->GetMutable<LoDTensorArray>();
    TIDE_ENFORCE(list != nullptr, "variable holds ", VarTypeName(var->type()),
                 ", used as a tensor array");
    *out = Wrap(list);
  });
}
int64_t SelectedRowsHeight(const TideSelectedRows* s) { return Unwrap(s)->height(); }
void SelectedRowsSetHeight(TideSelectedRows* s, int64_t h) { Unwrap(s)->set_height(h); }
const int64_t* SelectedRowsRows(const TideSelectedRows* s, size_t* count) {
  *count = Unwrap(s)->rows().size();
  return Unwrap(s)->rows().data();
}
void SelectedRowsSetRows(TideSelectedRows* s, const int64_t* rows, size_t count) {
  Unwrap(s)->mutable_rows()->assign(rows, rows + count);
}
TideTensor* SelectedRowsValue(TideSelectedRows* s) { return Wrap(Unwrap(s)->mutable_value()); }
size_t TensorArraySize(const TideTensorArray* a) { return Unwrap(a)->size(); }
void TensorArrayResize(TideTensorArray* a, size_t n) { Unwrap(a)->resize(n); }
TideTensor* TensorArrayAt(TideTensorArray* a, size_t i) {
  auto* v = Unwrap(a);
  return i < v->size() ? Wrap(&(*v)[i]) : nullptr;
}

TideStatus* VariableGetStepScopes(TideVariable* v, TideStepScopes** out) {
  *out = nullptr;
  return StatusGuard([&] { *out = Wrap(Unwrap(v)->GetMutable<StepScopes>()); });
}
size_t StepScopesSize(const TideStepScopes* s) { return Unwrap(s)->size(); }
TideScope* StepScopesAt(TideStepScopes* s, size_t i) {
  auto* v = Unwrap(s);
  return i < v->size() ? Wrap((*v)[i]) : nullptr;
}
TideScope* StepScopesPush(TideStepScopes* s, TideScope* parent) {
  Scope* kid = &Unwrap(parent)->NewScope();
  Unwrap(s)->push_back(kid);
  return Wrap(kid);
}
void StepScopesClear(TideStepScopes* s) {
  // Last first: a later step's scope may read an earlier one's variables while it lives.
  auto* v = Unwrap(s);
  for (auto it = v->rbegin(); it != v->rend(); ++it) (*it)->parent()->DeleteScope(*it);
  v->clear();
}

// --- Scopes ---
TideVariable* ScopeFindVar(const TideScope* s, const char* name) {
  return Wrap(Unwrap(s)->FindVar(name ? name : ""));
}
TideVariable* ScopeFindLocalVar(const TideScope* s, const char* name) {
  return Wrap(Unwrap(s)->FindLocalVar(name ? name : ""));
}
TideVariable* ScopeVar(TideScope* s, const char* name) {
  return Wrap(Unwrap(s)->Var(name ? name : ""));
}
TideScope* ScopeNewScope(TideScope* s) { return Wrap(&Unwrap(s)->NewScope()); }
void ScopeDropKids(TideScope* s) { Unwrap(s)->DropKids(); }

// --- Device contexts ---
TidePlace DeviceContextPlace(const TideDeviceContext* c) { return Unwrap(c)->place().c(); }
const void* DeviceContextExtension(TideDeviceContext* c, const char* name) {
  return c && name ? Unwrap(c)->Extension(name) : nullptr;
}
TideStatus* DeviceContextSynchronize(TideDeviceContext* c) {
  return StatusGuard([&] { Unwrap(c)->Synchronize(); });
}
TideStatus* DeviceContextMemset(TideDeviceContext* c, void* dst, int32_t value, size_t size) {
  return StatusGuard([&] {
    TIDE_ENFORCE(c && (dst || size == 0), "DeviceContext_Memset: null argument");
    Unwrap(c)->Memset(dst, value, size);
  });
}

// --- Kernel context ---
const ArgBinding* KIn(const TideKernelContext* c, const char* p) { return c->op->FindInput(p); }
const ArgBinding* KOut(const TideKernelContext* c, const char* p) { return c->op->FindOutput(p); }

const char* KOpType(const TideKernelContext* c) { return c->op->type().c_str(); }
TidePlace KPlace(const TideKernelContext* c) { return c->dctx->place().c(); }
TideDeviceContext* KDeviceContext(TideKernelContext* c) { return Wrap(c->dctx); }
const TideAttrValue* KAttr(const TideKernelContext* c, const char* name) {
  return c->op->attr_views().Find(name);
}
size_t KInputCount(const TideKernelContext* c, const char* p) {
  const ArgBinding* b = KIn(c, p);
  return b ? b->vars.size() : 0;
}
size_t KOutputCount(const TideKernelContext* c, const char* p) {
  const ArgBinding* b = KOut(c, p);
  return b ? b->vars.size() : 0;
}
TideVariable* KInputVar(TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KIn(c, p);
  return b && i < b->vars.size() ? Wrap(b->vars[i]) : nullptr;
}
TideVariable* KOutputVar(TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KOut(c, p);
  return b && i < b->vars.size() ? Wrap(b->vars[i]) : nullptr;
}
const char* KInputName(const TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KIn(c, p);
  return b && i < b->names.size() ? b->name_ptrs[i] : nullptr;
}
const char* KOutputName(const TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KOut(c, p);
  return b && i < b->names.size() ? b->name_ptrs[i] : nullptr;
}
const TideTensor* KInput(TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KIn(c, p);
  if (!b || i >= b->vars.size() || !b->vars[i] || !b->vars[i]->IsType<LoDTensor>()) return nullptr;
  if (i < b->transforms.size() && b->transforms[i].result) return Wrap(b->transforms[i].result);
  return Wrap(&b->vars[i]->Get<LoDTensor>());
}
TideTensor* KOutput(TideKernelContext* c, const char* p, size_t i) {
  const ArgBinding* b = KOut(c, p);
  if (!b || i >= b->vars.size() || !b->vars[i]) return nullptr;
  Variable* v = b->vars[i];
  if (v->IsInitialized() && !v->IsType<LoDTensor>()) return nullptr;
  return Wrap(v->GetMutable<LoDTensor>());
}
TideStatus* KTempAlloc(TideKernelContext* c, size_t size, void** data) {
  *data = nullptr;
  return StatusGuard([&] {
    c->temps.push_back(memory::AllocShared(c->dctx->place(), size));
    *data = c->temps.back()->ptr();
  });
}

void* KState(const TideKernelContext* c) { return c->op->kernel_state.Get(c->kernel); }
TideStatus* KSetState(TideKernelContext* c, void* state, void (*free_state)(void*)) {
  return StatusGuard([&] { c->op->kernel_state.Set(c->kernel, state, free_state); });
}

// --- Shape inference (dispatch to the compile-time or run-time context) ---
const char* IOpType(const TideInferShapeContext* c) { return c->op_type().c_str(); }
int32_t IIsRuntime(const TideInferShapeContext* c) { return c->IsRuntime() ? 1 : 0; }
const TideAttrValue* IAttr(const TideInferShapeContext* c, const char* n) { return c->Attr(n); }
size_t IInputCount(const TideInferShapeContext* c, const char* p) { return c->InputCount(p); }
size_t IOutputCount(const TideInferShapeContext* c, const char* p) { return c->OutputCount(p); }
const char* IInputName(const TideInferShapeContext* c, const char* p, size_t i) {
  return c->InputName(p, i);
}
const char* IOutputName(const TideInferShapeContext* c, const char* p, size_t i) {
  return c->OutputName(p, i);
}
TideStatus* IInputDims(const TideInferShapeContext* c, const char* p, size_t i, int64_t* dims,
                       int32_t capacity, int32_t* rank) {
  return StatusGuard([&] {
    DDim d = c->InputDims(p, i);
    TIDE_ENFORCE(d.size() <= capacity, "input ", p, " has rank ", d.size(), ", more than the ",
                 capacity, " dims the caller can hold");
    for (int k = 0; k < d.size(); ++k) dims[k] = d[k];
    *rank = d.size();
  });
}
TideStatus* ISetOutputDims(TideInferShapeContext* c, const char* p, size_t i, const int64_t* dims,
                           int32_t rank) {
  return StatusGuard([&] { c->SetOutputDims(p, i, DDim(dims, rank)); });
}
TideDataType IInputDataType(const TideInferShapeContext* c, const char* p, size_t i) {
  try {
    return c->InputDataType(p, i);
  } catch (...) {
    return TIDE_UNDEFINED;
  }
}
void ISetOutputDataType(TideInferShapeContext* c, const char* p, size_t i, TideDataType t) {
  try {
    c->SetOutputDataType(p, i, t);
  } catch (const std::exception& e) {
    LOG(WARNING) << "op '" << c->op_type() << "': " << e.what();
  }
}
TideVarType IInputVarType(const TideInferShapeContext* c, const char* p, size_t i) {
  try {
    return c->InputVarType(p, i);
  } catch (...) {
    return TIDE_VAR_UNINITIALIZED;
  }
}
void ISetOutputVarType(TideInferShapeContext* c, const char* p, size_t i, TideVarType t) {
  try {
    c->SetOutputVarType(p, i, t);
  } catch (const std::exception& e) {
    LOG(WARNING) << "op '" << c->op_type() << "': " << e.what();
  }
}
int32_t IInputLoDLevel(const TideInferShapeContext* c, const char* p, size_t i) {
  try {
    return c->InputLoDLevel(p, i);
  } catch (...) {
    return -1;
  }
}
void ISetOutputLoDLevel(TideInferShapeContext* c, const char* p, size_t i, int32_t level) {
  try {
    c->SetOutputLoDLevel(p, i, level);
  } catch (const std::exception& e) {
    LOG(WARNING) << "op '" << c->op_type() << "': " << e.what();
  }
}
TideStatus* IShareLoD(TideInferShapeContext* c, const char* in, size_t i, const char* out,
                      size_t j) {
  return StatusGuard([&] { c->ShareLoD(in, i, out, j); });
}

// --- Grad op makers ---
const std::vector<std::string>& NoNames() {
  static const std::vector<std::string> empty;
  return empty;
}
const char* GOpType(const TideGradOpMaker* m) { return m->forward->type().c_str(); }
const char* const* GParams(const TideGradOpMaker* m, const VariableNameMap& map, size_t* count) {
  std::vector<std::string> names;
  for (const auto& kv : map) names.push_back(kv.first);
  return const_cast<TideGradOpMaker*>(m)->lists.Keep(names, count);
}
const char* const* GInputParams(const TideGradOpMaker* m, size_t* n) {
  return GParams(m, m->forward->inputs(), n);
}
const char* const* GOutputParams(const TideGradOpMaker* m, size_t* n) {
  return GParams(m, m->forward->outputs(), n);
}
// The gradients of a parameter the forward op's schema does not declare (a misspelt "Outt"): no
// names, and the maker's first such query is its error, so it is named instead of the grad op's
// input left empty ("needs input 'Out@GRAD', which is not set"). Input / Output of any name stay
// queries (a maker shared by several ops asks for parameters some of them lack).
void CheckParam(const TideGradOpMaker* m, const char* call, const char* p, const char* side) {
  if (!m->error.empty()) return;
  const OpInfo* info = Registry::Global().FindOp(m->forward->type());
  std::string error = info ? UndeclaredParamError(*info, p ? p : "", side) : "";
  if (!error.empty())
    const_cast<TideGradOpMaker*>(m)->error = StrCat(call, "(\"", p ? p : "", "\"): ", error);
}
const char* const* GInput(const TideGradOpMaker* m, const char* p, size_t* n) {
  return const_cast<TideGradOpMaker*>(m)->lists.Keep(m->forward->Input(p), n);
}
const char* const* GOutput(const TideGradOpMaker* m, const char* p, size_t* n) {
  return const_cast<TideGradOpMaker*>(m)->lists.Keep(m->forward->Output(p), n);
}
std::vector<std::string> GradNames(const std::vector<std::string>& vars,
                                   const std::vector<std::string>* no_grad) {
  std::vector<std::string> out;
  for (const auto& v : vars)
    out.push_back(no_grad && std::binary_search(no_grad->begin(), no_grad->end(), v)
                      ? std::string("@EMPTY@")
                      : v + "@GRAD");
  return out;
}
const char* const* GInputGrad(const TideGradOpMaker* m, const char* p, size_t* n) {
  CheckParam(m, "InputGrad", p, "input");
  return const_cast<TideGradOpMaker*>(m)->lists.Keep(GradNames(m->forward->Input(p), m->no_grad),
                                                     n);
}
const char* const* GOutputGrad(const TideGradOpMaker* m, const char* p, size_t* n) {
  CheckParam(m, "OutputGrad", p, "output");
  return const_cast<TideGradOpMaker*>(m)->lists.Keep(GradNames(m->forward->Output(p), nullptr), n);
}
const TideAttrValue* GAttr(const TideGradOpMaker* m, const char* name) {
  return m->attrs.Find(name);
}
int32_t GGradBlock(const TideGradOpMaker* m, const char* attr) {
  auto it = m->grad_blocks.find(attr ? attr : "");
  return it == m->grad_blocks.end() ? -1 : it->second;
}
TideGradOp* GNewOp(TideGradOpMaker* m, const char* type) {
  m->ops.push_back(std::make_unique<TideGradOp>());
  m->ops.back()->desc.set_type(type ? type : "");
  m->ops.back()->forward = m->forward;
  return m->ops.back().get();
}
void GSetInput(TideGradOp* op, const char* p, const char* const* args, size_t n) {
  op->desc.SetInput(p, std::vector<std::string>(args, args + n));
}
void GSetOutput(TideGradOp* op, const char* p, const char* const* args, size_t n) {
  op->desc.SetOutput(p, std::vector<std::string>(args, args + n));
}
void GSetAttr(TideGradOp* op, const char* name, const TideAttrValue* v) {
  try {
    op->desc.SetAttr(name, AttrFromC(*v));
  } catch (const std::exception& e) {
    op->error = std::string("attribute '") + (name ? name : "") + "': " + e.what();
  }
}
// Copies the forward op's attributes that the grad op declares (all of them when the grad op is
// not registered yet), so grad ops need not redeclare forward attributes they never read.
void GCopyAttrs(TideGradOp* op) {
  const OpInfo* grad = Registry::Global().FindOp(op->desc.type());
  for (const auto& kv : op->forward->attrs())
    if (!grad || grad->FindAttr(kv.first) || kv.first.rfind("op_", 0) == 0)
      op->desc.SetAttr(kv.first, kv.second);
}

// --- Operators without kernels ---
const char* ROpType(const TideOpRunContext* c) { return c->op->type().c_str(); }
TideScope* RScope(TideOpRunContext* c) { return Wrap(c->scope); }
TidePlace RPlace(const TideOpRunContext* c) { return c->dctx->place().c(); }
TideDeviceContext* RDeviceContext(TideOpRunContext* c) { return Wrap(c->dctx); }
const TideAttrValue* RAttr(const TideOpRunContext* c, const char* n) {
  return c->op->attr_views().Find(n);
}
const char* const* RNames(const ArgBinding* b, size_t* n) {
  *n = b ? b->name_ptrs.size() : 0;
  return b ? b->name_ptrs.data() : nullptr;
}
const char* const* RInputs(const TideOpRunContext* c, const char* p, size_t* n) {
  return RNames(c->op->FindInput(p), n);
}
const char* const* ROutputs(const TideOpRunContext* c, const char* p, size_t* n) {
  return RNames(c->op->FindOutput(p), n);
}
TideStatus* RRunBlock(TideOpRunContext* c, int32_t block_idx, TideScope* scope) {
  return StatusGuard([&] { c->executor->RunSubBlock(*c->block, block_idx, Unwrap(scope)); });
}

TideHostApi MakeTable() {
  TideHostApi h{};
  // The last field: every function the table has (TIDE_HOST_FN checks against it). Entries
  // are set in the header's order, section by section.
  h.struct_size = TIDE_STRUCT_SIZE(TideHostApi, Buffer_Free);
  static_assert(TIDE_STRUCT_SIZE(TideHostApi, Buffer_Free) == sizeof(TideHostApi),
                "struct_size must name the table's last field");
  h.abi_major = TIDE_ABI_MAJOR;
  h.abi_minor = TIDE_ABI_MINOR;
  h.Status_Create = StatusCreate;
  h.Status_Free = StatusFree;
  h.Status_Code = StatusCode;
  h.Status_Message = StatusMessage;
  h.Log = Log;
  h.Flag_Get = FlagGet;
  h.PlaceKind_Id = PlaceKindIdC;
  h.PlaceKind_Name = PlaceKindNameC;
  h.DeviceContext_Place = DeviceContextPlace;
  h.DeviceContext_Extension = DeviceContextExtension;
  h.DeviceContext_Synchronize = DeviceContextSynchronize;
  h.DeviceContext_Memset = DeviceContextMemset;
  h.KernelContext_Attr = KAttr;
  h.InferShape_Attr = IAttr;
  h.GradMaker_Attr = GAttr;
  h.OpRun_Attr = RAttr;
  h.Tensor_Create = TensorCreate;
  h.Tensor_Destroy = TensorDestroy;
  h.Tensor_DataType = TensorDataType;
  h.Tensor_Rank = TensorRank;
  h.Tensor_Dims = TensorDims;
  h.Tensor_Numel = TensorNumel;
  h.Tensor_Place = TensorPlace;
  h.Tensor_Data = TensorData;
  h.Tensor_ContentVersion = TensorContentVersion;
  h.Tensor_Layout = TensorLayout;
  h.Tensor_SetLayout = TensorSetLayout;
  h.Tensor_Format = TensorFormat;
  h.Tensor_SetFormat = TensorSetFormat;
  h.Tensor_Resize = TensorResize;
  h.Tensor_MutableData = TensorMutableData;
  h.Tensor_ShareDataWith = TensorShareDataWith;
  h.Tensor_AdoptData = TensorAdoptData;
  h.Tensor_CopyTo = TensorCopyTo;
  h.Tensor_LoDLevels = TensorLoDLevels;
  h.Tensor_LoD = TensorLoD;
  h.Tensor_SetLoD = TensorSetLoD;
  h.SelectedRows_Height = SelectedRowsHeight;
  h.SelectedRows_SetHeight = SelectedRowsSetHeight;
  h.SelectedRows_Rows = SelectedRowsRows;
  h.SelectedRows_SetRows = SelectedRowsSetRows;
  h.SelectedRows_Value = SelectedRowsValue;
  h.TensorArray_Size = TensorArraySize;
  h.TensorArray_Resize = TensorArrayResize;
  h.TensorArray_At = TensorArrayAt;
  h.Variable_Type = VariableType;
  h.Variable_GetTensor = VariableGetTensor;
  h.Variable_GetSelectedRows = VariableGetSelectedRows;
  h.Variable_GetTensorArray = VariableGetTensorArray;
  h.Variable_GetRankTable = VariableGetRankTable;
  h.Scope_FindVar = ScopeFindVar;
  h.Scope_FindLocalVar = ScopeFindLocalVar;
  h.Scope_Var = ScopeVar;
  h.Scope_NewScope = ScopeNewScope;
  h.Scope_DropKids = ScopeDropKids;
  h.KernelContext_OpType = KOpType;
  h.KernelContext_Place = KPlace;
  h.KernelContext_DeviceContext = KDeviceContext;
  h.KernelContext_InputCount = KInputCount;
  h.KernelContext_OutputCount = KOutputCount;
  h.KernelContext_InputVar = KInputVar;
  h.KernelContext_OutputVar = KOutputVar;
  h.KernelContext_InputName = KInputName;
  h.KernelContext_OutputName = KOutputName;
  h.KernelContext_Input = KInput;
  h.KernelContext_Output = KOutput;
  h.KernelContext_TempAlloc = KTempAlloc;
  h.KernelContext_State = KState;
  h.KernelContext_SetState = KSetState;
  h.InferShape_OpType = IOpType;
  h.InferShape_IsRuntime = IIsRuntime;
  h.InferShape_InputCount = IInputCount;
  h.InferShape_OutputCount = IOutputCount;
  h.InferShape_InputName = IInputName;
  h.InferShape_OutputName = IOutputName;
  h.InferShape_InputDims = IInputDims;
  h.InferShape_SetOutputDims = ISetOutputDims;
  h.InferShape_InputDataType = IInputDataType;
  h.InferShape_SetOutputDataType = ISetOutputDataType;
  h.InferShape_InputVarType = IInputVarType;
  h.InferShape_SetOutputVarType = ISetOutputVarType;
  h.InferShape_InputLoDLevel = IInputLoDLevel;
  h.InferShape_SetOutputLoDLevel = ISetOutputLoDLevel;
  h.InferShape_ShareLoD = IShareLoD;
  h.OpRun_OpType = ROpType;
  h.OpRun_Scope = RScope;
  h.OpRun_Place = RPlace;
  h.OpRun_DeviceContext = RDeviceContext;
  h.OpRun_Inputs = RInputs;
  h.OpRun_Outputs = ROutputs;
  h.OpRun_RunBlock = RRunBlock;
  h.Variable_GetStepScopes = VariableGetStepScopes;
  h.StepScopes_Size = StepScopesSize;
  h.StepScopes_At = StepScopesAt;
  h.StepScopes_Push = StepScopesPush;
  h.StepScopes_Clear = StepScopesClear;
  h.GradMaker_OpType = GOpType;
  h.GradMaker_InputParams = GInputParams;
  h.GradMaker_OutputParams = GOutputParams;
  h.GradMaker_Input = GInput;
  h.GradMaker_Output = GOutput;
  h.GradMaker_InputGrad = GInputGrad;
  h.GradMaker_OutputGrad = GOutputGrad;
  h.GradMaker_GradBlock = GGradBlock;
  h.GradMaker_NewOp = GNewOp;
  h.GradOp_SetInput = GSetInput;
  h.GradOp_SetOutput = GSetOutput;
  h.GradOp_SetAttr = GSetAttr;
  h.GradOp_CopyAttrs = GCopyAttrs;
  h.Registrar_AddOp = RegistrarAddOp;
  h.Registrar_AddKernel = RegistrarAddKernel;
  h.Registrar_AddLibrary = RegistrarAddLibrary;
  h.Registrar_AddDevice = RegistrarAddDevice;
  h.Registrar_AddLayoutTransform = RegistrarAddLayoutTransform;
  h.Registrar_AddDataTypeCast = RegistrarAddDataTypeCast;
  h.Registrar_AddProgramPass = RegistrarAddProgramPass;
  h.Buffer_Alloc = [](size_t size) { return static_cast<char*>(std::malloc(size ? size : 1)); };
  h.Buffer_Free = [](char* buffer) { std::free(buffer); };
  return h;
}

}  // namespace

const TideHostApi* GetHostApi() {
  static const TideHostApi table = MakeTable();
  return &table;
}

}  // namespace tide::core
