// selected_rows_ops.cc: Fluid's ops on a SelectedRows X (a sparse gradient): merge_selected_rows
// (each distinct row once, ascending, values summed: selected_rows.h's MergeAdd) and
// get_tensor_from_selected_rows (X's value as a LoDTensor), as global-norm clipping uses them
// (tide/clip.py). Shapes and errors: tide/ops/selected_rows.hpp.
#include <tide/ops/selected_rows.hpp>

#include "common.h"
#include "selected_rows.h"

namespace ops_math {
namespace {

template <typename T>
void MergeSelectedRowsKernel(KernelContext& ctx) {
  tide::ops::SelectedRowsInput(ctx, "X");  // checks X holds a SelectedRows
  MergeInputsIntoOut<T>(ctx, 1);
}

template <typename T>
void TensorFromSelectedRowsKernel(KernelContext& ctx) {
  const Tensor v = tide::ops::SelectedRowsValue(ctx);
  Tensor out = ctx.Output("Out");
  if (!v.initialized()) {  // no rows: an empty [0] tensor
    out.mutable_data<T>({0}, ctx.place());
    return;
  }
  out.CopyFrom(v, ctx.place(), ctx.device_context());
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("merge_selected_rows")
                     .NoGradient()
                     .Comment("Out = SelectedRows X with its rows merged: each distinct row once, "
                              "ascending, holding the sum of the values listed for it.")
                     .Input("X", "a SelectedRows; a row may be listed more than once")
                     .Output("Out", "a SelectedRows of X's height listing each row once")
                     .InferShape(tide::ops::MergeSelectedRowsInferShape));
TIDE_REGISTER_KERNEL("merge_selected_rows", "cpu", MergeSelectedRowsKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("get_tensor_from_selected_rows")
                     .NoGradient()
                     .Comment("Out = the value tensor of SelectedRows X (one row per listed row, "
                              "in X's order).")
                     .Input("X", "a SelectedRows")
                     .Output("Out", "a LoDTensor: X's value")
                     .InferShape(tide::ops::TensorFromSelectedRowsInferShape));
TIDE_REGISTER_KERNEL("get_tensor_from_selected_rows", "cpu", TensorFromSelectedRowsKernel,
                     OPS_MATH_NUMERIC_TYPES);
