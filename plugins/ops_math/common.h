// common.h: helpers shared by ops_math kernels: Eigen evaluation (inline for small tensors,
// on the CPU pool for large ones), Fluid's elementwise broadcast rule, and shape rules.
#pragma once

#include <tide/eigen.hpp>
#include <tide/plugin.hpp>

#include <algorithm>
#include <cstdint>

namespace ops_math {

using tide::Dims;
using tide::KernelContext;
using tide::Tensor;

// Below this many elements, a thread hand-off costs more than the work.
constexpr int64_t kParallelThreshold = 1 << 15;

// out = expr, on the CPU pool when the tensor is large enough to benefit.
template <typename Out, typename Expr>
void Eval(const KernelContext& ctx, Out out, const Expr& expr) {
  if (out.size() >= kParallelThreshold)
    out.device(tide::EigenDevice(ctx)) = expr;
  else
    out = expr;
}

template <typename T>
tide::ConstEigenVector<T> In(const Tensor& t) {
  return tide::Flat<T>(t);
}
template <typename T>
tide::EigenVector<T> Out(Tensor& t, const KernelContext& ctx) {
  return tide::FlatMutable<T>(t, ctx.place());
}

inline int64_t Product(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

// Fluid's broadcast: Y's dims (trailing 1s dropped) match X's dims [axis, axis + rank(Y)), and
// Y is repeated over X's leading `pre` and trailing `post` elements. axis = -1 aligns the ends.
struct Broadcast {
  int64_t pre = 1, n = 1, post = 1;
  bool same = false;  // X and Y have the same number of elements in the same order
};

inline Broadcast GetBroadcast(const char* op, const Dims& x, const Dims& y_in, int axis) {
  Broadcast b;
  if (x == y_in) {
    b.same = true;
    b.n = Product(x, 0, x.size());
    return b;
  }
  TIDE_CHECK(x.size() >= y_in.size(), "op '", op, "': Y's rank (", tide::ToString(y_in),
             ") must not exceed X's (", tide::ToString(x), ")");
  // The default axis aligns Y's full dims with X's trailing ones; then Y's trailing 1s, which
  // carry no data, are dropped.
  int a = axis < 0 ? static_cast<int>(x.size() - y_in.size()) : axis;
  Dims y = y_in;
  while (y.size() > 1 && y.back() == 1) y.pop_back();
  TIDE_CHECK(a >= 0 && a + y.size() <= x.size(), "op '", op, "': axis ", axis,
             " places Y ", tide::ToString(y_in), " outside X ", tide::ToString(x));
  for (size_t i = 0; i < y.size(); ++i)
    TIDE_CHECK(x[a + i] == y[i] || (y[i] == 1 && Product(y, 0, y.size()) == 1),
               "op '", op, "': cannot broadcast Y ", tide::ToString(y_in), " onto X ",
               tide::ToString(x), " at axis ", a, " (dim ", a + i, ": ", x[a + i], " vs ", y[i], ")");
  b.pre = Product(x, 0, a);
  b.n = Product(y, 0, y.size());
  b.post = Product(x, a + y.size(), x.size());
  if (b.n == 1 && Product(x, a, a + y.size()) != 1) {  // Y is a scalar: repeat over all of X
    b.pre = 1;
    b.post = Product(x, 0, x.size());
  }
  return b;
}

// Rows/cols of Fluid's flatten_to_2d.
inline std::pair<int64_t, int64_t> Flatten2D(const Dims& d, int num_col_dims) {
  return {Product(d, 0, num_col_dims), Product(d, num_col_dims, d.size())};
}

// Kernels for float and double.
#define OPS_MATH_FLOAT_TYPES float, double
// Kernels for float, double and the integer types where the op makes sense.
#define OPS_MATH_NUMERIC_TYPES float, double, int32_t, int64_t

}  // namespace ops_math
