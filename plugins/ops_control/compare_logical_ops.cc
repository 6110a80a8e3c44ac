// compare_logical_ops.cc: the comparisons (less_than, ..., not_equal: X op Y with Fluid's
// elementwise broadcast of Y over X, Out bool) and the logical ops (logical_and/or/xor/not on
// bool tensors of one shape). No gradients, as in Fluid: their outputs are bool, which
// append_backward never differentiates, and the ops have no grad maker.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/compare_logical.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace ops_control {
namespace {

using tide::Dims;
using tide::KernelContext;
using tide::Tensor;

bool Known(const Dims& d) {
  return std::none_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
}

// ---------------------------------------------------------------------------------------------
// Comparisons.
template <typename T, typename Cmp>
void CompareKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetCompareArgs<T>(ctx);
  const tide::ops::Broadcast& b = a.b;
  const T* xd = a.x;
  const T* yd = a.y;
  bool* od = a.out;
  const Cmp cmp;
  if (b.same) {
    for (int64_t i = 0; i < b.n; ++i) od[i] = cmp(xd[i], yd[i]);
    return;
  }
  if (b.general) {  // Y with size-1 dims inside its range (X [2,3,4] vs Y [2,1,4])
    for (int64_t e = 0; e < a.n; ++e) od[e] = cmp(xd[e], yd[b.index(e)]);
    return;
  }
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const T yv = yd[j];
      const int64_t base = (i * b.n + j) * b.post;
      for (int64_t k = 0; k < b.post; ++k) od[base + k] = cmp(xd[base + k], yv);
    }
}

template <typename T>
void LessThan(KernelContext& c) {
  CompareKernel<T, std::less<T>>(c);
}
template <typename T>
void LessEqual(KernelContext& c) {
  CompareKernel<T, std::less_equal<T>>(c);
}
template <typename T>
void GreaterThan(KernelContext& c) {
  CompareKernel<T, std::greater<T>>(c);
}
template <typename T>
void GreaterEqual(KernelContext& c) {
  CompareKernel<T, std::greater_equal<T>>(c);
}
template <typename T>
void Equal(KernelContext& c) {
  CompareKernel<T, std::equal_to<T>>(c);
}
template <typename T>
void NotEqual(KernelContext& c) {
  CompareKernel<T, std::not_equal_to<T>>(c);
}

void CompareShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  // Unknown (-1) dims are checked at run time.
  if (Known(x) && Known(y))
    tide::ops::GetBroadcast(ctx.op_type(), x, y, ctx.Attr<int32_t>("axis"), true);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  ctx.ShareLoD("X", "Out");
}

tide::OpSchema CompareSchema(const std::string& type, const char* formula) {
  return tide::OpSchema(type)
      .NoGradient()
      .Comment(std::string("Out = ") + formula +
               " elementwise (bool), Y broadcast over X: Y's dims match X's from `axis` "
               "(-1: the trailing dims).")
      .Input("X", "the first operand; its data type picks the kernel")
      .Input("Y", "the second operand, broadcast over X, of X's data type")
      .Output("Out", "bool, X's dims")
      .Attr("axis", int32_t(-1), "where Y's dims start in X's; -1 aligns the trailing dims")
      .Attr("force_cpu", false, "accepted for Fluid compatibility")
      .KernelDataTypeFrom("X")
      .InferShape(CompareShape);
}

// ---------------------------------------------------------------------------------------------
// Logical ops.
using tide::ops::CheckSameDims;

template <typename T, typename Op>
void LogicalBinaryKernel(KernelContext& ctx) {
  const tide::ops::LogicalArgs a = tide::ops::GetLogicalArgs(ctx, true);
  const Op op;
  for (int64_t i = 0; i < a.n; ++i) a.out[i] = op(a.x[i], a.y[i]);
}

struct Xor {
  bool operator()(bool a, bool b) const { return a != b; }
};
template <typename T>
void LogicalAnd(KernelContext& c) {
  LogicalBinaryKernel<T, std::logical_and<bool>>(c);
}
template <typename T>
void LogicalOr(KernelContext& c) {
  LogicalBinaryKernel<T, std::logical_or<bool>>(c);
}
template <typename T>
void LogicalXor(KernelContext& c) {
  LogicalBinaryKernel<T, Xor>(c);
}

template <typename T>
void LogicalNot(KernelContext& ctx) {
  const tide::ops::LogicalArgs a = tide::ops::GetLogicalArgs(ctx, false);
  for (int64_t i = 0; i < a.n; ++i) a.out[i] = !a.x[i];
}

void CheckBool(tide::InferShapeContext& ctx, const char* param) {
  const TideDataType t = ctx.InputDataType(param);
  TIDE_CHECK(t == TIDE_BOOL, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must be bool, got ", tide::DataTypeName(t));
}

void LogicalBinaryShape(tide::InferShapeContext& ctx) {
  CheckBool(ctx, "X");
  CheckBool(ctx, "Y");
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  if (Known(x) && Known(y))  // unknown (-1) dims are checked at run time
    CheckSameDims(ctx.op_type(), ctx.InputName("X"), x, ctx.InputName("Y"), y);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  ctx.ShareLoD("X", "Out");
}

void LogicalNotShape(tide::InferShapeContext& ctx) {
  CheckBool(ctx, "X");
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  ctx.ShareLoD("X", "Out");
}

tide::OpSchema LogicalBinarySchema(const std::string& type, const char* formula) {
  return tide::OpSchema(type)
      .NoGradient()
      .Comment(std::string("Out = ") + formula + " elementwise; X and Y are bool of the same dims.")
      .Input("X", "bool")
      .Input("Y", "bool, X's dims")
      .Output("Out", "bool, X's dims")
      .InferShape(LogicalBinaryShape);
}

}  // namespace
}  // namespace ops_control

using namespace ops_control;  // NOLINT: registration macros below

#define OPS_CONTROL_COMPARE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_OP(CompareSchema("less_than", "X < Y"));
TIDE_REGISTER_OP(CompareSchema("less_equal", "X <= Y"));
TIDE_REGISTER_OP(CompareSchema("greater_than", "X > Y"));
TIDE_REGISTER_OP(CompareSchema("greater_equal", "X >= Y"));
TIDE_REGISTER_OP(CompareSchema("equal", "X == Y"));
TIDE_REGISTER_OP(CompareSchema("not_equal", "X != Y"));
TIDE_REGISTER_KERNEL("less_than", "cpu", LessThan, OPS_CONTROL_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("less_equal", "cpu", LessEqual, OPS_CONTROL_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("greater_than", "cpu", GreaterThan, OPS_CONTROL_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("greater_equal", "cpu", GreaterEqual, OPS_CONTROL_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("equal", "cpu", Equal, OPS_CONTROL_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("not_equal", "cpu", NotEqual, OPS_CONTROL_COMPARE_TYPES);

TIDE_REGISTER_OP(LogicalBinarySchema("logical_and", "X && Y"));
TIDE_REGISTER_OP(LogicalBinarySchema("logical_or", "X || Y"));
TIDE_REGISTER_OP(LogicalBinarySchema("logical_xor", "X != Y"));
TIDE_REGISTER_OP(tide::OpSchema("logical_not")
                     .NoGradient()
                     .Comment("Out = !X elementwise; X is bool.")
                     .Input("X", "bool")
                     .Output("Out", "bool, X's dims")
                     .InferShape(LogicalNotShape));
TIDE_REGISTER_KERNEL("logical_and", "cpu", LogicalAnd, bool);
TIDE_REGISTER_KERNEL("logical_or", "cpu", LogicalOr, bool);
TIDE_REGISTER_KERNEL("logical_xor", "cpu", LogicalXor, bool);
TIDE_REGISTER_KERNEL("logical_not", "cpu", LogicalNot, bool);
