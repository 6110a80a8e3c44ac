// bitwise_ops.cc: Paddle's bitwise_and / bitwise_or / bitwise_xor (X and Y broadcast
// numpy-style) and bitwise_not, on bool (the logical ops) and the integer types; no gradient.
#include <algorithm>
#include <cstdint>
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

void CheckBitwiseType(tide::InferShapeContext& ctx, const char* slot) {
  const TideDataType t = ctx.InputDataType(slot);
  TIDE_CHECK(t == TIDE_BOOL || t == TIDE_UINT8 || t == TIDE_INT8 || t == TIDE_INT16 ||
                 t == TIDE_INT32 || t == TIDE_INT64,
             "op '", ctx.op_type(), "': ", slot, " must be bool or an integer type, but is ",
             tide::DataTypeName(t));
}

void BinaryShape(tide::InferShapeContext& ctx) {
  CheckBitwiseType(ctx, "X");
  CheckBitwiseType(ctx, "Y");
  TIDE_CHECK(ctx.InputDataType("X") == ctx.InputDataType("Y"), "op '", ctx.op_type(), "': X is ",
             tide::DataTypeName(ctx.InputDataType("X")), " but Y is ",
             tide::DataTypeName(ctx.InputDataType("Y")));
  ctx.SetOutputDims("Out", NumpyOutDims(ctx.op_type(), ctx.InputDims("X"), ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void NotShape(tide::InferShapeContext& ctx) {
  CheckBitwiseType(ctx, "X");
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

struct And {
  template <typename T>
  T operator()(T a, T b) const {
    return a & b;
  }
};
struct Or {
  template <typename T>
  T operator()(T a, T b) const {
    return a | b;
  }
};
struct Xor {
  template <typename T>
  T operator()(T a, T b) const {
    return a ^ b;
  }
};

template <typename Fn, typename T>
void BinaryKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), x.dims(), y.dims());
  const T *a = x.data<T>(), *b = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(nb.out, ctx.place());
  for (int64_t e = 0, i, j; e < nb.numel; ++e) {
    nb.Index(e, &i, &j);
    o[e] = static_cast<T>(Fn()(a[i], b[j]));
  }
}
template <typename T>
void AndKernel(KernelContext& ctx) {
  BinaryKernel<And, T>(ctx);
}
template <typename T>
void OrKernel(KernelContext& ctx) {
  BinaryKernel<Or, T>(ctx);
}
template <typename T>
void XorKernel(KernelContext& ctx) {
  BinaryKernel<Xor, T>(ctx);
}

template <typename T>
void NotKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T* a = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t e = 0; e < x.numel(); ++e) {
    if constexpr (std::is_same_v<T, bool>)
      o[e] = !a[e];
    else
      o[e] = static_cast<T>(~a[e]);
  }
}

tide::OpSchema BinarySchema(const char* name, const char* what) {
  return tide::OpSchema(name)
      .NoGradient()
      .Comment(what)
      .Input("X", "bool or an integer type")
      .Input("Y", "X's type; broadcast with X numpy-style")
      .Output("Out", "X's type, the broadcast dims")
      .InferShape(BinaryShape);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

#define OPS_MATH_BITWISE_TYPES bool, uint8_t, int8_t, int16_t, int32_t, int64_t
TIDE_REGISTER_OP(BinarySchema("bitwise_and", "Out = X & Y (paddle.bitwise_and)"));
TIDE_REGISTER_OP(BinarySchema("bitwise_or", "Out = X | Y (paddle.bitwise_or)"));
TIDE_REGISTER_OP(BinarySchema("bitwise_xor", "Out = X ^ Y (paddle.bitwise_xor)"));
TIDE_REGISTER_OP(tide::OpSchema("bitwise_not")
                     .NoGradient()
                     .Comment("Out = ~X (paddle.bitwise_not; logical not on bool)")
                     .Input("X", "bool or an integer type")
                     .Output("Out", "X's type and dims")
                     .InferShape(NotShape));
TIDE_REGISTER_KERNEL("bitwise_and", "cpu", AndKernel, OPS_MATH_BITWISE_TYPES);
TIDE_REGISTER_KERNEL("bitwise_or", "cpu", OrKernel, OPS_MATH_BITWISE_TYPES);
TIDE_REGISTER_KERNEL("bitwise_xor", "cpu", XorKernel, OPS_MATH_BITWISE_TYPES);
TIDE_REGISTER_KERNEL("bitwise_not", "cpu", NotKernel, OPS_MATH_BITWISE_TYPES);
