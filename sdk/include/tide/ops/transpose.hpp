// tide/ops/transpose.hpp: the shape rules of transpose / transpose2: `axis` must be a permutation
// of X's axes, and Out.dims[i] = X.dims[axis[i]].
#ifndef TIDE_OPS_TRANSPOSE_HPP_
#define TIDE_OPS_TRANSPOSE_HPP_

#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

// The `axis` attribute checked against X's dims: as many entries as X has dims, each axis once.
inline std::vector<int> CheckedPerm(const char* op, const std::vector<int32_t>& axis,
                                    const Dims& x) {
  TIDE_CHECK(axis.size() == x.size(), "op '", op, "': axis has ", axis.size(), " entries but X ",
             ToString(x), " has rank ", x.size());
  std::vector<int> perm(axis.size());
  std::vector<bool> seen(axis.size(), false);
  for (size_t i = 0; i < axis.size(); ++i) {
    int a = axis[i];
    TIDE_CHECK(a >= 0 && a < static_cast<int>(x.size()) && !seen[a], "op '", op,
               "': axis must be a permutation of [0, ", x.size(), "), got entry ", a, " at ", i);
    seen[a] = true;
    perm[i] = a;
  }
  return perm;
}

// Dims permuted: out[i] = x[perm[i]].
inline Dims Permuted(const Dims& x, const std::vector<int>& perm) {
  Dims out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x[perm[i]];
  return out;
}

// The permutation that undoes `perm` (the grad's).
inline std::vector<int> InversePerm(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  return inv;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_TRANSPOSE_HPP_
