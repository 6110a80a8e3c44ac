// isfinite_ops.cc: Paddle 2.x's elementwise tests isnan_v2, isinf_v2 and isfinite_v2
// (paddle.isnan / isinf / isfinite): Out is bool, X's dims, without a gradient. An integer X
// is never NaN or infinite (Paddle's rule).
#include <cmath>
#include <string>
#include <type_traits>

#include "common.h"

namespace ops_math {
namespace {

struct IsNan {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return false;
    else
      return std::isnan(x);
  }
};
struct IsInf {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return false;
    else
      return std::isinf(x);
  }
};
struct IsFinite {
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return true;
    else
      return std::isfinite(x);
  }
};

template <typename T, typename Test>
void TestKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T* __restrict__ xd = x.data<T>();
  bool* __restrict__ od = ctx.Output("Out").mutable_data<bool>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), 8, [xd, od](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) od[i] = Test()(xd[i]);
  });
}
template <typename T>
void IsNanKernel(KernelContext& c) {
  TestKernel<T, IsNan>(c);
}
template <typename T>
void IsInfKernel(KernelContext& c) {
  TestKernel<T, IsInf>(c);
}
template <typename T>
void IsFiniteKernel(KernelContext& c) {
  TestKernel<T, IsFinite>(c);
}

void TestShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(
      t == TIDE_UNDEFINED || t == TIDE_FP32 || t == TIDE_FP64 || t == TIDE_INT32 || t == TIDE_INT64,
      "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
      "') must be float32, float64, int32 or int64, got ", tide::DataTypeName(t));
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  ctx.ShareLoD("X", "Out");
}

tide::OpSchema TestSchema(const std::string& type, const char* what) {
  return tide::OpSchema(type)
      .NoGradient()
      .Comment(std::string("Out = whether X is ") + what +
               ", elementwise (bool); an integer X is never NaN or infinite.")
      .Input("X", "float32, float64, int32 or int64")
      .Output("Out", "bool, X's dims")
      .KernelDataTypeFrom("X")
      .InferShape(TestShape);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(TestSchema("isnan_v2", "NaN"));
TIDE_REGISTER_OP(TestSchema("isinf_v2", "infinite"));
TIDE_REGISTER_OP(TestSchema("isfinite_v2", "finite (neither NaN nor infinite)"));
TIDE_REGISTER_KERNEL("isnan_v2", "cpu", IsNanKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("isinf_v2", "cpu", IsInfKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("isfinite_v2", "cpu", IsFiniteKernel, OPS_MATH_NUMERIC_TYPES);
