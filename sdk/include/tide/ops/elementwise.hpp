// tide/ops/elementwise.hpp: the elementwise ops' (elementwise_add/sub/mul/div/...) two broadcast
// rules together: Fluid's, Y over X at `axis` (broadcast.hpp), and Paddle 2.x's numpy rule, both
// ways (X [3, 1] + Y [1, 4] is [3, 4]), taken with axis = -1 only where Fluid's does not fit, so
// Fluid programs are unchanged; and the grads' inputs as every kernel reads them. A kernel that
// implements only Fluid's rule declines numpy operands (ElementwiseNumpyPath) rather than calling
// them invalid.
#ifndef TIDE_OPS_ELEMENTWISE_HPP_
#define TIDE_OPS_ELEMENTWISE_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// Whether Fluid's rule places Y over X: GetBroadcast accepts them. As there, the default axis
// aligns Y's full dims (trailing 1s too) with X's trailing ones, before Y's trailing 1s drop.
inline bool FluidRuleFits(const Dims& x, const Dims& y_in, int axis) {
  if (x == y_in) return true;
  if (y_in.size() > x.size()) return false;
  const size_t a = axis < 0 ? x.size() - y_in.size() : static_cast<size_t>(axis);
  Dims y = y_in;
  while (y.size() > 1 && y.back() == 1) y.pop_back();
  if (a + y.size() > x.size()) return false;
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != x[a + i] && y[i] != 1) return false;
  return true;
}

// Whether X and Y broadcast numpy-style.
inline bool NumpyFits(const Dims& x, const Dims& y) {
  for (size_t i = 1; i <= std::min(x.size(), y.size()); ++i) {
    const int64_t a = x[x.size() - i], b = y[y.size() - i];
    if (a != b && a != 1 && b != 1) return false;
  }
  return true;
}

// The numpy path: axis -1, Fluid's rule does not fit but numpy's does (otherwise Fluid's rule
// gives its error).
inline bool NumpyPath(const Dims& x, const Dims& y, int axis) {
  return axis == -1 && !FluidRuleFits(x, y, axis) && NumpyFits(x, y);
}
inline bool ElementwiseNumpyPath(const KernelContext& ctx) {
  return NumpyPath(ctx.Input("X").dims(), ctx.Input("Y").dims(), ctx.Attr<int32_t>("axis"));
}

// Out's dims, and per Out element the X and Y element (strides 0 along broadcast dims).
struct NumpyBroadcast {
  Dims out;
  std::vector<int64_t> xs, ys;  // X's / Y's stride along each of Out's dims
  int64_t numel = 1;
  void Index(int64_t e, int64_t* xi, int64_t* yi) const {
    *xi = *yi = 0;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t c = e % out[d];
      e /= out[d];
      *xi += c * xs[d];
      *yi += c * ys[d];
    }
  }
};

inline NumpyBroadcast GetNumpyBroadcast(const char* op, const Dims& x, const Dims& y) {
  NumpyBroadcast b;
  const size_t r = std::max(x.size(), y.size());
  b.out.assign(r, 1);
  b.xs.assign(r, 0);
  b.ys.assign(r, 0);
  int64_t sx = 1, sy = 1;
  for (size_t i = r; i-- > 0;) {
    const int64_t dx = i + x.size() >= r ? x[i + x.size() - r] : 1;
    const int64_t dy = i + y.size() >= r ? y[i + y.size() - r] : 1;
    TIDE_CHECK(dx == dy || dx == 1 || dy == 1, "op '", op, "': X ", ToString(x), " and Y ",
               ToString(y), " do not broadcast (dim ", i, " of the result: ", dx, " vs ", dy, ")");
    b.out[i] = dx == 1 ? dy : dx;
    b.xs[i] = dx == 1 ? 0 : sx;
    b.ys[i] = dy == 1 ? 0 : sy;
    sx *= dx;
    sy *= dy;
  }
  b.numel = DimsProduct(b.out);
  return b;
}

// How an elementwise op's X and Y broadcast, checked, with nothing allocated: `numpy`, the numpy
// rule (`nb`), else Fluid's (`b`, a general broadcast allowed). A kernel that implements one rule
// or broadcast only reads this first and declines before it writes an output.
struct ElementwiseShape {
  bool numpy = false;
  NumpyBroadcast nb;
  Broadcast b;
  const Dims& out_dims(const Dims& x) const { return numpy ? nb.out : x; }
};

inline ElementwiseShape GetElementwiseShape(const char* op, const Dims& x, const Dims& y,
                                            int axis) {
  ElementwiseShape s;
  s.numpy = NumpyPath(x, y, axis);
  if (s.numpy)
    s.nb = GetNumpyBroadcast(op, x, y);
  else
    s.b = GetBroadcast(op, x, y, axis, true);
  return s;
}
inline ElementwiseShape GetElementwiseShape(const KernelContext& ctx) {
  return GetElementwiseShape(ctx.op_type(), ctx.Input("X").dims(), ctx.Input("Y").dims(),
                             ctx.Attr<int32_t>("axis"));
}

// The check-only half of GetElementwiseGradArgs: the broadcast, and Out@GRAD's dims checked
// against Out's.
inline ElementwiseShape GetElementwiseGradShape(const KernelContext& ctx) {
  const ElementwiseShape s = GetElementwiseShape(ctx);
  const Dims x = ctx.Input("X").dims();
  CheckGradDims(ctx.op_type(), "Out@GRAD", ctx.Input(GradVarName("Out").c_str()).dims(),
                s.out_dims(x));
  return s;
}

// An elementwise grad: X, Y, Out@GRAD (Out's dims), Out where the grad op reads it (else null),
// and X@GRAD / Y@GRAD where wanted, allocated. `numpy`: the operands take the numpy rule (`nb`),
// else Fluid's (`b`, a general broadcast allowed).
template <typename T>
struct ElementwiseGradArgs : BinaryGradData<T> {
  bool numpy;
  NumpyBroadcast nb;
  Broadcast b;
  const T* out;
};

// From the shape GetElementwiseGradShape checked (a kernel that may decline reads that first).
template <typename T>
ElementwiseGradArgs<T> GetElementwiseGradArgs(const KernelContext& ctx, const ElementwiseShape& s) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor out = ctx.OptionalInput("Out");
  ElementwiseGradArgs<T> a;
  a.numpy = s.numpy;
  a.nb = s.nb;
  a.b = s.b;
  a.out = out ? out.data<T>() : nullptr;
  static_cast<BinaryGradData<T>&>(a) = GetBinaryGradData<T>(ctx, x, y, dout);
  return a;
}
template <typename T>
ElementwiseGradArgs<T> GetElementwiseGradArgs(const KernelContext& ctx) {
  return GetElementwiseGradArgs<T>(ctx, GetElementwiseGradShape(ctx));
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ELEMENTWISE_HPP_
