// compare_logical_ops.cc: the comparisons (less_than, ..., not_equal: X op Y, Out bool) and the
// logical ops (logical_and/or/xor/not on bool tensors), X and Y broadcast both ways by Paddle's
// rule (tide/ops/compare_logical.hpp; Fluid's Y over X is the case where Out has X's dims). No
// gradients, as in Fluid: their outputs are bool, which append_backward never differentiates,
// and the ops have no grad maker.
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

// ---------------------------------------------------------------------------------------------
// Comparisons.
// Out[e] = op(X's element, Y's element) for each of Out's elements, paired by `p`.
template <typename T, typename Op>
void PairedKernel(const tide::ops::ComparePairing& p, int64_t n, const T* xd, const T* yd,
                  bool* od) {
  const Op cmp;
  if (!p.fluid) {  // both ways: X [3, 1] against Y [4]
    int64_t xi = 0, yi = 0;
    for (int64_t e = 0; e < n; ++e) {
      p.nb.Index(e, &xi, &yi);
      od[e] = cmp(xd[xi], yd[yi]);
    }
    return;
  }
  const tide::ops::Broadcast& b = p.b;
  if (b.same) {
    for (int64_t i = 0; i < b.n; ++i) od[i] = cmp(xd[i], yd[i]);
    return;
  }
  if (b.general) {  // Y with size-1 dims inside its range (X [2,3,4] vs Y [2,1,4])
    for (int64_t e = 0; e < n; ++e) od[e] = cmp(xd[e], yd[b.index(e)]);
    return;
  }
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const T yv = yd[j];
      const int64_t base = (i * b.n + j) * b.post;
      for (int64_t k = 0; k < b.post; ++k) od[base + k] = cmp(xd[base + k], yv);
    }
}

template <typename T, typename Cmp>
void CompareKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetCompareArgs<T>(ctx);
  PairedKernel<T, Cmp>(a.p, a.n, a.x, a.y, a.out);
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

// Out's dims by the broadcast rule; unknown (-1) dims are checked at run time.
void BinaryShape(tide::InferShapeContext& ctx, int axis) {
  const Dims out = tide::ops::CompareOutDims(ctx.op_type(), ctx.InputName("X"), ctx.InputDims("X"),
                                             ctx.InputName("Y"), ctx.InputDims("Y"), axis);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  ctx.ShareLoD("X", "Out");
}

void CompareShape(tide::InferShapeContext& ctx) { BinaryShape(ctx, ctx.Attr<int32_t>("axis")); }

tide::OpSchema CompareSchema(const std::string& type, const char* formula) {
  return tide::OpSchema(type)
      .NoGradient()
      .Comment(std::string("Out = ") + formula +
               " elementwise (bool), X and Y broadcast both ways (Paddle's rule): the one of "
               "lower rank is aligned at `axis` of the other (-1: the trailing dims), each pair "
               "of dims equal or one of them 1.")
      .Input("X", "the first operand; its data type picks the kernel")
      .Input("Y", "the second operand, of X's data type")
      .Output("Out", "bool, the broadcast dims (X's where Y broadcasts over X)")
      .Attr("axis", int32_t(-1),
            "where the lower-rank operand's dims start in the other's; -1 aligns the trailing "
            "dims")
      .Attr("force_cpu", false, "accepted for Fluid compatibility")
      .KernelDataTypeFrom("X")
      .InferShape(CompareShape);
}

// ---------------------------------------------------------------------------------------------
// Logical ops.
template <typename T, typename Op>
void LogicalBinaryKernel(KernelContext& ctx) {
  const tide::ops::LogicalArgs a = tide::ops::GetLogicalArgs(ctx, true);
  PairedKernel<bool, Op>(a.p, a.n, a.x, a.y, a.out);
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
  BinaryShape(ctx, -1);
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
      .Comment(std::string("Out = ") + formula +
               " elementwise; X and Y are bool, broadcast both ways as numpy does (the trailing "
               "dims aligned, each pair equal or one of them 1).")
      .Input("X", "bool")
      .Input("Y", "bool")
      .Output("Out", "bool, the broadcast dims")
      .InferShape(LogicalBinaryShape);
}

}  // namespace
}  // namespace ops_control

using namespace ops_control;  // NOLINT: registration macros below

// bool too, as Paddle's kernels (false < true): a padding mask compared with 0 or False, as
// PaddleSpeech's attention writes `mask.unsqueeze(1).eq(0)`.
#define OPS_CONTROL_COMPARE_TYPES float, double, int32_t, int64_t, bool
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
