// tide/ops/reduce.hpp: the shape rule of Fluid's reduce_* ops (attributes dim, keep_dim,
// reduce_all), with its errors, for every implementation of them.
#ifndef TIDE_OPS_REDUCE_HPP_
#define TIDE_OPS_REDUCE_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

struct ReduceShape {
  std::vector<bool> reduced;  // per dim of X
  Dims keep;                  // X's dims with 1 on each reduced dim (keep_dim's Out)
  Dims out;                   // Out's dims: keep, or without the reduced dims ([1] when none left)
};

// dims: the reduced dims (negative ones count from the end; repeats allowed); reduce_all, or
// an empty dims, reduces every dim. Unknown (-1) dims of X pass through to Out.
inline ReduceShape GetReduceShape(const char* op, const Dims& x, const std::vector<int32_t>& dims,
                                  bool keep_dim, bool reduce_all) {
  const int rank = static_cast<int>(x.size());
  ReduceShape s;
  reduce_all = reduce_all || dims.empty();
  s.reduced.assign(x.size(), reduce_all);
  if (!reduce_all) {
    for (int32_t d : dims) {
      TIDE_CHECK(d >= -rank && d < rank, "op '", op, "': dim ", d, " is out of range for X ",
                 ToString(x), " (rank ", rank, ")");
      s.reduced[d < 0 ? d + rank : d] = true;
    }
  }
  for (int i = 0; i < rank; ++i) {
    s.keep.push_back(s.reduced[i] ? 1 : x[i]);
    if (!s.reduced[i]) s.out.push_back(x[i]);
  }
  if (keep_dim) s.out = s.keep;
  if (s.out.empty()) s.out.push_back(1);
  return s;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_REDUCE_HPP_
