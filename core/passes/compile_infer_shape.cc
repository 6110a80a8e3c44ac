// compile_infer_shape.cc: the compile-time shape inference context.
#include "core/passes/compile_infer_shape.h"

#include "core/platform/status.h"
#include "core/registry/op_info.h"

namespace tide::core {

const char* CompileTimeInferShapeContext::InputName(const char* param, size_t i) const {
  const auto& v = op_.Input(param);
  return i < v.size() ? v[i].c_str() : nullptr;
}

const char* CompileTimeInferShapeContext::OutputName(const char* param, size_t i) const {
  const auto& v = op_.Output(param);
  return i < v.size() ? v[i].c_str() : nullptr;
}

VarDesc* CompileTimeInferShapeContext::In(const char* param, size_t i) const {
  const auto& names = op_.Input(param);
  if (i >= names.size()) TIDE_FAIL(TIDE_NOT_FOUND, "input ", param, "[", i, "] is not set");
  VarDesc* v = block_->FindVarRecursive(names[i]);
  if (!v)
    TIDE_FAIL(TIDE_NOT_FOUND, "input ", param, ": variable '", names[i],
              "' is not declared in block ", block_->idx(), " or its parents");
  return v;
}

VarDesc* CompileTimeInferShapeContext::Out(const char* param, size_t i) const {
  const auto& names = op_.Output(param);
  if (i >= names.size()) TIDE_FAIL(TIDE_NOT_FOUND, "output ", param, "[", i, "] is not set");
  if (names[i] == "@EMPTY@") return nullptr;
  VarDesc* v = block_->FindVarRecursive(names[i]);
  if (!v)
    TIDE_FAIL(TIDE_NOT_FOUND, "output ", param, ": variable '", names[i],
              "' is not declared in block ", block_->idx(), " or its parents");
  return v;
}

DDim CompileTimeInferShapeContext::InputDims(const char* param, size_t i) const {
  return DDim(In(param, i)->shape());
}

void CompileTimeInferShapeContext::SetOutputDims(const char* param, size_t i, const DDim& dims) {
  VarDesc* v = Out(param, i);
  if (!v) return;
  // Fluid's ops make [1] where Paddle 2.5+ makes [] (a reduction to a scalar, x[0] of a vector):
  // the program's declaration decides, and the executor gives such an output rank 0.
  if (v->zero_dim() && dims.size() == 1 && dims[0] == 1) return;
  // Rank 0 from inputs whose dims are all known (0-D operands) is 0-D; from an input of unknown
  // dims it says nothing.
  if (dims.size() == 0 && !AnyInputShapeUnknown()) return v->set_zero_dim();
  v->set_shape(dims.ToVector());
}

bool CompileTimeInferShapeContext::AnyInputShapeUnknown() const {
  for (const auto& [param, names] : op_.inputs())
    for (const auto& name : names) {
      const VarDesc* v = block_->FindVarRecursive(name);
      if (v && v->type() == TIDE_VAR_LOD_TENSOR && v->shape_unknown()) return true;
    }
  return false;
}

TideDataType CompileTimeInferShapeContext::InputDataType(const char* param, size_t i) const {
  return In(param, i)->dtype();
}

void CompileTimeInferShapeContext::SetOutputDataType(const char* param, size_t i, TideDataType t) {
  if (VarDesc* v = Out(param, i)) v->set_dtype(t);
}

TideVarType CompileTimeInferShapeContext::InputVarType(const char* param, size_t i) const {
  return In(param, i)->type();
}

void CompileTimeInferShapeContext::SetOutputVarType(const char* param, size_t i, TideVarType t) {
  if (VarDesc* v = Out(param, i)) v->set_type(t);
}

void CompileTimeInferShapeContext::ShareLoD(const char* in, size_t i, const char* out, size_t j) {
  if (VarDesc* o = Out(out, j)) o->set_lod_level(In(in, i)->lod_level());
}

int32_t CompileTimeInferShapeContext::InputLoDLevel(const char* param, size_t i) const {
  const VarDesc* v = In(param, i);
  if (!v || v->type() != TIDE_VAR_LOD_TENSOR) return -1;
  return v->lod_level();
}

void CompileTimeInferShapeContext::SetOutputLoDLevel(const char* param, size_t i, int32_t level) {
  TIDE_ENFORCE(level >= 0, "op '", op_type(), "': lod_level ", level, " for output ", param,
               " is negative");
  if (VarDesc* v = Out(param, i)) v->set_lod_level(level);
}

void InferShapeAtCompileTime(const OpInfo& info, const OpDesc& op, BlockDesc* block) {
  if (!info.infer_shape) return;
  CompileTimeInferShapeContext ctx(op, block);
  CallPlugin([&] { return info.infer_shape(&ctx, info.infer_shape_data); },
             "op '" + op.type() + "' shape inference", info.plugin_file);
}

}  // namespace tide::core
