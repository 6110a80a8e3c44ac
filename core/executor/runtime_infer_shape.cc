// runtime_infer_shape.cc: the run-time shape inference context.
#include "core/executor/runtime_infer_shape.h"

#include "core/platform/status.h"

namespace tide::core {

size_t RuntimeInferShapeContext::InputCount(const char* param) const {
  const ArgBinding* b = op_.FindInput(param);
  return b ? b->names.size() : 0;
}

size_t RuntimeInferShapeContext::OutputCount(const char* param) const {
  const ArgBinding* b = op_.FindOutput(param);
  return b ? b->names.size() : 0;
}

const char* RuntimeInferShapeContext::InputName(const char* param, size_t i) const {
  const ArgBinding* b = op_.FindInput(param);
  return b && i < b->names.size() ? b->name_ptrs[i] : nullptr;
}

const char* RuntimeInferShapeContext::OutputName(const char* param, size_t i) const {
  const ArgBinding* b = op_.FindOutput(param);
  return b && i < b->names.size() ? b->name_ptrs[i] : nullptr;
}

Variable* RuntimeInferShapeContext::In(const char* param, size_t i) const {
  const ArgBinding* b = op_.FindInput(param);
  if (!b || i >= b->vars.size() || !b->vars[i])
    TIDE_FAIL(TIDE_NOT_FOUND, "input ", param, "[", i, "] is not set");
  return b->vars[i];
}

Variable* RuntimeInferShapeContext::Out(const char* param, size_t i) const {
  const ArgBinding* b = op_.FindOutput(param);
  if (!b || i >= b->vars.size())
    TIDE_FAIL(TIDE_NOT_FOUND, "output ", param, "[", i, "] is not set");
  return b->vars[i];  // nullptr for an @EMPTY@ output
}

DDim RuntimeInferShapeContext::InputDims(const char* param, size_t i) const {
  Variable* v = In(param, i);
  if (v->IsType<LoDTensor>()) return v->Get<LoDTensor>().dims();
  if (v->IsType<SelectedRows>()) return v->Get<SelectedRows>().dense_dims();
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, "input ", param, " ('", InputName(param, i), "') holds ",
            VarTypeName(v->type()), ", which has no dims");
}

void RuntimeInferShapeContext::SetOutputDims(const char* param, size_t i, const DDim& dims) {
  Variable* v = Out(param, i);
  if (!v) return;
  if (v->IsType<SelectedRows>()) {
    auto* sr = v->GetMutable<SelectedRows>();
    if (dims.size() > 0) sr->set_height(dims[0]);
    return;
  }
  v->GetMutable<LoDTensor>()->Resize(dims);
}

TideDataType RuntimeInferShapeContext::InputDataType(const char* param, size_t i) const {
  Variable* v = In(param, i);
  if (v->IsType<LoDTensor>()) return v->Get<LoDTensor>().dtype();
  if (v->IsType<SelectedRows>()) return v->Get<SelectedRows>().value().dtype();
  return TIDE_UNDEFINED;
}

TideVarType RuntimeInferShapeContext::InputVarType(const char* param, size_t i) const {
  return In(param, i)->type();
}

void RuntimeInferShapeContext::SetOutputVarType(const char* param, size_t i, TideVarType t) {
  Variable* v = Out(param, i);
  if (v && !v->IsInitialized()) v->InitByType(t);
}

void RuntimeInferShapeContext::ShareLoD(const char* in, size_t i, const char* out, size_t j) {
  Variable* src = In(in, i);
  Variable* dst = Out(out, j);
  if (!dst || !src->IsType<LoDTensor>() || !dst->IsType<LoDTensor>()) return;
  dst->GetMutable<LoDTensor>()->set_lod(src->Get<LoDTensor>().lod());
}

int32_t RuntimeInferShapeContext::InputLoDLevel(const char* param, size_t i) const {
  Variable* v = In(param, i);
  if (!v || !v->IsType<LoDTensor>()) return -1;
  return static_cast<int32_t>(v->Get<LoDTensor>().lod().size());
}

// Kernels set the LoD at run time.
void RuntimeInferShapeContext::SetOutputLoDLevel(const char*, size_t, int32_t) {}

void InferShapeAtRunTime(const OpInstance& op) {
  const OpInfo& info = op.info();
  if (!info.infer_shape) return;
  RuntimeInferShapeContext ctx(op);
  CallPlugin([&] { return info.infer_shape(&ctx, info.infer_shape_data); },
             [&] { return op.label() + " shape inference"; }, info.plugin_file);
}

}  // namespace tide::core
