// tide/plugin/infer_shape.hpp: shape inference: tide::InferShapeContext (compile time over
// variable descriptions, run time over tensors) and common rules such as SameShapeAsInput.
#ifndef TIDE_PLUGIN_INFER_SHAPE_HPP_
#define TIDE_PLUGIN_INFER_SHAPE_HPP_

#include <cstdint>
#include <functional>
#include <string>
#include <tide/plugin/attributes.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/types.hpp>
#include <vector>

namespace tide {

class InferShapeContext {
 public:
  explicit InferShapeContext(TideInferShapeContext* c) : c_(c) {}
  const char* op_type() const { return Host().InferShape_OpType(c_); }
  bool IsRuntime() const { return Host().InferShape_IsRuntime(c_) != 0; }
  size_t InputCount(const char* param) const { return Host().InferShape_InputCount(c_, param); }
  size_t OutputCount(const char* param) const { return Host().InferShape_OutputCount(c_, param); }
  bool HasInput(const char* param) const { return InputCount(param) > 0; }
  bool HasOutput(const char* param) const { return OutputCount(param) > 0; }
  std::string InputName(const char* param, size_t i = 0) const {
    const char* n = Host().InferShape_InputName(c_, param, i);
    return n ? n : "";
  }
  std::string OutputName(const char* param, size_t i = 0) const {
    const char* n = Host().InferShape_OutputName(c_, param, i);
    return n ? n : "";
  }
  Dims InputDims(const char* param, size_t i = 0) const {
    int64_t d[16];
    int32_t rank = 0;
    ThrowIfError(Host().InferShape_InputDims(c_, param, i, d, 16, &rank));
    return Dims(d, d + rank);
  }
  std::vector<Dims> InputsDims(const char* param) const {
    std::vector<Dims> out;
    for (size_t i = 0, n = InputCount(param); i < n; ++i) out.push_back(InputDims(param, i));
    return out;
  }
  void SetOutputDims(const char* param, const Dims& d, size_t i = 0) {
    ThrowIfError(
        Host().InferShape_SetOutputDims(c_, param, i, d.data(), static_cast<int32_t>(d.size())));
  }
  TideDataType InputDataType(const char* param, size_t i = 0) const {
    return Host().InferShape_InputDataType(c_, param, i);
  }
  void SetOutputDataType(const char* param, TideDataType t, size_t i = 0) {
    Host().InferShape_SetOutputDataType(c_, param, i, t);
  }
  TideVarType InputVarType(const char* param, size_t i = 0) const {
    return Host().InferShape_InputVarType(c_, param, i);
  }
  void SetOutputVarType(const char* param, TideVarType t, size_t i = 0) {
    Host().InferShape_SetOutputVarType(c_, param, i, t);
  }
  void ShareLoD(const char* in, const char* out, size_t i = 0, size_t j = 0) {
    ThrowIfError(Host().InferShape_ShareLoD(c_, in, i, out, j));
  }
  // Compile time: the input's lod_level; run time: its tensor's number of LoD levels; -1 when
  // absent or not a tensor.
  int32_t InputLoDLevel(const char* param, size_t i = 0) const {
    return Host().InferShape_InputLoDLevel(c_, param, i);
  }
  // Compile time only (kernels set the LoD at run time).
  void SetOutputLoDLevel(const char* param, int32_t level, size_t i = 0) {
    Host().InferShape_SetOutputLoDLevel(c_, param, i, level);
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().InferShape_Attr(c_, name));
  }
  bool HasAttr(const char* name) const { return Host().InferShape_Attr(c_, name) != nullptr; }

 private:
  TideInferShapeContext* c_;
};

// Common shape rules.
using InferShapeFn = std::function<void(InferShapeContext&)>;
// Out has In's dims, dtype and LoD.
inline InferShapeFn SameShapeAsInput(std::string in, std::string out) {
  return [in, out](InferShapeContext& ctx) {
    ctx.SetOutputDims(out.c_str(), ctx.InputDims(in.c_str()));
    ctx.SetOutputDataType(out.c_str(), ctx.InputDataType(in.c_str()));
    ctx.ShareLoD(in.c_str(), out.c_str());
  };
}

}  // namespace tide

#endif  // TIDE_PLUGIN_INFER_SHAPE_HPP_
