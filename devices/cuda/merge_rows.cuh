// merge_rows.cuh: Fluid's MergeAdd on the GPU, shared by sum (over SelectedRows inputs) and
// merge_selected_rows: the rows of SelectedRows inputs merged, each distinct row once, ascending,
// with the sum of its listed values (tide/ops/sum.hpp says where each listed row goes, as on the
// CPU), and the kernel that adds value rows into rows of a dense buffer.
#pragma once

#include <tide/ops/sum.hpp>
#include <vector>

#include "gpu.h"

namespace tide_cuda {

// dst[rows[r] * width + k] += values[r * width + k]; repeated rows add up.
template <typename T>
__global__ void AddRowsKernel(const int64_t* rows, const T* values, int64_t width, int64_t n,
                              T* dst) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t r = i / width;
    AtomicAdd(dst + rows[r] * width + (i - r * width), values[i]);
  }
}

// The SelectedRows inputs X[0], ..., X[n - 1] merged into SelectedRows Out: every listed value
// row is added into its merged row's slot.
template <typename T>
void MergeInputsIntoOut(const KernelContext& ctx, const Gpu& g, size_t n) {
  const tide::ops::SparseSum sum = tide::ops::GetSparseSum(ctx, n);
  const tide::ops::MergedRowIndex merged = tide::ops::MergeRowIndex(sum.rows);
  tide::SelectedRows out = ctx.OutputVar("Out").GetSelectedRows();
  const int64_t count = static_cast<int64_t>(merged.rows.size());
  // Built apart from the inputs (Out may be one of them), then copied into Out.
  T* acc = g.Temp<T>(count * sum.width);
  g.Zero(acc, sizeof(T) * size_t(count * sum.width));
  const int64_t* at = nullptr;
  if (!merged.at.empty()) {
    int64_t* d = g.Temp<int64_t>(static_cast<int64_t>(merged.at.size()));
    g.CopyFromHost(d, merged.at.data(), sizeof(int64_t) * merged.at.size());
    at = d;
  }
  for (const Tensor& v : sum.values) {
    const int64_t listed = v.numel();
    if (listed > 0)
      Launch(g, "AddRowsKernel", listed, AddRowsKernel<T>, at, DeviceData<T>(g, v), sum.width,
             listed, acc);
    at += sum.width ? listed / sum.width : 0;
  }
  out.set_height(sum.height);
  T* o = out.value().mutable_data<T>({count, sum.width}, g.place());
  g.CopyD2D(o, acc, sizeof(T) * size_t(count * sum.width));
  out.set_rows(merged.rows);
}

}  // namespace tide_cuda
