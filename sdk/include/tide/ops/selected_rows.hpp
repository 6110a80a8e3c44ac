// tide/ops/selected_rows.hpp: Fluid's ops on a SelectedRows (a sparse gradient: rows of a
// `height`-row tensor, a row listed once per lookup): merge_selected_rows (each distinct row once,
// ascending, values summed: tide/ops/sum.hpp's merge) and get_tensor_from_selected_rows (its
// value tensor), their shapes and the errors every implementation gives.
#ifndef TIDE_OPS_SELECTED_ROWS_HPP_
#define TIDE_OPS_SELECTED_ROWS_HPP_

#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// For the errors.
inline const char* VarKindName(TideVarType t) {
  switch (t) {
    case TIDE_VAR_LOD_TENSOR:
      return "a LoDTensor";
    case TIDE_VAR_SELECTED_ROWS:
      return "a SelectedRows";
    case TIDE_VAR_LOD_TENSOR_ARRAY:
      return "a LoDTensorArray";
    default:
      return "neither a LoDTensor nor a SelectedRows";
  }
}

// Input `param` at build time must be a SelectedRows variable.
inline void CheckSelectedRowsInput(const InferShapeContext& ctx, const char* param) {
  const TideVarType t = ctx.InputVarType(param);
  TIDE_CHECK(t == TIDE_VAR_SELECTED_ROWS, "op '", ctx.op_type(), "': ", param,
             " must be a SelectedRows variable, got ", VarKindName(t));
}

// Input `param` at run time, which must hold a SelectedRows.
inline SelectedRows SelectedRowsInput(const KernelContext& ctx, const char* param) {
  Variable v = ctx.InputVar(param);
  TIDE_CHECK(v && v.IsSelectedRows(), "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') must hold a SelectedRows");
  return v.GetSelectedRows();
}

// The tensor an op that makes values writes to output `param`: the LoDTensor itself, or the value
// of a SelectedRows (Fluid's fill_constant and uniform_random fill a SelectedRows' value and leave
// its rows as they are).
inline Tensor OutputValue(const KernelContext& ctx, const char* param) {
  Variable v = ctx.OutputVar(param);
  if (v && v.IsSelectedRows()) return v.GetSelectedRows().value();
  return ctx.Output(param);
}

// merge_selected_rows: Out is a SelectedRows of X's dims (height and row width).
inline void MergeSelectedRowsInferShape(InferShapeContext& ctx) {
  CheckSelectedRowsInput(ctx, "X");
  ctx.SetOutputVarType("Out", TIDE_VAR_SELECTED_ROWS);
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// get_tensor_from_selected_rows: Out is a LoDTensor of X's value, [listed rows, row width...];
// the number of listed rows is known only at run time (-1 before).
inline void TensorFromSelectedRowsInferShape(InferShapeContext& ctx) {
  CheckSelectedRowsInput(ctx, "X");
  ctx.SetOutputVarType("Out", TIDE_VAR_LOD_TENSOR);
  Dims d = ctx.InputDims("X");
  if (!ctx.IsRuntime() && !d.empty()) d[0] = -1;
  if (!ctx.IsRuntime()) ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// get_tensor_from_selected_rows at run time: X's value, which must be there unless X lists no row.
inline Tensor SelectedRowsValue(const KernelContext& ctx) {
  SelectedRows x = SelectedRowsInput(ctx, "X");
  Tensor v = x.value();
  TIDE_CHECK(v.initialized() || x.rows().empty(), "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') lists ", x.rows().size(), " rows but has no value");
  return v;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SELECTED_ROWS_HPP_
