// runtime_infer_shape.h: shape inference over the tensors an op instance is bound to.
#pragma once

#include "core/executor/op_instance.h"

namespace tide::core {

class RuntimeInferShapeContext : public TideInferShapeContext {
 public:
  explicit RuntimeInferShapeContext(const OpInstance& op) : op_(op) {}

  const std::string& op_type() const override { return op_.type(); }
  bool IsRuntime() const override { return true; }
  const TideAttrValue* Attr(const char* name) const override { return op_.attr_views().Find(name); }
  size_t InputCount(const char* param) const override;
  size_t OutputCount(const char* param) const override;
  const char* InputName(const char* param, size_t i) const override;
  const char* OutputName(const char* param, size_t i) const override;
  DDim InputDims(const char* param, size_t i) const override;
  void SetOutputDims(const char* param, size_t i, const DDim& dims) override;
  TideDataType InputDataType(const char* param, size_t i) const override;
  void SetOutputDataType(const char*, size_t, TideDataType) override {}
  TideVarType InputVarType(const char* param, size_t i) const override;
  void SetOutputVarType(const char* param, size_t i, TideVarType t) override;
  void ShareLoD(const char* in, size_t i, const char* out, size_t j) override;
  int32_t InputLoDLevel(const char* param, size_t i) const override;
  void SetOutputLoDLevel(const char* param, size_t i, int32_t level) override;

 private:
  Variable* In(const char* param, size_t i) const;
  Variable* Out(const char* param, size_t i) const;
  const OpInstance& op_;
};

// Runs the op's registered shape inference (if any) on its bound tensors.
void InferShapeAtRunTime(const OpInstance& op);

}  // namespace tide::core
