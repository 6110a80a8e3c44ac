// tide/ops/compare_logical.hpp: the comparisons (less_than, ..., not_equal: X op Y with Fluid's
// broadcast of Y over X) and the logical ops (logical_and/or/xor/not on bool tensors of one dims)
// as every kernel reads their inputs; Out (bool, X's dims) allocated on the kernel's place.
#ifndef TIDE_OPS_COMPARE_LOGICAL_HPP_
#define TIDE_OPS_COMPARE_LOGICAL_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/broadcast.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// A comparison: X, Y (X's type: the core casts a float Y, not an integer one) broadcast over X.
template <typename T>
struct CompareArgs {
  Broadcast b;
  int64_t n;  // X's elements
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
  a.b = GetBroadcast(op, x.dims(), y.dims(), ctx.Attr<int32_t>("axis"), true);
  a.n = x.numel();
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<bool>(x.dims(), ctx.place());
  return a;
}

// The logical ops' X and Y have one dims.
inline void CheckSameDims(const char* op, const std::string& x_name, const Dims& x,
                          const std::string& y_name, const Dims& y) {
  TIDE_CHECK(x == y, "op '", op, "': X ('", x_name, "') ", ToString(x), " and Y ('", y_name, "') ",
             ToString(y), " must have the same dims");
}

// logical_and / or / xor: bool X and Y of one dims; logical_not: X only (y null).
struct LogicalArgs {
  int64_t n;
  const bool* x;
  const bool* y;
  bool* out;
};

inline LogicalArgs GetLogicalArgs(const KernelContext& ctx, bool binary) {
  Tensor x = ctx.Input("X");
  LogicalArgs a;
  a.y = nullptr;
  if (binary) {
    Tensor y = ctx.Input("Y");
    CheckSameDims(ctx.op_type(), ctx.InputName("X"), x.dims(), ctx.InputName("Y"), y.dims());
    TIDE_CHECK(y.dtype() == TIDE_BOOL, "op '", ctx.op_type(), "': Y ('", ctx.InputName("Y"),
               "') must be bool, got ", DataTypeName(y.dtype()));
    a.y = y.data<bool>();
  }
  a.n = x.numel();
  a.x = x.data<bool>();
  a.out = ctx.Output("Out").mutable_data<bool>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_COMPARE_LOGICAL_HPP_
