// tide/ops/cross_entropy.hpp: Fluid's guards of cross_entropy and cross_entropy2 against log(0)
// and division by 0 (TolerableValue: -inf becomes -1e20, so Y stays finite and 0 * log(0) is 0),
// also in CUDA device code; X's rows, and cross_entropy, cross_entropy2 and their grads as every
// kernel reads their inputs (checked, outputs allocated on the kernel's place).
#ifndef TIDE_OPS_CROSS_ENTROPY_HPP_
#define TIDE_OPS_CROSS_ENTROPY_HPP_

#include <math.h>

#include <algorithm>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/ops/loss.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

namespace xe_math {
TIDE_OPS_HOST_DEVICE inline float Log(float x) { return ::logf(x); }
TIDE_OPS_HOST_DEVICE inline double Log(double x) { return ::log(x); }
}  // namespace xe_math

// log(x), with +-inf taken as +-1e20.
template <typename T>
TIDE_OPS_HOST_DEVICE T TolerableLog(T x) {
  const T l = xe_math::Log(x);
  if (l == -static_cast<T>(INFINITY)) return static_cast<T>(-1e20);
  if (l == static_cast<T>(INFINITY)) return static_cast<T>(1e20);
  return l;
}

// A divisor of at least 1e-20 (std::max's choice: a NaN stays NaN).
template <typename T>
TIDE_OPS_HOST_DEVICE T SafeDenominator(T x) {
  return x < static_cast<T>(1e-20) ? static_cast<T>(1e-20) : x;
}

// X [..., D] as n rows of d classes.
struct XeRows {
  int64_t n, d;
};
inline XeRows GetXeRows(const Dims& x) {
  const int64_t d = x.back();
  return {DimsProduct(x) / std::max<int64_t>(d, 1), d};
}

// cross_entropy2_grad: X's dims from XShape, checked against Label, MatchX and Y@GRAD.
inline Dims CrossEntropy2GradXDims(const char* op, const Dims& xshape, const Dims& label,
                                   const Dims& match, const Dims& dy) {
  TIDE_CHECK(xshape.size() >= 3, "op '", op, "': XShape ", ToString(xshape),
             " is not [0] + the dims of an X of rank >= 2");
  const Dims x(xshape.begin() + 1, xshape.end());
  CheckCrossEntropyLabel(op, x, label, false);
  const int64_t n = GetXeRows(x).n;
  TIDE_CHECK(DimsProduct(match) == n && DimsProduct(dy) == n, "op '", op, "': MatchX ",
             ToString(match), " and Y@GRAD ", ToString(dy), " must hold one value per row of X ",
             ToString(x));
  return x;
}

// Y's dims, as Fluid 1.x's cross_entropy and cross_entropy2 give them: Label's, with a last dim of
// 1 where Label has X's rank (X [N, D] with Label [N, 1], or soft [N, D]: Y [N, 1]; Label [N]: Y
// [N]).
inline Dims CrossEntropyYDims(const Dims& x, const Dims& label) {
  Dims y = label;
  if (y.size() == x.size()) y.back() = 1;
  return y;
}

// X's dims with a last dim of 1 (cross_entropy2's MatchX).
inline Dims XeOneValuePerRow(const Dims& x) {
  Dims m = x;
  m.back() = 1;
  return m;
}

// X's rows and ignore_index into a's n, d and ignore.
template <typename Args>
void ReadXeRows(const KernelContext& ctx, const Dims& x, Args* a) {
  const XeRows r = GetXeRows(x);
  // Rows with no classes have no probability to read: the rows-of-zero case divides them away.
  TIDE_CHECK(r.d > 0 || DimsProduct(x, 0, x.size() - 1) == 0, "op '", ctx.op_type(), "': X ",
             ToString(x), " has no classes on its last axis");
  a->n = r.n;
  a->d = r.d;
  a->ignore = ctx.Attr<int32_t>("ignore_index");
}

// cross_entropy: X [..., D] as n rows of d, Label (hard or soft), Y (CrossEntropyYDims).
template <typename T>
struct XeArgs {
  int64_t n, d, ignore;
  const T* x;
  LabelData<T> label;
  T* y;
};

template <typename T>
XeArgs<T> GetXeArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  const bool soft = ctx.Attr<bool>("soft_label");
  CheckCrossEntropyLabel(ctx.op_type(), x.dims(), label.dims(), soft);
  XeArgs<T> a;
  ReadXeRows(ctx, x.dims(), &a);
  a.x = x.data<T>();
  a.label = GetLabelData<T>(ctx, label, soft);
  a.y = ctx.Output("Y").mutable_data<T>(CrossEntropyYDims(x.dims(), label.dims()), ctx.place());
  return a;
}

// cross_entropy_grad: X, Label, Y@GRAD (one value per row), X@GRAD allocated with X's dims.
template <typename T>
struct XeGradArgs {
  int64_t n, d, ignore;
  const T* x;
  LabelData<T> label;
  const T* dy;
  T* dx;
};

template <typename T>
XeGradArgs<T> GetXeGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const bool soft = ctx.Attr<bool>("soft_label");
  CheckCrossEntropyLabel(op, x.dims(), label.dims(), soft);
  XeGradArgs<T> a;
  ReadXeRows(ctx, x.dims(), &a);
  TIDE_CHECK(dy.numel() == a.n, "op '", op, "': Y@GRAD ", ToString(dy.dims()),
             " does not hold one value per row of X ", ToString(x.dims()));
  a.x = x.data<T>();
  a.dy = dy.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  a.label = GetLabelData<T>(ctx, label, soft);
  return a;
}

// cross_entropy2's Label: int64 class ids (it has no soft labels).
inline const int64_t* CrossEntropy2Labels(const KernelContext& ctx, const Tensor& label) {
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Label ('",
             ctx.InputName("Label"), "') must be int64, got ", DataTypeName(label.dtype()));
  return label.data<int64_t>();
}

// cross_entropy2: X, hard Label; Y (CrossEntropyYDims), MatchX (X's dims, last 1) and XShape
// allocated.
template <typename T>
struct Xe2Args {
  int64_t n, d, ignore;
  const T* x;
  const int64_t* label;
  T* y;
  T* match;
};

template <typename T>
Xe2Args<T> GetXe2Args(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  CheckCrossEntropyLabel(ctx.op_type(), x.dims(), label.dims(), false);
  Xe2Args<T> a;
  a.label = CrossEntropy2Labels(ctx, label);
  ReadXeRows(ctx, x.dims(), &a);
  a.x = x.data<T>();
  a.y = ctx.Output("Y").mutable_data<T>(CrossEntropyYDims(x.dims(), label.dims()), ctx.place());
  a.match = ctx.Output("MatchX").mutable_data<T>(XeOneValuePerRow(x.dims()), ctx.place());
  if (Tensor xs = ctx.OptionalOutput("XShape"))
    xs.mutable_data<T>(XShapeDims(x.dims()), ctx.place());
  return a;
}

// cross_entropy2_grad: X's dims from XShape; Label, MatchX, Y@GRAD; X@GRAD allocated.
template <typename T>
struct Xe2GradArgs {
  int64_t n, d, ignore;
  const int64_t* label;
  const T* match;
  const T* dy;
  T* dx;
};

template <typename T>
Xe2GradArgs<T> GetXe2GradArgs(const KernelContext& ctx) {
  Tensor label = ctx.Input("Label"), match = ctx.Input("MatchX");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const Dims xd = CrossEntropy2GradXDims(ctx.op_type(), ctx.Input("XShape").dims(), label.dims(),
                                         match.dims(), dy.dims());
  Xe2GradArgs<T> a;
  a.label = CrossEntropy2Labels(ctx, label);
  ReadXeRows(ctx, xd, &a);
  a.match = match.data<T>();
  a.dy = dy.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CROSS_ENTROPY_HPP_
