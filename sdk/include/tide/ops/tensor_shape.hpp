// tide/ops/tensor_shape.hpp: the shape rules of Fluid's tensor ops (slice, strided_slice,
// squeeze2/unsqueeze2, expand/expand_as, stack/unstack, gather, one_hot, pad), with their errors,
// for every implementation of them. Unknown (-1) dims pass through at compile time. Also
// squeeze2 / unsqueeze2's axes as a kernel reads them (Paddle 2.x's axes tensors).
#ifndef TIDE_OPS_TENSOR_SHAPE_HPP_
#define TIDE_OPS_TENSOR_SHAPE_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// slice / strided_slice: per dim of X, the first index, the step and the count taken.
struct SliceGeom {
  Dims start, step, count;
  Dims out;  // Out's dims (decrease_axis dims dropped; [1] when none is left)
};

// Fluid's slice: starts/ends per axis; negative ones count from the end; clamped to [0, dim].
// strided_slice adds `strides` (negative: backwards, Python's rules). decrease_axis drops those
// dims, each of which must then take exactly one element.
inline SliceGeom GetSliceGeom(const char* op, const Dims& x, const std::vector<int32_t>& axes,
                              const std::vector<int32_t>& starts, const std::vector<int32_t>& ends,
                              const std::vector<int32_t>& strides,
                              const std::vector<int32_t>& decrease_axis) {
  TIDE_CHECK(starts.size() == axes.size() && ends.size() == axes.size() &&
                 (strides.empty() || strides.size() == axes.size()),
             "op '", op, "': axes, starts, ends", strides.empty() ? "" : " and strides",
             " must have one value per axis (", axes.size(), " axes, ", starts.size(), " starts, ",
             ends.size(), " ends)");
  SliceGeom g;
  const size_t rank = x.size();
  g.start.assign(rank, 0);
  g.step.assign(rank, 1);
  g.count = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = NormAxis(op, axes[i], rank);
    const int64_t d = x[a];
    const int64_t step = strides.empty() ? 1 : strides[i];
    TIDE_CHECK(step != 0, "op '", op, "': strides[", i, "] is 0");
    if (d < 0) {  // unknown at compile time
      g.count[a] = -1;
      continue;
    }
    int64_t s = starts[i], e = ends[i];
    if (step > 0) {
      s = s < 0 ? std::max<int64_t>(s + d, 0) : std::min<int64_t>(s, d);
      e = e < 0 ? std::max<int64_t>(e + d, 0) : std::min<int64_t>(e, d);
      g.count[a] = e > s ? (e - s + step - 1) / step : 0;
    } else {  // backwards: start in [-1, d - 1], end in [-1, d - 1] (-1: before the first)
      s = s < 0 ? std::max<int64_t>(s + d, -1) : std::min<int64_t>(s, d - 1);
      e = e < 0 ? std::max<int64_t>(e + d, -1) : std::min<int64_t>(e, d - 1);
      g.count[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    g.start[a] = s;
    g.step[a] = step;
  }
  std::vector<bool> drop(rank, false);
  for (int32_t da : decrease_axis) {
    const int a = NormAxis(op, da, rank);
    TIDE_CHECK(g.count[a] == 1 || g.count[a] < 0, "op '", op, "': decrease_axis ", da, " takes ",
               g.count[a], " elements; it must take exactly 1");
    drop[a] = true;
  }
  for (size_t i = 0; i < rank; ++i)
    if (!drop[i]) g.out.push_back(g.count[i]);
  if (g.out.empty()) g.out.push_back(1);
  return g;
}

// squeeze2: the listed dims of size 1 are dropped (every size-1 dim when `axes` is empty); a
// listed dim of another size is kept, as in Fluid.
inline Dims SqueezeDims(const char* op, const Dims& x, const std::vector<int32_t>& axes) {
  std::vector<bool> drop(x.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
  } else {
    for (int32_t a : axes) {
      const int n = NormAxis(op, a, x.size());
      drop[n] = x[n] == 1;
    }
  }
  Dims out;
  for (size_t i = 0; i < x.size(); ++i)
    if (!drop[i]) out.push_back(x[i]);
  return out;
}

// unsqueeze2: a 1 inserted at each of `axes` in turn (negative: counted in the growing dims).
// No axes leave X as it is, as in Paddle 3.x (whose paddle.einsum writes such an unsqueeze for an
// operand its '...' needs no dims added to).
inline Dims UnsqueezeDims(const char* op, const Dims& x, const std::vector<int32_t>& axes) {
  Dims out = x;
  for (int32_t a : axes) {
    const int r = static_cast<int>(out.size()) + 1;
    const int n = a < 0 ? a + r : a;
    TIDE_CHECK(n >= 0 && n < r, "op '", op, "': axis ", a, " is out of range for rank ", r);
    out.insert(out.begin() + n, 1);
  }
  return out;
}

// expand: each dim of X repeated expand_times[i] times.
inline Dims ExpandDims(const char* op, const Dims& x, const std::vector<int32_t>& times) {
  TIDE_CHECK(times.size() == x.size(), "op '", op, "': expand_times has ", times.size(),
             " values but X ", ToString(x), " has rank ", x.size());
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    TIDE_CHECK(times[i] >= 1, "op '", op, "': expand_times[", i, "] = ", times[i], " must be >= 1");
    if (x[i] >= 0) out[i] = x[i] * times[i];
  }
  return out;
}

// expand_as: the repeats that make X the target's dims (each target dim a multiple of X's).
inline std::vector<int32_t> ExpandAsTimes(const char* op, const Dims& x, const Dims& target) {
  TIDE_CHECK(x.size() == target.size(), "op '", op, "': target_tensor ", ToString(target),
             " must have X's rank (X ", ToString(x), ")");
  std::vector<int32_t> t(x.size(), 1);
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] < 0 || target[i] < 0) continue;
    TIDE_CHECK(x[i] > 0 && target[i] % x[i] == 0, "op '", op, "': target dim ", i, " (", target[i],
               ") is not a multiple of X's (", x[i], ")");
    t[i] = static_cast<int32_t>(target[i] / x[i]);
  }
  return t;
}

// stack: n tensors of X's dims, a new dim of n at `axis` (in [-(rank+1), rank]).
inline Dims StackDims(const char* op, const std::vector<Dims>& xs, int axis) {
  TIDE_CHECK(!xs.empty(), "op '", op, "': needs at least one input");
  for (size_t i = 1; i < xs.size(); ++i) {
    bool ok = xs[i].size() == xs[0].size();
    for (size_t d = 0; ok && d < xs[0].size(); ++d) ok = DimsCompatible(xs[i][d], xs[0][d]);
    TIDE_CHECK(ok, "op '", op, "': input ", i, " has dims ", ToString(xs[i]), ", input 0 ",
               ToString(xs[0]));
  }
  const int a = NormAxis(op, axis, xs[0].size() + 1);
  Dims out = xs[0];
  out.insert(out.begin() + a, static_cast<int64_t>(xs.size()));
  return out;
}

// gather: rows of X picked by a 1-D Index (or [N, 1]): [N] + X's dims after the first.
inline Dims GatherDims(const char* op, const Dims& x, const Dims& index) {
  TIDE_CHECK(!x.empty(), "op '", op, "': X must have rank >= 1");
  TIDE_CHECK(index.size() == 1 || (index.size() == 2 && DimsCompatible(index[1], 1)), "op '", op,
             "': Index must be 1-D (or [N, 1]), got ", ToString(index));
  Dims out = x;
  out[0] = index[0];
  return out;
}

// pad: paddings holds (before, after) per dim of X.
inline Dims PadDims(const char* op, const Dims& x, const std::vector<int32_t>& paddings) {
  TIDE_CHECK(paddings.size() == 2 * x.size(), "op '", op,
             "': paddings needs 2 values per dim of X ", ToString(x), ", got ", paddings.size());
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    TIDE_CHECK(paddings[2 * i] >= 0 && paddings[2 * i + 1] >= 0, "op '", op,
               "': paddings must be >= 0");
    if (x[i] >= 0) out[i] = x[i] + paddings[2 * i] + paddings[2 * i + 1];
  }
  return out;
}

// squeeze2 / unsqueeze2's Out dims: `axes`, or Paddle 2.x's AxesTensor (1-D) or AxesTensorList
// (one value each), read with `read` (see int_inputs.hpp), which override it.
template <typename Read = ReadOnHost>
Dims SqueezeOutDims(const KernelContext& ctx, const Dims& x, Read read = {}) {
  const char* op = ctx.op_type();
  auto axes = ctx.Attr<std::vector<int32_t>>("axes");
  const char* from = ctx.HasInput("AxesTensor")       ? "AxesTensor"
                     : ctx.HasInput("AxesTensorList") ? "AxesTensorList"
                                                      : nullptr;
  if (from) {
    const std::vector<int64_t> v = std::string(from) == "AxesTensor" ? IntValues(ctx, from, 0, read)
                                                                     : IntScalars(ctx, from, read);
    if (!v.empty()) axes = AsInt32s(ctx, from, v);
  }
  return std::string(op) == "squeeze2" ? SqueezeDims(op, x, axes) : UnsqueezeDims(op, x, axes);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_TENSOR_SHAPE_HPP_
