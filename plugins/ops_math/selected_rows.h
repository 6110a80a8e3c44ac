// selected_rows.h: Fluid's MergeAdd for the ops_math kernels that take SelectedRows (sum,
// merge_selected_rows, clip, clip_by_norm): a sparse gradient may list a row several times (an id
// looked up twice); merged, it lists each distinct row once, ascending, holding the sum of that
// row's listed values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/ops/sum.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_math {

template <typename T>
struct MergedRows {
  std::vector<int64_t> rows;  // distinct, ascending
  std::vector<T> values;      // rows.size() x width, the sums
};

// `listed` names the rows of the `width`-wide value rows held, in order, by `values` (together
// listed.size() rows). The result is built apart from the inputs, so Out may be one of them.
template <typename T>
MergedRows<T> MergeAdd(const std::vector<int64_t>& listed, const std::vector<tide::Tensor>& values,
                       int64_t width) {
  MergedRows<T> m;
  m.rows = listed;
  std::sort(m.rows.begin(), m.rows.end());
  m.rows.erase(std::unique(m.rows.begin(), m.rows.end()), m.rows.end());
  m.values.assign(m.rows.size() * static_cast<size_t>(width), T(0));
  size_t k = 0;  // index into listed
  for (const tide::Tensor& v : values) {
    const T* d = v.data<T>();
    const int64_t n = width ? v.numel() / width : 0;
    for (int64_t r = 0; r < n; ++r, ++k) {
      const auto at = std::lower_bound(m.rows.begin(), m.rows.end(), listed[k]) - m.rows.begin();
      T* dst = m.values.data() + at * width;
      for (int64_t j = 0; j < width; ++j) dst[j] += d[r * width + j];
    }
  }
  return m;
}

// Writes merged rows into SelectedRows `out` of `height` (value [rows, width]).
template <typename T>
void SetMerged(tide::SelectedRows out, const MergedRows<T>& m, int64_t height, int64_t width,
               const tide::Place& place) {
  out.set_height(height);
  T* o = out.value().mutable_data<T>({static_cast<int64_t>(m.rows.size()), width}, place);
  std::copy(m.values.begin(), m.values.end(), o);
  out.set_rows(m.rows);
}

// The SelectedRows inputs X[0], ..., X[n - 1] (read and checked by tide/ops/sum.hpp) merged into
// SelectedRows Out: the kernel of sum over sparse inputs and of merge_selected_rows.
template <typename T>
void MergeInputsIntoOut(tide::KernelContext& ctx, size_t n) {
  const tide::ops::SparseSum in = tide::ops::GetSparseSum(ctx, n);
  SetMerged(ctx.OutputVar("Out").GetSelectedRows(), MergeAdd<T>(in.rows, in.values, in.width),
            in.height, in.width, ctx.place());
}

// SelectedRows input X (read and checked by tide/ops/sum.hpp, as a sum's one input) merged: what
// clip and clip_by_norm change before they write Out.
template <typename T>
struct MergedX {
  MergedRows<T> merged;
  int64_t height, width;
};

template <typename T>
MergedX<T> MergeX(const tide::KernelContext& ctx) {
  const tide::ops::SparseSum in = tide::ops::GetSparseSum(ctx, 1);
  return {MergeAdd<T>(in.rows, in.values, in.width), in.height, in.width};
}

}  // namespace ops_math
