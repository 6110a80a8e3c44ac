// shapes.h: the shape rules the CUDA kernels share with the CPU op packs (Fluid's elementwise
// broadcast, flatten-to-2D, an axis split): the same arithmetic and the same error messages, so a
// program fails alike on either place.
#pragma once

#include <tide/plugin.hpp>

#include <cstdint>
#include <utility>

namespace tide_cuda {

// Fluid's broadcast: Y's dims (trailing 1s dropped) match X's dims [axis, axis + rank(Y)), and
// Y is repeated over X's leading `pre` and trailing `post` elements. axis = -1 aligns the ends.
struct Broadcast {
  int64_t pre = 1, n = 1, post = 1;
  bool same = false;  // X and Y have the same number of elements in the same order
};

inline int64_t DimsProduct(const tide::Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

inline Broadcast GetBroadcast(const char* op, const tide::Dims& x, const tide::Dims& y_in,
                              int axis) {
  Broadcast b;
  if (x == y_in) {
    b.same = true;
    b.n = DimsProduct(x, 0, x.size());
    return b;
  }
  TIDE_CHECK(x.size() >= y_in.size(), "op '", op, "': Y's rank (", tide::ToString(y_in),
             ") must not exceed X's (", tide::ToString(x), ")");
  // The default axis aligns Y's full dims with X's trailing ones; then Y's trailing 1s, which
  // carry no data, are dropped.
  int a = axis < 0 ? static_cast<int>(x.size() - y_in.size()) : axis;
  tide::Dims y = y_in;
  while (y.size() > 1 && y.back() == 1) y.pop_back();
  TIDE_CHECK(a >= 0 && a + y.size() <= x.size(), "op '", op, "': axis ", axis, " places Y ",
             tide::ToString(y_in), " outside X ", tide::ToString(x));
  for (size_t i = 0; i < y.size(); ++i)
    TIDE_CHECK(x[a + i] == y[i] || (y[i] == 1 && DimsProduct(y, 0, y.size()) == 1), "op '", op,
               "': cannot broadcast Y ", tide::ToString(y_in), " onto X ", tide::ToString(x),
               " at axis ", a, " (dim ", a + i, ": ", x[a + i], " vs ", y[i], ")");
  b.pre = DimsProduct(x, 0, a);
  b.n = DimsProduct(y, 0, y.size());
  b.post = DimsProduct(x, a + y.size(), x.size());
  if (b.n == 1 && DimsProduct(x, a, a + y.size()) != 1) {  // Y is a scalar: repeat over all X
    b.pre = 1;
    b.post = DimsProduct(x, 0, x.size());
  }
  return b;
}

// Rows/cols of Fluid's flatten_to_2d.
inline std::pair<int64_t, int64_t> Flatten2D(const tide::Dims& d, int num_col_dims) {
  return {DimsProduct(d, 0, num_col_dims), DimsProduct(d, num_col_dims, d.size())};
}

// [pre, n, post] view of dims around `axis` (negative counts from the end).
struct AxisSplit {
  int64_t pre, n, post;
  int axis;
};
inline AxisSplit SplitAt(const char* op, const tide::Dims& d, int axis) {
  int rank = static_cast<int>(d.size());
  int a = axis < 0 ? axis + rank : axis;
  TIDE_CHECK(a >= 0 && a < rank, "op '", op, "': axis ", axis, " is out of range for dims ",
             tide::ToString(d));
  return {DimsProduct(d, 0, a), d[a], DimsProduct(d, a + 1, rank), a};
}

}  // namespace tide_cuda
