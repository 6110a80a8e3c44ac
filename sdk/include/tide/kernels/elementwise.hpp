// tide/kernels/elementwise.hpp: the plain CPU kernels of elementwise_add/sub/mul/div/max/min/
// pow/mod/floordiv (Out = F(X, Y), Y broadcast over X by Fluid's rule, tide/ops/broadcast.hpp, or
// numpy's, tide/ops/elementwise.hpp), header-only: ops_math registers them, and a compiled model
// (tide.aot.compile) calls them directly (tide/kernels/registry.hpp).
//
// Integer division is defined for every input but a zero divisor, which is an error naming the
// op and Y: INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0 (numpy's results), never SIGFPE.
// floordiv and mod round toward -inf (Python's // and %, like Fluid's elementwise_mod).
// add / sub / mul / div also run on complex64 / complex128 (std::complex): numpy's results, a
// complex division C99's (no overflow on the way, 1 / 0 infinite), never Eigen's vectorized one.
#ifndef TIDE_KERNELS_ELEMENTWISE_HPP_
#define TIDE_KERNELS_ELEMENTWISE_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tide/kernels/common.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/complex.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace kernels {

// x / y for integers with y != 0; INT_MIN / -1 wraps (two's complement) instead of trapping.
template <typename T>
T IntDiv(T x, T y) {
  if (y == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(x));
  return x / y;
}
// x mod y with the sign of y (Python's %), for y != 0.
template <typename T>
T FloorMod(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    if (y == T(-1)) return T(0);  // INT_MIN % -1 traps on x86
    T r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? static_cast<T>(r + y) : r;
  } else {
    T r = std::fmod(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
  }
}

// Each functor works on scalars; kExpr ones also on Eigen expressions (the same-dims fast path).
struct AddF {
  static constexpr bool kExpr = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    return x + y;
  }
};
struct SubF {
  static constexpr bool kExpr = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    return x - y;
  }
};
struct MulF {
  static constexpr bool kExpr = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    return x * y;
  }
};
struct DivF {
  static constexpr bool kExpr = true;  // for floats; integers take the checked scalar path
  static constexpr bool kIntNeedsNonZeroY = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    if constexpr (std::is_integral_v<A>)
      return IntDiv(x, y);
    else
      return x / y;
  }
};
struct MaxF {
  static constexpr bool kExpr = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    if constexpr (std::is_arithmetic_v<A>)
      return x > y ? x : y;
    else
      return x.cwiseMax(y);
  }
};
struct MinF {
  static constexpr bool kExpr = true;
  template <typename A, typename B>
  static auto Fwd(const A& x, const B& y) {
    if constexpr (std::is_arithmetic_v<A>)
      return x < y ? x : y;
    else
      return x.cwiseMin(y);
  }
};
struct PowF {
  static constexpr bool kExpr = false;
  template <typename T>
  static T Fwd(T x, T y) {
    if constexpr (std::is_integral_v<T>)  // to the nearest (Paddle's llrint): 2^-1 is 0
      return static_cast<T>(std::llrint(std::pow(static_cast<double>(x), static_cast<double>(y))));
    else
      return std::pow(x, y);
  }
};
struct ModF {
  static constexpr bool kExpr = false;
  static constexpr bool kIntNeedsNonZeroY = true;
  template <typename T>
  static T Fwd(T x, T y) {
    return FloorMod(x, y);
  }
};
struct FloorDivF {
  static constexpr bool kExpr = false;
  static constexpr bool kIntNeedsNonZeroY = true;
  template <typename T>
  static T Fwd(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      const T q = IntDiv(x, y);
      return (y != T(-1) && x % y != 0 && ((x < 0) != (y < 0))) ? static_cast<T>(q - 1) : q;
    } else {
      return std::floor(x / y);
    }
  }
};

template <typename F, typename = void>
struct NeedsNonZeroY : std::false_type {};
template <typename F>
struct NeedsNonZeroY<F, std::void_t<decltype(F::kIntNeedsNonZeroY)>> : std::true_type {};

// Paddle 2.x's numpy broadcast where Fluid's rule does not fit: tide/ops/elementwise.hpp.
using ops::Broadcast;
using ops::GetBroadcast;
using ops::GetNumpyBroadcast;
using ops::NumpyBroadcast;
using ops::NumpyPath;

bool TakesNumpyPath(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  return NumpyPath(x.dims(), y.dims(), ctx.Attr<int32_t>("axis"));
}

Broadcast BroadcastOf(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  return GetBroadcast(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<int32_t>("axis"), true);
}

// Out = F(X, Y) elementwise, Y broadcast over X by Fluid's rule (or numpy's).
template <typename T, typename F>
void Elementwise(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  constexpr bool kChecked = std::is_integral_v<T> && NeedsNonZeroY<F>::value;
  // Eigen's vectorized complex division is the textbook formula: |y|^2 overflows (1e30 / 2e30
  // is NaN in complex64) and 1 / 0 is NaN. std::complex's is C99's, as numpy's.
  constexpr bool kEigenDiv = !(ops::kIsComplex<T> && std::is_same_v<F, DivF>);
  if constexpr (F::kExpr && !kChecked && kEigenDiv) {
    if (x.SameDims(y)) {  // the common case
      out.ResizeLike(x);
      EigenEval(ctx, Out<T>(out, ctx), F::Fwd(In<T>(x), In<T>(y)));
      return;
    }
  }
  const T* yd = y.data<T>();
  if constexpr (kChecked) {
    TIDE_CHECK(std::find(yd, yd + y.numel(), T(0)) == yd + y.numel(), "op '", ctx.op_type(),
               "': integer division by zero (Y '", ctx.InputName("Y"), "' holds a 0)");
  }
  if (TakesNumpyPath(ctx, x, y)) {
    const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
    const T* xd = x.data<T>();
    T* od = out.mutable_data<T>(nb.out, ctx.place());
    for (int64_t e = 0, xi, yi; e < nb.numel; ++e) {
      nb.Index(e, &xi, &yi);
      od[e] = F::Fwd(xd[xi], yd[yi]);
    }
    return;
  }
  const Broadcast b = BroadcastOf(ctx, x, y);
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>(x.dims(), ctx.place());
  if (b.same) {
    for (int64_t e = 0; e < b.n; ++e) od[e] = F::Fwd(xd[e], yd[e]);
  } else if (b.general) {
    const int64_t inner = b.index.InnerSize(), stride = b.index.InnerStride();
    for (int64_t row = 0, total = x.numel(); row < total; row += inner) {
      const T* yr = yd + b.index(row);
      for (int64_t k = 0; k < inner; ++k) od[row + k] = F::Fwd(xd[row + k], yr[k * stride]);
    }
  } else if (b.post == 1) {  // Y over X's trailing dims (a bias): rows of n, vectorised
    for (int64_t i = 0; i < b.pre; ++i) {
      const T* xr = xd + i * b.n;
      T* orow = od + i * b.n;
      for (int64_t j = 0; j < b.n; ++j) orow[j] = F::Fwd(xr[j], yd[j]);
    }
  } else {
    for (int64_t i = 0; i < b.pre; ++i)
      for (int64_t j = 0; j < b.n; ++j) {
        const T yv = yd[j];
        const int64_t base = (i * b.n + j) * b.post;
        for (int64_t k = 0; k < b.post; ++k) od[base + k] = F::Fwd(xd[base + k], yv);
      }
  }
}

template <typename T>
void ElementwiseAdd(KernelContext& c) {
  Elementwise<T, AddF>(c);
}
template <typename T>
void ElementwiseSub(KernelContext& c) {
  Elementwise<T, SubF>(c);
}
template <typename T>
void ElementwiseMul(KernelContext& c) {
  Elementwise<T, MulF>(c);
}
template <typename T>
void ElementwiseDiv(KernelContext& c) {
  Elementwise<T, DivF>(c);
}
template <typename T>
void ElementwiseMax(KernelContext& c) {
  Elementwise<T, MaxF>(c);
}
template <typename T>
void ElementwiseMin(KernelContext& c) {
  Elementwise<T, MinF>(c);
}
template <typename T>
void ElementwisePow(KernelContext& c) {
  Elementwise<T, PowF>(c);
}
template <typename T>
void ElementwiseMod(KernelContext& c) {
  Elementwise<T, ModF>(c);
}
template <typename T>
void ElementwiseFloorDiv(KernelContext& c) {
  Elementwise<T, FloorDivF>(c);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_ELEMENTWISE_HPP_
