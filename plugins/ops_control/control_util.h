// control_util.h: what the kernel-less control-flow ops share: variables looked up with errors
// that name the op, and conditions read back to the host as one bool.
#pragma once

#include <string>
#include <tide/plugin.hpp>

namespace ops_control {

// Shape inference of an op whose output Out is a tensor array of X's dims and data type (the
// array's elements are X-shaped).
inline void ArrayOfXShape(tide::InferShapeContext& ctx) {
  if (ctx.IsRuntime()) return;
  ctx.SetOutputVarType("Out", TIDE_VAR_LOD_TENSOR_ARRAY);
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The variable `name` as seen from the op's scope; an error naming the op when absent.
inline tide::Variable Lookup(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = ctx.scope().FindVar(name);
  TIDE_CHECK(v, "op '", ctx.op_type(), "': variable '", name,
             "' is not in the scope (not declared "
             "in the program, or read before any op wrote it)");
  return v;
}

// The single variable bound to `param`; an error naming the op when there is none or several.
inline std::string OnlyInput(tide::OpRunContext& ctx, const char* param) {
  auto names = ctx.Inputs(param);
  TIDE_CHECK(names.size() == 1, "op '", ctx.op_type(), "': input '", param,
             "' needs one variable, got ", names.size());
  return names[0];
}
inline std::string OnlyOutput(tide::OpRunContext& ctx, const char* param) {
  auto names = ctx.Outputs(param);
  TIDE_CHECK(names.size() == 1, "op '", ctx.op_type(), "': output '", param,
             "' needs one variable, got ", names.size());
  return names[0];
}

// The LoDTensor variable `name` holds, with data; an error naming the op otherwise.
inline tide::Tensor InputTensor(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = Lookup(ctx, name);
  TIDE_CHECK(v.IsTensor(), "op '", ctx.op_type(), "': variable '", name,
             "' does not hold a LoDTensor");
  tide::Tensor t = v.GetTensor();
  TIDE_CHECK(t.initialized(), "op '", ctx.op_type(), "': variable '", name, "' holds no data");
  return t;
}

// `t` as a host tensor: itself when on the CPU, else a copy in `tmp`.
inline tide::Tensor OnHost(const tide::Tensor& t, tide::OwnedTensor& tmp) {
  if (t.place().kind_name() == "cpu") return t;
  tmp.CopyFrom(t, tide::Place("cpu", 0));
  return tmp;
}

// A condition: a one-element bool tensor, read back from its device when it lives on one.
inline bool ReadCondition(tide::OpRunContext& ctx, const std::string& name) {
  tide::Tensor t = InputTensor(ctx, name);
  TIDE_CHECK(t.dtype() == TIDE_BOOL && t.numel() == 1, "op '", ctx.op_type(), "': the condition '",
             name, "' must be a one-element bool tensor, got ", tide::DataTypeName(t.dtype()), " ",
             tide::ToString(t.dims()));
  tide::OwnedTensor tmp;
  return *OnHost(t, tmp).data<bool>();
}

}  // namespace ops_control
