// tide/ops/broadcast_dims.hpp: numpy's broadcast of two dims lists at compile time and at run
// time, for ops that broadcast part of their inputs' dims (batch dims, feature dims) and word
// their own errors.
#ifndef TIDE_OPS_BROADCAST_DIMS_HPP_
#define TIDE_OPS_BROADCAST_DIMS_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// The dims of `a` and `b` that do not broadcast (see BroadcastDims).
struct DimsClash {
  int64_t a = 0, b = 0;
};

// `a` and `b` aligned at their ends, numpy-style: a dim of 1 repeats, a dim unknown at compile
// time (< 0) passes and gives the other's (or stays unknown). Writes the result to `out`; returns
// false, with the first pair that differs (from the front) in `clash`, where they do not broadcast.
inline bool BroadcastDims(const Dims& a, const Dims& b, Dims* out, DimsClash* clash) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1) {
      *clash = {da, db};
      return false;
    }
    (*out)[i] = da == 1 ? db : (db == 1 ? da : (da >= 0 ? da : db));
  }
  return true;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BROADCAST_DIMS_HPP_
