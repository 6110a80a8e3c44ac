// tide/ops/compare_logical.hpp: the comparisons (less_than, ..., not_equal) and the logical ops
// (logical_and/or/xor/not) as every kernel reads their inputs, and their broadcast rule, Paddle's
// (phi's GetBroadcastDimsArrays): the operand of lower rank is aligned with the other's dims at
// `axis` (-1, and always for the logical ops: the trailing dims), each pair of dims is equal or one
// of them is 1, and Out's dim is the other (X [1] and a 0-D Y give [1]; X [3, 1] and Y [4] give
// [3, 4]). Where Fluid's rule places Y over X (broadcast.hpp), Out has X's dims, as in Fluid, and
// kernels take that rule's faster pairing. Out is allocated on the kernel's place.
#ifndef TIDE_OPS_COMPARE_LOGICAL_HPP_
#define TIDE_OPS_COMPARE_LOGICAL_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/plugin.hpp>
#include <utility>

namespace tide {
namespace ops {

// X and Y at one rank: the operand of lower rank gets 1s before `axis` (-1: as many as align
// its last dim with the other's) and after its own dims. Its trailing 1s, which carry no data,
// are dropped first where they would reach past the other's rank (Fluid drops them too).
inline std::pair<Dims, Dims> AlignCompareRanks(const char* op, const Dims& x, const Dims& y,
                                               int axis) {
  if (x.size() == y.size()) return {x, y};
  const bool y_shorter = y.size() < x.size();
  const Dims& longer = y_shorter ? x : y;
  Dims shorter = y_shorter ? y : x;
  const size_t r = longer.size();
  const size_t a = axis < 0 ? r - shorter.size() : static_cast<size_t>(axis);
  while (a + shorter.size() > r && !shorter.empty() && shorter.back() == 1) shorter.pop_back();
  TIDE_CHECK(a + shorter.size() <= r, "op '", op, "': axis ", axis, " places ",
             y_shorter ? "Y " : "X ", ToString(y_shorter ? y : x), " outside ",
             y_shorter ? "X " : "Y ", ToString(longer));
  Dims padded(r, 1);
  for (size_t i = 0; i < shorter.size(); ++i) padded[a + i] = shorter[i];
  return y_shorter ? std::make_pair(x, padded) : std::make_pair(padded, y);
}

// Whether Fluid's rule places Y over X (FluidRuleFits), a dim unknown at compile time (-1)
// matching any.
inline bool FluidRuleMayFit(const Dims& x, const Dims& y_in, int axis) {
  if (y_in.size() > x.size()) return false;
  const size_t a = axis < 0 ? x.size() - y_in.size() : static_cast<size_t>(axis);
  Dims y = y_in;
  while (y.size() > 1 && y.back() == 1) y.pop_back();
  if (a + y.size() > x.size()) return false;
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != x[a + i] && y[i] != 1 && y[i] >= 0 && x[a + i] >= 0) return false;
  return true;
}

// Out's dims: X's where Fluid's rule places Y over X (Fluid programs keep their dims), else
// Paddle's, where a dim unknown at compile time (-1) gives the other operand's, or -1 against a
// 1. Known dims that do not broadcast are an error naming both operands.
inline Dims CompareOutDims(const char* op, const std::string& x_name, const Dims& x,
                           const std::string& y_name, const Dims& y, int axis) {
  if (x == y || FluidRuleMayFit(x, y, axis)) return x;
  const auto aligned = AlignCompareRanks(op, x, y, axis);
  const Dims &xa = aligned.first, &ya = aligned.second;
  Dims out(xa.size());
  for (size_t i = 0; i < xa.size(); ++i) {
    const int64_t a = xa[i], b = ya[i];
    const bool fits = a == b || a == 1 || b == 1 || a < 0 || b < 0;
    TIDE_CHECK(fits, "op '", op, "': X ('", x_name, "') ", ToString(x), " and Y ('", y_name, "') ",
               ToString(y), " do not broadcast (",
               axis < 0 ? "trailing dims aligned" : "aligned at axis " + std::to_string(axis),
               "; dim ", i, ": ", a, " vs ", b, ")");
    out[i] = (a == b || b == 1) ? a : (a == 1 || a < 0) ? b : a;
  }
  return out;
}

// How X's and Y's elements pair: Fluid's rule where it places Y over X (`b`, Out has X's dims),
// else Paddle's both ways (`nb`: Out's dims and each operand's strides).
struct ComparePairing {
  bool fluid = true;
  Broadcast b;
  NumpyBroadcast nb;
  Dims out;
};

inline ComparePairing GetComparePairing(const char* op, const std::string& x_name, const Dims& x,
                                        const std::string& y_name, const Dims& y, int axis) {
  ComparePairing p;
  p.fluid = FluidRuleFits(x, y, axis);
  p.out = p.fluid ? x : CompareOutDims(op, x_name, x, y_name, y, axis);  // or the error
  if (p.fluid) {
    p.b = GetBroadcast(op, x, y, axis, true);
  } else {
    const auto aligned = AlignCompareRanks(op, x, y, axis);
    p.nb = GetNumpyBroadcast(op, aligned.first, aligned.second);
  }
  return p;
}

// Whether the operands need Paddle's rule (Fluid's does not place Y over X): kernels that
// implement only Fluid's decline them.
inline bool CompareNeedsBothWays(const KernelContext& ctx, int axis) {
  return !FluidRuleFits(ctx.Input("X").dims(), ctx.Input("Y").dims(), axis);
}

// X and Y of one dims (what the logical ops asked before they broadcast; kept for plugins that
// call it).
inline void CheckSameDims(const char* op, const std::string& x_name, const Dims& x,
                          const std::string& y_name, const Dims& y) {
  TIDE_CHECK(x == y, "op '", op, "': X ('", x_name, "') ", ToString(x), " and Y ('", y_name, "') ",
             ToString(y), " must have the same dims");
}

// A comparison: X, Y (X's type: the core casts a float Y, not an integer one).
template <typename T>
struct CompareArgs {
  ComparePairing p;
  int64_t n;  // Out's elements
  const T* x;
  const T* y;
  bool* out;
};

template <typename T>
CompareArgs<T> GetCompareArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(y.dtype() == x.dtype(), "op '", op, "': Y ('", ctx.InputName("Y"), "') is ",
             DataTypeName(y.dtype()), " but X ('", ctx.InputName("X"), "') is ",
             DataTypeName(x.dtype()), "; compare tensors of one data type");
  CompareArgs<T> a;
  a.p = GetComparePairing(op, ctx.InputName("X"), x.dims(), ctx.InputName("Y"), y.dims(),
                          ctx.Attr<int32_t>("axis"));
  a.n = DimsProduct(a.p.out);
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<bool>(a.p.out, ctx.place());
  return a;
}

// logical_and / or / xor: bool X and Y, broadcast both ways (trailing dims aligned);
// logical_not: X only (y null, `p` X's dims).
struct LogicalArgs {
  ComparePairing p;
  int64_t n;  // Out's elements
  const bool* x;
  const bool* y;
  bool* out;
};

inline LogicalArgs GetLogicalArgs(const KernelContext& ctx, bool binary) {
  Tensor x = ctx.Input("X");
  LogicalArgs a;
  a.y = nullptr;
  a.p.out = x.dims();
  a.p.b.same = true;
  if (binary) {
    Tensor y = ctx.Input("Y");
    TIDE_CHECK(y.dtype() == TIDE_BOOL, "op '", ctx.op_type(), "': Y ('", ctx.InputName("Y"),
               "') must be bool, got ", DataTypeName(y.dtype()));
    a.p = GetComparePairing(ctx.op_type(), ctx.InputName("X"), x.dims(), ctx.InputName("Y"),
                            y.dims(), -1);
    a.y = y.data<bool>();
  }
  a.n = DimsProduct(a.p.out);
  a.x = x.data<bool>();
  a.out = ctx.Output("Out").mutable_data<bool>(a.p.out, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_COMPARE_LOGICAL_HPP_
