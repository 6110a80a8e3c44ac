// top_k.h: the selection top_k and top_k_v2 share: the k largest (or smallest) of each line of n
// values `post` apart, with their positions; NaN counts as the largest value (Paddle's rule) and
// equal values keep the lower index first. `sorted`: in order of value; else the k chosen in
// their order in X (Paddle's CPU kernel).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common.h"

namespace ops_nn {

template <typename T>
bool TopKIsNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// x, out and indices as [pre, n, post] / [pre, k, post].
template <typename T>
void TopKLines(const KernelContext& ctx, const T* x, int64_t pre, int64_t n, int64_t post,
               int64_t k, bool largest, bool sorted, T* out, int64_t* indices) {
  ParallelFor(ctx, pre * post, n * 4, [=](int64_t b, int64_t e) {
    std::vector<int64_t> order(n);
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / post, q = r % post;
      const T* line = x + p * n * post + q;
      auto at = [line, post](int64_t i) { return line[i * post]; };
      // a before b: a's value comes first (NaN as the largest), equal values by index.
      auto before = [&](int64_t a, int64_t b2) {
        const T va = at(a), vb = at(b2);
        const bool na = TopKIsNan(va), nb = TopKIsNan(vb);
        if (na || nb) {
          if (na && nb) return a < b2;
          return largest ? na : nb;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b2;
      };
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      if (!sorted) std::sort(order.begin(), order.begin() + k);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t o = p * k * post + j * post + q;
        out[o] = at(order[j]);
        indices[o] = order[j];
      }
    }
  });
}

}  // namespace ops_nn
