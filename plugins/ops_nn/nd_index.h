// nd_index.h: row-major walks over an N-d box, for the tensor ops that move elements by index
// (slice, strided_slice, pad, expand, stack, cumsum, ...).
#pragma once

#include <cstdint>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_nn {

// Row-major strides of dims.
inline std::vector<int64_t> Strides(const tide::Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// fn(idx, linear) for every index of `dims` in row-major order (idx: one value per dim).
template <typename F>
void ForEachIndex(const tide::Dims& dims, F&& fn) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(idx, linear);
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

// fn(i, off) for every element i of `out` and the element `off` of X (dims `x`, of out's rank,
// each dividing out's) it repeats: Out[i] = X[i mod X's dims] (expand, tile).
template <typename F>
void ForEachRepeat(const tide::Dims& x, const tide::Dims& out, F&& fn) {
  const std::vector<int64_t> xs = Strides(x);
  ForEachIndex(out, [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] % x[d]) * xs[d];
    fn(i, off);
  });
}

}  // namespace ops_nn
