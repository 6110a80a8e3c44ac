// c_handles.h: what the C ABI's opaque handles are inside the core. Data objects (tensors,
// variables, scopes, device contexts) are core objects cast to their handle type; contexts are
// structs defined here (the C header only declares them).
#pragma once

#include <tide/plugin_api.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/framework/scope.h"
#include "core/ir/attribute.h"
#include "core/ir/op_desc.h"

namespace tide::core {

inline LoDTensor* Unwrap(TideTensor* t) { return reinterpret_cast<LoDTensor*>(t); }
inline const LoDTensor* Unwrap(const TideTensor* t) {
  return reinterpret_cast<const LoDTensor*>(t);
}
inline TideTensor* Wrap(LoDTensor* t) { return reinterpret_cast<TideTensor*>(t); }
inline const TideTensor* Wrap(const LoDTensor* t) { return reinterpret_cast<const TideTensor*>(t); }
inline Variable* Unwrap(TideVariable* v) { return reinterpret_cast<Variable*>(v); }
inline const Variable* Unwrap(const TideVariable* v) {
  return reinterpret_cast<const Variable*>(v);
}
inline TideVariable* Wrap(Variable* v) { return reinterpret_cast<TideVariable*>(v); }
inline Scope* Unwrap(TideScope* s) { return reinterpret_cast<Scope*>(s); }
inline const Scope* Unwrap(const TideScope* s) { return reinterpret_cast<const Scope*>(s); }
inline TideScope* Wrap(Scope* s) { return reinterpret_cast<TideScope*>(s); }
inline StepScopes* Unwrap(TideStepScopes* s) { return reinterpret_cast<StepScopes*>(s); }
inline const StepScopes* Unwrap(const TideStepScopes* s) {
  return reinterpret_cast<const StepScopes*>(s);
}
inline TideStepScopes* Wrap(StepScopes* s) { return reinterpret_cast<TideStepScopes*>(s); }
inline SelectedRows* Unwrap(TideSelectedRows* s) { return reinterpret_cast<SelectedRows*>(s); }
inline const SelectedRows* Unwrap(const TideSelectedRows* s) {
  return reinterpret_cast<const SelectedRows*>(s);
}
inline TideSelectedRows* Wrap(SelectedRows* s) { return reinterpret_cast<TideSelectedRows*>(s); }
inline std::vector<LoDTensor>* Unwrap(TideTensorArray* a) {
  return reinterpret_cast<std::vector<LoDTensor>*>(a);
}
inline const std::vector<LoDTensor>* Unwrap(const TideTensorArray* a) {
  return reinterpret_cast<const std::vector<LoDTensor>*>(a);
}
inline TideTensorArray* Wrap(std::vector<LoDTensor>* a) {
  return reinterpret_cast<TideTensorArray*>(a);
}
inline DeviceContext* Unwrap(TideDeviceContext* c) { return reinterpret_cast<DeviceContext*>(c); }
inline const DeviceContext* Unwrap(const TideDeviceContext* c) {
  return reinterpret_cast<const DeviceContext*>(c);
}
inline TideDeviceContext* Wrap(DeviceContext* c) { return reinterpret_cast<TideDeviceContext*>(c); }

// Keeps string lists alive for as long as their owner, for functions that return
// `const char* const*` arrays borrowed from a context.
class NameLists {
 public:
  const char* const* Keep(const std::vector<std::string>& names, size_t* count) {
    strings_.emplace_back(names);
    auto& ptrs = ptrs_.emplace_back();
    for (const auto& s : strings_.back()) ptrs.push_back(s.c_str());
    *count = ptrs.size();
    return ptrs.data();
  }

 private:
  std::deque<std::vector<std::string>> strings_;
  std::deque<std::vector<const char*>> ptrs_;
};

}  // namespace tide::core

// Shape inference, at compile time (over VarDescs) or run time (over tensors).
struct TideInferShapeContext {
  virtual ~TideInferShapeContext() = default;
  virtual const std::string& op_type() const = 0;
  virtual bool IsRuntime() const = 0;
  virtual const TideAttrValue* Attr(const char* name) const = 0;
  virtual size_t InputCount(const char* param) const = 0;
  virtual size_t OutputCount(const char* param) const = 0;
  virtual const char* InputName(const char* param, size_t i) const = 0;
  virtual const char* OutputName(const char* param, size_t i) const = 0;
  // Throws Error when the input is absent or has no shape.
  virtual tide::core::DDim InputDims(const char* param, size_t i) const = 0;
  virtual void SetOutputDims(const char* param, size_t i, const tide::core::DDim& dims) = 0;
  virtual TideDataType InputDataType(const char* param, size_t i) const = 0;
  virtual void SetOutputDataType(const char* param, size_t i, TideDataType t) = 0;
  virtual TideVarType InputVarType(const char* param, size_t i) const = 0;
  virtual void SetOutputVarType(const char* param, size_t i, TideVarType t) = 0;
  virtual void ShareLoD(const char* in, size_t i, const char* out, size_t j) = 0;
  virtual int32_t InputLoDLevel(const char* param, size_t i) const = 0;
  virtual void SetOutputLoDLevel(const char* param, size_t i, int32_t level) = 0;
};

// A grad op under construction.
struct TideGradOp {
  tide::core::OpDesc desc;
  const tide::core::OpDesc* forward = nullptr;  // for GradOp_CopyAttrs
  std::string error;  // a bad attribute the maker set (GradOp_SetAttr returns nothing)
};

// Hands a forward op to a plugin's grad maker and collects the grad ops it makes.
struct TideGradOpMaker {
  const tide::core::OpDesc* forward = nullptr;
  const std::vector<std::string>* no_grad = nullptr;  // sorted
  tide::core::AttrViews attrs;
  std::vector<std::unique_ptr<TideGradOp>> ops;
  tide::core::NameLists lists;
  std::map<std::string, int32_t> grad_blocks;  // block attribute -> its gradient block
  std::string error;  // the first parameter the maker asked for that the forward op lacks
  explicit TideGradOpMaker(const tide::core::OpDesc& fwd, const std::vector<std::string>& ng)
      : forward(&fwd), no_grad(&ng), attrs(fwd.attrs()) {}
};
