// selected_rows_ops.cu: ops_math's ops on a SelectedRows X on the GPU: merge_selected_rows (the
// rows merged as sum merges them: merge_rows.cuh) and get_tensor_from_selected_rows (X's value
// copied into Out on the device, from wherever it lives). Rules: tide/ops/selected_rows.hpp.
#include <tide/ops/selected_rows.hpp>

#include "merge_rows.cuh"

namespace tide_cuda {
namespace {

template <typename T>
void MergeSelectedRows(KernelContext& ctx) {
  Gpu g(ctx);
  tide::ops::SelectedRowsInput(ctx, "X");  // checks X holds a SelectedRows
  MergeInputsIntoOut<T>(ctx, g, 1);
}

template <typename T>
void TensorFromSelectedRows(KernelContext& ctx) {
  Gpu g(ctx);
  const Tensor v = tide::ops::SelectedRowsValue(ctx);
  Tensor out = ctx.Output("Out");
  if (!v.initialized()) {  // no rows: an empty [0] tensor, as on the CPU
    out.mutable_data<T>({0}, g.place());
    return;
  }
  T* o = out.mutable_data<T>(v.dims(), g.place());
  const size_t bytes = sizeof(T) * size_t(v.numel());
  if (bytes == 0) return;
  if (v.place() == g.place())
    g.CopyD2D(o, v.data<T>(), bytes);
  else
    g.CopyFromHost(o, v.data<T>(), bytes);  // a SelectedRows' value may stay on the host
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("merge_selected_rows", "gpu", MergeSelectedRows, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("get_tensor_from_selected_rows", "gpu", TensorFromSelectedRows, float, double,
                     int32_t, int64_t);
