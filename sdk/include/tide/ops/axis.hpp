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
// softmax_with_cross_entropy). Taken as int64 so that a long attribute or an int64 tensor's value
// is checked whole, never narrowed first.
inline int NormAxis(const char* op, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  TIDE_CHECK(a >= 0 && a < r, "op '", op, "': axis ", axis, " is out of range for rank ", rank);
  return static_cast<int>(a);
}

// Dims as [pre, n, post] around `axis`, the normalised axis in `axis` (softmax).
struct AxisSplit {
  int64_t pre, n, post;
  int axis;
};
inline AxisSplit SplitAt(const char* op, const Dims& d, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(d.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  TIDE_CHECK(a >= 0 && a < rank, "op '", op, "': axis ", axis, " is out of range for dims ",
             ToString(d));
  const auto i = static_cast<size_t>(a);
  return {DimsProduct(d, 0, i), d[i], DimsProduct(d, i + 1, d.size()), static_cast<int>(a)};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_AXIS_HPP_
