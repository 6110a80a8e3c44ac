// tide/ops/index_shape.hpp: the shape rules of the index ops and Paddle 2.x's flatten, with their
// errors, for every implementation of them: flatten_contiguous_range, gather along an axis,
// gather_nd, arg_max / arg_min. Unknown (-1) dims pass through at compile time.
#ifndef TIDE_OPS_INDEX_SHAPE_HPP_
#define TIDE_OPS_INDEX_SHAPE_HPP_

#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tide {
namespace ops {

// flatten_contiguous_range: dims [start_axis, stop_axis] (negative: from the end) become one; a
// 0-D X becomes [1].
inline Dims FlattenRangeDims(const char* op, const Dims& x, int start, int stop) {
  if (x.empty()) return {1};
  const int r = static_cast<int>(x.size());
  TIDE_CHECK(start >= -r && start < r && stop >= -r && stop < r, "op '", op, "': start_axis ",
             start, " and stop_axis ", stop, " must be in [", -r, ", ", r, ") for X ", ToString(x));
  if (start < 0) start += r;
  if (stop < 0) stop += r;
  TIDE_CHECK(start <= stop, "op '", op, "': start_axis ", start, " is after stop_axis ", stop,
             " (X ", ToString(x), ")");
  Dims out(x.begin(), x.begin() + start);
  out.push_back(DimsProductOrUnknown(Dims(x.begin() + start, x.begin() + stop + 1)));
  out.insert(out.end(), x.begin() + stop + 1, x.end());
  return out;
}

// gather along the (normalised) `axis`: X's dims with that one replaced by Index's length.
inline Dims GatherAxisDims(const char* op, const Dims& x, const Dims& index, int axis) {
  GatherDims(op, x, index);  // checks X and Index
  Dims out = x;
  out[axis] = index[0];
  return out;
}

// gather_nd: Index [..., k] picks X[i0, ..., ik-1, :]; Out = Index's dims[:-1] + X's dims[k:].
inline Dims GatherNdDims(const char* op, const Dims& x, const Dims& index) {
  TIDE_CHECK(!index.empty(), "op '", op, "': Index must have rank >= 1");
  const int64_t k = index.back();
  TIDE_CHECK(k < 0 || k <= static_cast<int64_t>(x.size()), "op '", op, "': Index's last dim (", k,
             ") exceeds X's rank (X ", ToString(x), ")");
  Dims out(index.begin(), index.end() - 1);
  if (k >= 0) out.insert(out.end(), x.begin() + k, x.end());
  return out;
}

// arg_max / arg_min along `axis`: the axis dropped (keepdims: kept as 1); [1] when none is left.
inline Dims ArgOutDims(const char* op, const Dims& x, int64_t axis, bool keepdims) {
  const int a = NormAxis(op, static_cast<int>(axis), x.size());
  Dims od = x;
  if (keepdims) od[a] = 1;
  else od.erase(od.begin() + a);
  if (od.empty()) od.push_back(1);
  return od;
}

// Paddle's flatten = true: the index into the flattened X, Out [1] (keepdims: X's rank of 1s).
inline Dims ArgFlatOutDims(const Dims& x, bool keepdims) {
  return keepdims ? Dims(std::max<size_t>(x.size(), 1), 1) : Dims{1};
}

// Out's type from the dtype attribute: int32 or int64 (Paddle's -1: int64).
inline TideDataType ArgOutType(const char* op, int32_t dtype) {
  TIDE_CHECK(dtype == -1 || dtype == TIDE_INT32 || dtype == TIDE_INT64, "op '", op,
             "': dtype must be int32, int64 or -1 (int64), got ", dtype);
  return dtype == TIDE_INT32 ? TIDE_INT32 : TIDE_INT64;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INDEX_SHAPE_HPP_
