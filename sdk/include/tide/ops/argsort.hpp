// tide/ops/argsort.hpp: argsort's order, for every implementation of it, so Out and Indices are
// the same everywhere: ascending (descending: largest first) by value, NaN after every number
// (descending: before), -0 equal to 0, and equal values in X's order (a stable sort, also when
// descending). Host and device; ArgsortKey for a device's sort. Also argsort and its grad as
// every kernel reads their inputs (host).
#ifndef TIDE_OPS_ARGSORT_HPP_
#define TIDE_OPS_ARGSORT_HPP_

#include <math.h>
#include <string.h>

#include <cstdint>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
namespace ops {

// a < b in argsort's ascending order: a strict weak order also with NaNs (which are equal to
// each other and after every number), unlike operator<.
template <typename T>
TIDE_OPS_HOST_DEVICE bool ArgsortLess(T a, T b) {
  if (b != b) return a == a;  // only a number is before a NaN
  return a < b;
}

// Whether a value `a` goes before `b` (a stable sort keeps equal values in X's order).
template <typename T>
TIDE_OPS_HOST_DEVICE bool ArgsortBefore(T a, T b, bool descending) {
  return descending ? ArgsortLess(b, a) : ArgsortLess(a, b);
}

// The key argsort sorts value `v` by on a device: an integer whose `<` (and bit order, for a radix
// sort) is ArgsortLess's order, so a stable sort of the keys gives argsort's Indices. Integers
// are their own keys; a float's key is its bits with every NaN as one positive NaN and -0 as 0,
// flipped so that unsigned order is numeric order (NaN after +inf).
template <typename T>
struct ArgsortKeyOf {
  using type = T;
};
template <>
struct ArgsortKeyOf<float> {
  using type = uint32_t;
};
template <>
struct ArgsortKeyOf<double> {
  using type = uint64_t;
};

template <typename T>
TIDE_OPS_HOST_DEVICE typename ArgsortKeyOf<T>::type ArgsortKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = typename ArgsortKeyOf<T>::type;
    if (v != v) v = static_cast<T>(NAN);
    if (v == T(0)) v = T(0);
    U bits;
    memcpy(&bits, &v, sizeof(bits));
    const U sign = U(1) << (sizeof(U) * 8 - 1);
    return (bits & sign) ? U(~bits) : U(bits | sign);
  } else {
    return v;
  }
}

// argsort: X as [pre, n, post] around the axis; Out and Indices allocated with X's dims.
template <typename T>
struct ArgsortArgs {
  AxisSplit s;
  bool descending;
  int64_t numel;
  const T* x;
  T* out;
  int64_t* indices;
};

template <typename T>
ArgsortArgs<T> GetArgsortArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  ArgsortArgs<T> a;
  a.s = SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  a.descending = ctx.Attr<bool>("descending");
  a.numel = x.numel();
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  a.indices = ctx.Output("Indices").mutable_data<int64_t>(x.dims(), ctx.place());
  return a;
}

// argsort_grad: Indices and Out@GRAD (X's dims); X@GRAD allocated. X@GRAD[Indices[j]] =
// Out@GRAD[j] along the axis.
template <typename T>
struct ArgsortGradArgs {
  AxisSplit s;
  const int64_t* indices;
  const T* dout;
  T* dx;
};

template <typename T>
ArgsortGradArgs<T> GetArgsortGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), ind = ctx.Input("Indices");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  ArgsortGradArgs<T> a;
  a.s = SplitAt(op, x.dims(), ctx.Attr<int32_t>("axis"));
  CheckGradDims(op, "Indices", ind.dims(), x.dims());
  CheckGradDims(op, "Out@GRAD", dout.dims(), x.dims());
  a.indices = ind.data<int64_t>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_ARGSORT_HPP_
