// tide/ops/broadcast.hpp: Fluid's elementwise broadcast rule (elementwise_add/sub/mul/div/...,
// attribute `axis`), with its errors, for every implementation of the elementwise ops.
#ifndef TIDE_OPS_BROADCAST_HPP_
#define TIDE_OPS_BROADCAST_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// The element of Y that element i of X pairs with, for a Y with size-1 dims inside its aligned
// range (Y [2, 1, 4] on X [2, 3, 4]). X's dims are collapsed into runs where Y is present or
// repeated, so `rank` stays small; a plain struct, so a GPU kernel can take it by value.
struct BroadcastIndex {
  static constexpr int kMaxRank = 16;
  int rank = 0;
  int64_t dims[kMaxRank] = {};       // X's collapsed dims
  int64_t y_strides[kMaxRank] = {};  // Y's stride on each, 0 where Y is repeated
  TIDE_OPS_HOST_DEVICE int64_t operator()(int64_t i) const {
    int64_t j = 0;
    for (int d = rank - 1; d >= 0; --d) {
      j += (i % dims[d]) * y_strides[d];
      i /= dims[d];
    }
    return j;
  }
  // The innermost run: a CPU loop pairs a row of `InnerSize()` elements of X with Y elements
  // `InnerStride()` apart from operator()(row start), one index computation per row.
  TIDE_OPS_HOST_DEVICE int64_t InnerSize() const { return rank ? dims[rank - 1] : 1; }
  TIDE_OPS_HOST_DEVICE int64_t InnerStride() const { return rank ? y_strides[rank - 1] : 0; }
};

// Y's dims (trailing 1s dropped) match X's dims [axis, axis + rank(Y)), a Y dim of 1 being
// repeated over X's dim (as in Fluid), and Y is repeated over X's leading `pre` and trailing
// `post` elements. axis = -1 aligns Y's full dims with X's trailing ones. A Y of one element is
// a scalar, repeated over all of X. Out always has X's dims.
struct Broadcast {
  int64_t pre = 1, n = 1, post = 1;
  bool same = false;     // X and Y have the same dims: n elements in the same order
  int axis = 0;          // the dim of X where Y's first dim lies
  bool general = false;  // Y has a repeated (size-1) dim inside its range: pair through `index`
  BroadcastIndex index;  // set when `general`; pre/n/post then describe Y's whole aligned range
};

// index for Y (dims y, trailing 1s dropped) placed at X's dim a. Zero-sized dims are fine: an
// empty X is never indexed.
inline BroadcastIndex MakeBroadcastIndex(const char* op, const Dims& x, const Dims& y, int a) {
  BroadcastIndex bi;
  std::vector<int64_t> ys(y.size(), 1);  // Y's row-major strides
  for (int i = static_cast<int>(y.size()) - 2; i >= 0; --i) ys[i] = ys[i + 1] * y[i + 1];
  int prev_kind = -1;  // 0: Y repeated over this dim, 1: Y present
  for (size_t d = 0; d < x.size(); ++d) {
    const bool inside = static_cast<int>(d) >= a && d < a + y.size();
    const int64_t yd = inside ? y[d - a] : 1;
    const int kind = (inside && yd != 1) ? 1 : 0;
    if (x[d] == 1) continue;  // a size-1 dim adds nothing to the index
    const int64_t stride = kind == 1 ? ys[d - a] : 0;
    if (kind == prev_kind) {  // merge with the previous run: its stride is the inner dim's
      bi.dims[bi.rank - 1] *= x[d];
      bi.y_strides[bi.rank - 1] = stride;
      continue;
    }
    TIDE_CHECK(bi.rank < BroadcastIndex::kMaxRank, "op '", op, "': broadcasting Y ", ToString(y),
               " over X ", ToString(x), " alternates too often (more than ",
               BroadcastIndex::kMaxRank, " runs)");
    bi.dims[bi.rank] = x[d];
    bi.y_strides[bi.rank] = stride;
    ++bi.rank;
    prev_kind = kind;
  }
  return bi;
}

// `allow_general`: the caller handles a general broadcast (Broadcast::general, pairing through
// `index`); a caller that reads only pre/n/post gets an error for such a Y instead of a wrong
// pairing.
inline Broadcast GetBroadcast(const char* op, const Dims& x, const Dims& y_in, int axis,
                              bool allow_general = false) {
  Broadcast b;
  if (x == y_in) {
    b.same = true;
    b.n = DimsProduct(x);
    return b;
  }
  TIDE_CHECK(x.size() >= y_in.size(), "op '", op, "': Y's rank (", ToString(y_in),
             ") must not exceed X's (", ToString(x), ")");
  // The default axis aligns Y's full dims with X's trailing ones; then Y's trailing 1s, which
  // carry no data, are dropped.
  const int a = axis < 0 ? static_cast<int>(x.size() - y_in.size()) : axis;
  Dims y = y_in;
  while (y.size() > 1 && y.back() == 1) y.pop_back();
  TIDE_CHECK(a >= 0 && a + y.size() <= x.size(), "op '", op, "': axis ", axis, " places Y ",
             ToString(y_in), " outside X ", ToString(x));
  bool repeated_inside = false;  // a Y dim of 1 against a larger X dim
  for (size_t i = 0; i < y.size(); ++i) {
    TIDE_CHECK(x[a + i] == y[i] || y[i] == 1, "op '", op, "': cannot broadcast Y ", ToString(y_in),
               " onto X ", ToString(x), " at axis ", a, " (dim ", a + i, ": ", x[a + i], " vs ",
               y[i], ")");
    repeated_inside = repeated_inside || (y[i] == 1 && x[a + i] != 1);
  }
  b.axis = a;
  b.pre = DimsProduct(x, 0, a);
  b.n = DimsProduct(y);
  b.post = DimsProduct(x, a + y.size(), x.size());
  if (b.n == 1 && DimsProduct(x, a, a + y.size()) != 1) {  // Y is a scalar: repeat over all of X
    b.pre = 1;
    b.post = DimsProduct(x);
  } else if (repeated_inside) {
    TIDE_CHECK(allow_general, "op '", op, "': Y ", ToString(y_in),
               " has a dim of 1 inside its range"
               " on X ",
               ToString(x), " (axis ", a, "), which this kernel does not broadcast");
    b.general = true;
    b.n = DimsProduct(x, a, a + y.size());
    b.index = MakeBroadcastIndex(op, x, y, a);
  }
  return b;
}

// Y's dims as an operand of X's rank with 1s on the dims it is repeated over (for libraries
// that broadcast same-rank operands, e.g. oneDNN's binary primitive).
inline Dims BroadcastYDims(const char* op, const Dims& x, const Dims& y, int axis) {
  const Broadcast b = GetBroadcast(op, x, y, axis, true);
  if (b.same) return y;
  Dims out(x.size(), 1);
  if (b.n == 1) return out;  // a scalar
  for (size_t i = 0; i < y.size() && b.axis + i < x.size(); ++i) out[b.axis + i] = y[i];
  return out;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BROADCAST_HPP_
