// tide/ops/axis.hpp: the axis rules of Tide's standard ops: an axis attribute normalised (negative
// counts from the end), and dims seen as [pre, n, post] around one axis.
#ifndef TIDE_OPS_AXIS_HPP_
#define TIDE_OPS_AXIS_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// `axis` in [0, rank) (negative counts from the end); throws naming the op (concat, split,
// softmax_with_cross_entropy).
inline int NormAxis(const char* op, int axis, size_t rank) {
  const int r = static_cast<int>(rank);
  const int a = axis < 0 ? axis + r : axis;
  TIDE_CHECK(a >= 0 && a < r, "op '", op, "': axis ", axis, " is out of range for rank ", rank);
  return a;
}

// Dims as [pre, n, post] around `axis`, the normalised axis in `axis` (softmax).
struct AxisSplit {
  int64_t pre, n, post;
  int axis;
};
inline AxisSplit SplitAt(const char* op, const Dims& d, int axis) {
  const int rank = static_cast<int>(d.size());
  const int a = axis < 0 ? axis + rank : axis;
  TIDE_CHECK(a >= 0 && a < rank, "op '", op, "': axis ", axis, " is out of range for dims ",
             ToString(d));
  return {DimsProduct(d, 0, a), d[a], DimsProduct(d, a + 1, d.size()), a};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_AXIS_HPP_
