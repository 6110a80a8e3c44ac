// selected_rows_util.h: SelectedRows in the CUDA tests' programs. A SelectedRows input is made in
// the scope before the run (a feed holds LoDTensors only), its value on the host, so the GPU
// kernels must move it themselves; results are read back to the host. Header-only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/framework/selected_rows.h"
#include "core/framework/tensor_util.h"
#include "cuda_test_util.h"

namespace tide::test::cuda {

// A SelectedRows variable of `b`, persistable (it lives in the scope); `dims` when not empty.
inline core::VarDesc* DeclareSelectedRows(core::BlockDesc* b, const std::string& name,
                                          TideDataType dt, const std::vector<int64_t>& dims = {}) {
  core::VarDesc* v = b->Var(name);
  v->set_type(TIDE_VAR_SELECTED_ROWS);
  v->set_dtype(dt);
  if (!dims.empty()) v->set_shape(dims);
  v->set_persistable(true);
  return v;
}

// The SelectedRows `name` in `scope`: `height`, `rows` and their values (one row of `value` each).
inline void PutSelectedRows(core::Scope* scope, const std::string& name, int64_t height,
                            const std::vector<int64_t>& rows, const TestTensor& value) {
  auto* sr = scope->Var(name)->GetMutable<core::SelectedRows>();
  sr->set_height(height);
  *sr->mutable_rows() = rows;
  *sr->mutable_value() = ToLoD(value);
}

struct SparseResult {
  std::vector<int64_t> rows;
  int64_t height = 0;
  TestTensor value;
};

// A SelectedRows, its value copied to the host.
inline SparseResult ReadSelectedRows(const core::SelectedRows& sr) {
  SparseResult r;
  r.rows = sr.rows();
  r.height = sr.height();
  core::LoDTensor host;
  core::TensorCopySync(sr.value(), Cpu(), &host);
  r.value = FromLoD(host);
  return r;
}

// The merge written out by hand: each distinct row once, ascending, holding the sum of the
// values listed for it (value: one row per entry of `rows`).
inline std::vector<double> HandMerge(const std::vector<int64_t>& rows, const TestTensor& value) {
  const size_t cols = value.data.size() / rows.size();
  std::map<int64_t, std::vector<double>> sums;
  for (size_t k = 0; k < rows.size(); ++k) {
    std::vector<double>& s = sums[rows[k]];
    s.resize(cols, 0.0);
    for (size_t j = 0; j < cols; ++j) s[j] += value.data[k * cols + j];
  }
  std::vector<double> merged;
  for (const auto& [row, s] : sums) merged.insert(merged.end(), s.begin(), s.end());
  return merged;
}

}  // namespace tide::test::cuda
