// tide/ops/dims.hpp: dims arithmetic that Tide's standard ops share (products, Fluid's
// flatten-to-2D, dims unknown at compile time, an (h, w) attribute, a gradient's dims, XShape).
#ifndef TIDE_OPS_DIMS_HPP_
#define TIDE_OPS_DIMS_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace tide {
namespace ops {

// Product of d[begin, end) (1 when empty), for known dims.
inline int64_t DimsProduct(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}
inline int64_t DimsProduct(const Dims& d) { return DimsProduct(d, 0, d.size()); }

// Product of d[begin, end); -1 when any of those dims is unknown (< 0, at compile time).
inline int64_t DimsProductOrUnknown(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    if (d[i] < 0) return -1;
    p *= d[i];
  }
  return p;
}
inline int64_t DimsProductOrUnknown(const Dims& d) { return DimsProductOrUnknown(d, 0, d.size()); }

// Rows/cols of Fluid's flatten_to_2d: the dims before `num_col_dims`, and the rest.
inline std::pair<int64_t, int64_t> Flatten2D(const Dims& d, int num_col_dims) {
  return {DimsProduct(d, 0, num_col_dims), DimsProduct(d, num_col_dims, d.size())};
}

// a == b, or either is unknown (< 0) at compile time.
inline bool DimsCompatible(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }
// The same rank, and each dim compatible (as above).
inline bool DimsCompatible(const Dims& a, const Dims& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!DimsCompatible(a[i], b[i])) return false;
  return true;
}

// Checks a 2-value ints attribute (ksize, strides, paddings, dilations: h, w).
inline void CheckPair(const char* op, const char* name, const std::vector<int32_t>& v) {
  TIDE_CHECK(v.size() == 2, "op '", op, "': attribute '", name, "' needs 2 values (h, w), got ",
             v.size());
}

// A grad op's input gradient `name` (e.g. "Out@GRAD") has the dims of what it is the gradient of.
// A 0-D gradient matches a forward output of [1] (the same one element): Paddle 2.5+ programs
// declare [] where the forward kernel made Fluid's [1].
inline void CheckGradDims(const char* op, const char* name, const Dims& got, const Dims& want) {
  const bool scalar = (got.empty() && want == Dims{1}) || (want.empty() && got == Dims{1});
  TIDE_CHECK(got == want || scalar, "op '", op, "': ", name, " has dims ", ToString(got),
             ", expected ", ToString(want));
}

// The XShape convention of the *2 ops (reshape2, flatten2, transpose2): XShape holds no data and
// has dims [0] + X's dims, so the grad op learns X's dims without keeping X alive.
inline Dims XShapeDims(const Dims& x) {
  Dims xs{0};
  xs.insert(xs.end(), x.begin(), x.end());
  return xs;
}

// In a grad kernel: the forward X's dims, from XShape[1:] (the *2 grads) or from X (the v1 grads).
inline Dims ForwardXDims(const KernelContext& ctx) {
  if (ctx.HasInput("XShape")) {
    Dims xs = ctx.Input("XShape").dims();
    return Dims(xs.begin() + 1, xs.end());
  }
  return ctx.Input("X").dims();
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_DIMS_HPP_
