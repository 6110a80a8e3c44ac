// close_compare_ops.cc: Paddle's isclose (paddle.isclose: Out = whether Input and Other are
// element-wise close), allclose (paddle.allclose: whether all are; a 0-D bool) and equal_all
// (paddle.equal_all: whether X and Y have the same dims and equal elements; a 0-D bool). No
// gradient. Paddle's closeness rule, in the element type T: left = |a - b|, right = atol +
// rtol * |b| (Other's element; so not symmetric), close when a == b (equal infinities included),
// left <= right or |left - right| <= 1e-15; a NaN is close only to a NaN and only with
// equal_nan. isclose / allclose do not broadcast: Input and Other must have the same dims (as
// Paddle's infer-meta). rtol / atol: the float64 Rtol / Atol inputs (PIR's operands) when given,
// else the string attributes (Fluid's).
#include <cmath>
#include <cstdlib>
#include <string>

#include "common.h"

namespace ops_math {
namespace {

void CheckSameType(tide::InferShapeContext& ctx, const char* a, const char* b) {
  TIDE_CHECK(ctx.InputDataType(a) == ctx.InputDataType(b), "op '", ctx.op_type(), "': ", a, " ('",
             ctx.InputName(a), "') is ", tide::DataTypeName(ctx.InputDataType(a)), " but ", b,
             " ('", ctx.InputName(b), "') is ", tide::DataTypeName(ctx.InputDataType(b)));
}

// Input and Other: one dtype and the same dims (unknown -1 dims are checked when the kernel
// runs).
void CheckCloseDims(const char* op, const Dims& x, const Dims& y, bool known) {
  bool same = x.size() == y.size();
  for (size_t i = 0; same && i < x.size(); ++i)
    same = x[i] == y[i] || (!known && (x[i] < 0 || y[i] < 0));
  TIDE_CHECK(same, "op '", op, "': Input ", tide::ToString(x), " and Other ", tide::ToString(y),
             " must have the same dims");
}

void CloseShape(tide::InferShapeContext& ctx, bool all) {
  CheckSameType(ctx, "Input", "Other");
  const TideDataType t = ctx.InputDataType("Input");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_FP32 || t == TIDE_FP64, "op '", ctx.op_type(),
             "': Input ('", ctx.InputName("Input"), "') must be float32 or float64, got ",
             tide::DataTypeName(t));
  for (const char* p : {"Rtol", "Atol"}) {
    if (!ctx.HasInput(p)) continue;
    const TideDataType pt = ctx.InputDataType(p);
    TIDE_CHECK(pt == TIDE_UNDEFINED || pt == TIDE_FP64 || pt == TIDE_FP32, "op '", ctx.op_type(),
               "': ", p, " ('", ctx.InputName(p), "') must be float64, got ",
               tide::DataTypeName(pt));
  }
  const Dims x = ctx.InputDims("Input");
  CheckCloseDims(ctx.op_type(), x, ctx.InputDims("Other"), false);
  ctx.SetOutputDims("Out", all ? Dims{} : x);
  ctx.SetOutputDataType("Out", TIDE_BOOL);
}

// rtol or atol: input `param` (one float element) when given, else the string attribute.
double Tolerance(const KernelContext& ctx, const char* param, const char* attr) {
  if (ctx.HasInput(param)) {
    Tensor t = ctx.Input(param);
    TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_FP64 || t.dtype() == TIDE_FP32), "op '",
               ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
               "') must hold one float64, got ", tide::DataTypeName(t.dtype()), " ",
               tide::ToString(t.dims()));
    return t.dtype() == TIDE_FP64 ? t.data<double>()[0] : double(t.data<float>()[0]);
  }
  const std::string s = ctx.Attr<std::string>(attr);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  TIDE_CHECK(!s.empty() && end && *end == '\0', "op '", ctx.op_type(), "': attribute ", attr,
             " must be a number, got '", s, "'");
  return v;
}

template <typename T>
bool Close(T a, T b, double rtol, double atol, bool equal_nan) {
  if (std::isnan(a) || std::isnan(b)) return equal_nan && std::isnan(a) && std::isnan(b);
  const T left = a > b ? a - b : b - a;
  const T right = static_cast<T>(atol + (b > 0 ? rtol * b : -rtol * b));
  const T diff = left > right ? left - right : right - left;
  return a == b || left <= right || diff <= T(1e-15);
}

// Calls fn(i, close) for each element; returns Input.
template <typename T, typename Fn>
Tensor ForEachClose(KernelContext& ctx, Fn fn) {
  Tensor x = ctx.Input("Input"), y = ctx.Input("Other");
  CheckCloseDims(ctx.op_type(), x.dims(), y.dims(), true);
  const double rtol = Tolerance(ctx, "Rtol", "rtol"), atol = Tolerance(ctx, "Atol", "atol");
  const bool equal_nan = ctx.Attr<bool>("equal_nan");
  const T *a = x.data<T>(), *b = y.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) fn(i, Close(a[i], b[i], rtol, atol, equal_nan));
  return x;
}

template <typename T>
void IscloseKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  bool* o = ctx.Output("Out").mutable_data<bool>(x.dims(), ctx.place());
  ForEachClose<T>(ctx, [o](int64_t i, bool c) { o[i] = c; });
}

template <typename T>
void AllcloseKernel(KernelContext& ctx) {
  bool all = true;
  ForEachClose<T>(ctx, [&all](int64_t, bool c) { all = all && c; });
  ctx.Output("Out").mutable_data<bool>(Dims{}, ctx.place())[0] = all;
}

void EqualAllShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Y");
  ctx.SetOutputDims("Out", Dims{});
  ctx.SetOutputDataType("Out", TIDE_BOOL);
}

// Different dims (rank included) give false, as Paddle.
template <typename T>
void EqualAllKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  bool eq = x.dims() == y.dims();
  const T *a = x.data<T>(), *b = y.data<T>();
  for (int64_t i = 0; eq && i < x.numel(); ++i) eq = a[i] == b[i];
  ctx.Output("Out").mutable_data<bool>(Dims{}, ctx.place())[0] = eq;
}

tide::OpSchema CloseSchema(const char* name, const char* what, bool all) {
  return tide::OpSchema(name)
      .NoGradient()
      .Comment(what)
      .Input("Input", "float32 or float64")
      .Input("Other", "Input's type and dims")
      .Input("Rtol", "the relative tolerance: one float64 (optional; else rtol)")
      .AsDispensable()
      .Input("Atol", "the absolute tolerance: one float64 (optional; else atol)")
      .AsDispensable()
      .Output("Out", all ? "bool []" : "bool, Input's dims")
      .Attr("rtol", std::string("1e-05"), "the relative tolerance, as a string (Fluid's)")
      .Attr("atol", std::string("1e-08"), "the absolute tolerance, as a string (Fluid's)")
      .Attr("equal_nan", false, "whether two NaNs are close")
      .KernelDataTypeFrom("Input")
      .InferShape([all](tide::InferShapeContext& c) { CloseShape(c, all); });
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(CloseSchema("isclose",
                             "Out = |Input - Other| <= atol + rtol * |Other|, element-wise "
                             "(paddle.isclose; NaNs close only with equal_nan).",
                             false));
TIDE_REGISTER_OP(CloseSchema("allclose",
                             "Out = whether isclose holds for every element (paddle.allclose), "
                             "a 0-D bool.",
                             true));
TIDE_REGISTER_OP(tide::OpSchema("equal_all")
                     .NoGradient()
                     .Comment("Out = whether X and Y have the same dims and equal elements "
                              "(paddle.equal_all), a 0-D bool.")
                     .Input("X", "bool or a number type")
                     .Input("Y", "X's type, any dims")
                     .Output("Out", "bool []")
                     .KernelDataTypeFrom("X")
                     .InferShape(EqualAllShape));
TIDE_REGISTER_KERNEL("isclose", "cpu", IscloseKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("allclose", "cpu", AllcloseKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("equal_all", "cpu", EqualAllKernel, OPS_MATH_NUMERIC_TYPES, bool);
