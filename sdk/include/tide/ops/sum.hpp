// tide/ops/sum.hpp: the inputs of sum, read and checked for every implementation: dense tensors
// of one dims; SelectedRows inputs (a sparse gradient that reaches a table from several places),
// which share a height and a row width, the result listing each distinct row once, ascending,
// with the sum of its values (Fluid 1.5+'s merged sum; MergeRowIndex says where each listed row
// goes); or a mix, whose sparse rows add into the dense inputs' rows.
#ifndef TIDE_OPS_SUM_HPP_
#define TIDE_OPS_SUM_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace tide {
namespace ops {

struct SparseSum {
  int64_t height = -1;
  int64_t width = 1;           // values per row (1 when no input says)
  std::vector<int64_t> rows;   // every input's rows, in input order
  std::vector<Tensor> values;  // the values of the inputs that have rows, in input order
  int64_t row_count() const { return static_cast<int64_t>(rows.size()); }
};

// Reads and checks the `n` SelectedRows inputs X of a sum: each value holds one row per listed row,
// all with the same width and height. An input listing no rows adds nothing and is not checked
// (Fluid skips it: an empty sparse gradient may have no height or value set); the height is the
// first input's that lists rows (input 0's when none does).
inline SparseSum GetSparseSum(const KernelContext& ctx, size_t n) {
  const char* op = ctx.op_type();
  SparseSum s;
  int64_t width = -1;
  int64_t empty_width = -1;  // an input listing no rows may still say ([0, width])
  size_t first = n;          // the first input listing rows
  for (size_t i = 0; i < n; ++i) {
    SelectedRows sr = ctx.InputVar("X", i).GetSelectedRows();
    if (i == 0) s.height = sr.height();
    const std::vector<int64_t> r = sr.rows();
    if (r.empty()) {
      const Dims vd = sr.value().dims();
      if (vd.size() > 1 && empty_width < 0) empty_width = DimsProduct(vd, 1, vd.size());
      continue;
    }
    if (first == n) {
      first = i;
      s.height = sr.height();
    }
    TIDE_CHECK(sr.height() == s.height, "op '", op, "': sparse input ", i, " ('",
               ctx.InputName("X", i), "') has height ", sr.height(), ", input ", first, " has ",
               s.height);
    Tensor v = sr.value();
    const Dims vd = v.dims();
    TIDE_CHECK(!vd.empty(), "op '", op, "': sparse input ", i, " ('", ctx.InputName("X", i),
               "') lists ", r.size(), " rows but has no value");
    TIDE_CHECK(vd[0] == static_cast<int64_t>(r.size()), "op '", op, "': sparse input ", i, " ('",
               ctx.InputName("X", i), "') lists ", r.size(), " rows but its value ", ToString(vd),
               " holds ", vd[0]);
    const int64_t w = DimsProduct(vd, 1, vd.size());
    if (width < 0) width = w;
    TIDE_CHECK(w == width, "op '", op, "': sparse input ", i, " ('", ctx.InputName("X", i),
               "') has rows of ", w, " values, an earlier input of ", width);
    s.rows.insert(s.rows.end(), r.begin(), r.end());
    s.values.push_back(v);
  }
  if (width < 0) width = empty_width;
  if (width >= 0) s.width = width;
  return s;
}

// The merged rows of a sparse sum: `rows` each distinct listed row once, ascending, and `at[k]`
// the index in `rows` of the k-th listed row (so out[at[k]] += the k-th listed value row).
struct MergedRowIndex {
  std::vector<int64_t> rows;
  std::vector<int64_t> at;
};

inline MergedRowIndex MergeRowIndex(const std::vector<int64_t>& listed) {
  MergedRowIndex m;
  m.rows = listed;
  std::sort(m.rows.begin(), m.rows.end());
  m.rows.erase(std::unique(m.rows.begin(), m.rows.end()), m.rows.end());
  m.at.reserve(listed.size());
  for (int64_t r : listed)
    m.at.push_back(std::lower_bound(m.rows.begin(), m.rows.end(), r) - m.rows.begin());
  return m;
}

// sum over dense inputs: X (at least one, all of one dims).
inline std::vector<Tensor> GetDenseSumInputs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  TIDE_CHECK(!xs.empty(), "op '", op, "' needs at least one input");
  for (size_t i = 1; i < xs.size(); ++i)
    TIDE_CHECK(xs[i].dims() == xs[0].dims(), "op '", op, "': input ", i, " ('",
               ctx.InputName("X", i), "') has dims ", ToString(xs[i].dims()), ", input 0 has ",
               ToString(xs[0].dims()));
  return xs;
}

// sum over dense and SelectedRows inputs: Out has the dense inputs' dims [height, ...]; each
// sparse input listing rows has that height and lists rows inside it, each row `width` values
// (one listing none is left out).
struct MixedSum {
  Dims dims;
  int64_t width = 0;
  std::vector<Tensor> dense;
  struct Sparse {
    std::vector<int64_t> rows;
    Tensor value;
  };
  std::vector<Sparse> sparse;
};

inline MixedSum GetMixedSum(const KernelContext& ctx, size_t n) {
  const char* op = ctx.op_type();
  MixedSum m;
  bool have_dense = false;
  for (size_t i = 0; i < n && !have_dense; ++i)
    if (ctx.InputVar("X", i).IsTensor()) {
      m.dims = ctx.Input("X", i).dims();
      have_dense = true;
    }
  TIDE_CHECK(have_dense && !m.dims.empty(), "op '", op, "': the dense inputs ", ToString(m.dims),
             " must have rank >= 1 ([height, ...]) to add SelectedRows to");
  const int64_t height = m.dims[0];
  m.width = height ? DimsProduct(m.dims) / height : 0;
  for (size_t i = 0; i < n; ++i) {
    Variable v = ctx.InputVar("X", i);
    if (v.IsTensor()) {
      Tensor t = v.GetTensor();
      TIDE_CHECK(t.dims() == m.dims, "op '", op, "': input ", i, " ('", ctx.InputName("X", i),
                 "') has dims ", ToString(t.dims()), ", the dense inputs ", ToString(m.dims));
      m.dense.push_back(t);
      continue;
    }
    SelectedRows sr = v.GetSelectedRows();
    if (sr.rows().empty()) continue;  // adds nothing; Fluid does not check it
    TIDE_CHECK(sr.height() == height, "op '", op, "': sparse input ", i, " ('",
               ctx.InputName("X", i), "') has height ", sr.height(), ", the dense inputs ", height,
               " rows");
    MixedSum::Sparse sp{sr.rows(), sr.value()};
    for (int64_t r : sp.rows)
      TIDE_CHECK(r >= 0 && r < height, "op '", op, "': sparse input ", i, " lists row ", r,
                 " outside [0, ", height, ")");
    m.sparse.push_back(std::move(sp));
  }
  return m;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SUM_HPP_
