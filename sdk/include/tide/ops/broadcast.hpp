// tide/ops/broadcast.hpp: Fluid's elementwise broadcast rule (elementwise_add/sub/mul/div/...,
// attribute `axis`), with its errors, for every implementation of the elementwise ops.
#ifndef TIDE_OPS_BROADCAST_HPP_
#define TIDE_OPS_BROADCAST_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>

namespace tide {
namespace ops {

// Y's dims (trailing 1s dropped) match X's dims [axis, axis + rank(Y)), and Y is repeated over
// X's leading `pre` and trailing `post` elements. axis = -1 aligns Y's full dims with X's
// trailing ones. A Y of one element is a scalar, repeated over all of X.
struct Broadcast {
  int64_t pre = 1, n = 1, post = 1;
  bool same = false;  // X and Y have the same dims: n elements in the same order
  int axis = 0;       // the dim of X where Y's first dim lies
};

inline Broadcast GetBroadcast(const char* op, const Dims& x, const Dims& y_in, int axis) {
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
  for (size_t i = 0; i < y.size(); ++i)
    TIDE_CHECK(x[a + i] == y[i] || (y[i] == 1 && DimsProduct(y) == 1), "op '", op,
               "': cannot broadcast Y ", ToString(y_in), " onto X ", ToString(x), " at axis ", a,
               " (dim ", a + i, ": ", x[a + i], " vs ", y[i], ")");
  b.axis = a;
  b.pre = DimsProduct(x, 0, a);
  b.n = DimsProduct(y);
  b.post = DimsProduct(x, a + y.size(), x.size());
  if (b.n == 1 && DimsProduct(x, a, a + y.size()) != 1) {  // Y is a scalar: repeat over all of X
    b.pre = 1;
    b.post = DimsProduct(x);
  }
  return b;
}

// Y's dims as an operand of X's rank with 1s on the dims it is repeated over (for libraries
// that broadcast same-rank operands, e.g. oneDNN's binary primitive).
inline Dims BroadcastYDims(const char* op, const Dims& x, const Dims& y, int axis) {
  const Broadcast b = GetBroadcast(op, x, y, axis);
  if (b.same) return y;
  Dims out(x.size(), 1);
  if (b.n == 1) return out;  // a scalar
  for (size_t i = 0; i < y.size() && b.axis + i < x.size(); ++i) out[b.axis + i] = y[i];
  return out;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BROADCAST_HPP_
