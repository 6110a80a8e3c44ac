// compile_infer_shape.h: shape, dtype and var-type inference over VarDescs, run when an op is
// added to a program (the -1 batch dim flows through).
#pragma once

#include "core/ir/block_desc.h"
#include "core/plugin/c_handles.h"

namespace tide::core {

struct OpInfo;

class CompileTimeInferShapeContext : public TideInferShapeContext {
 public:
  // `op`'s attributes must already be checked (defaults filled).
  CompileTimeInferShapeContext(const OpDesc& op, BlockDesc* block)
      : op_(op), block_(block), views_(op.attrs()) {}

  const std::string& op_type() const override { return op_.type(); }
  bool IsRuntime() const override { return false; }
  const TideAttrValue* Attr(const char* name) const override { return views_.Find(name); }
  size_t InputCount(const char* param) const override { return op_.Input(param).size(); }
  size_t OutputCount(const char* param) const override { return op_.Output(param).size(); }
  const char* InputName(const char* param, size_t i) const override;
  const char* OutputName(const char* param, size_t i) const override;
  DDim InputDims(const char* param, size_t i) const override;
  void SetOutputDims(const char* param, size_t i, const DDim& dims) override;
  TideDataType InputDataType(const char* param, size_t i) const override;
  void SetOutputDataType(const char* param, size_t i, TideDataType t) override;
  TideVarType InputVarType(const char* param, size_t i) const override;
  void SetOutputVarType(const char* param, size_t i, TideVarType t) override;
  void ShareLoD(const char* in, size_t i, const char* out, size_t j) override;
  int32_t InputLoDLevel(const char* param, size_t i) const override;
  void SetOutputLoDLevel(const char* param, size_t i, int32_t level) override;

 private:
  VarDesc* In(const char* param, size_t i) const;
  VarDesc* Out(const char* param, size_t i) const;  // nullptr for @EMPTY@
  bool AnyInputShapeUnknown() const;
  const OpDesc& op_;
  BlockDesc* block_;
  AttrViews views_;
};

// Runs the op's registered inference on `block`'s VarDescs; errors name the op.
void InferShapeAtCompileTime(const OpInfo& info, const OpDesc& op, BlockDesc* block);

}  // namespace tide::core
