// join_cut.h: the CPU copies of concat, split, stack and unstack (and their grads): parts of
// [pre, size_i, post] joined into, or cut out of, a [pre, total, post] whole as
// tide/ops/split_concat.hpp reads them.
#pragma once

#include <cstring>
#include <tide/ops/split_concat.hpp>

namespace ops_nn {

// Copies a [pre, size_i, post] block of each part into / out of a [pre, total, post] whole.
template <typename T>
void Join(const tide::ops::JoinArgs<T>& a) {
  int64_t offset = 0;
  for (size_t p = 0; p < a.sizes.size(); ++p) {
    const int64_t width = a.sizes[p] * a.post;
    for (int64_t i = 0; i < a.pre; ++i)
      std::memcpy(a.whole + i * a.total * a.post + offset, a.parts[p] + i * width,
                  sizeof(T) * width);
    offset += width;
  }
}
template <typename T>
void Cut(const tide::ops::CutArgs<T>& a) {
  int64_t offset = 0;
  for (size_t p = 0; p < a.sizes.size(); ++p) {
    const int64_t width = a.sizes[p] * a.post;
    for (int64_t i = 0; a.parts[p] && i < a.pre; ++i)
      std::memcpy(a.parts[p] + i * width, a.whole + i * a.total * a.post + offset,
                  sizeof(T) * width);
    offset += width;
  }
}

}  // namespace ops_nn
