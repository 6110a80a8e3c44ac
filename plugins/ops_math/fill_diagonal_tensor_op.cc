// fill_diagonal_tensor_op.cc: Paddle's fill_diagonal_tensor (paddle.diagonal_scatter /
// Tensor.fill_diagonal_tensor): Out = X with the diagonal of dims dim1 and dim2 (offset: above
// it along dim2 when > 0, below when < 0) replaced by Y. Y holds one row of the diagonal's
// length for each index of X's other dims, in their row-major order (Y's dims but its last
// flattened, as Paddle's kernel reads it). Grad: X@GRAD = Out@GRAD with the diagonal zeroed; Y
// takes no gradient, as Paddle's fill_diagonal_tensor_grad.
#include <algorithm>
#include <string>
#include <tide/ops/axis.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// The diagonal within X's dims: `rows` rows (one per index of the other dims) of `len`
// elements; row r's element j is at first[r] + j * step.
struct Diagonal {
  int64_t rows = 1, len = 0, step = 0;
  std::vector<int64_t> first;
};

Diagonal GetDiagonal(const char* op, const Dims& x, int64_t offset, int dim1_attr, int dim2_attr) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must have rank >= 2, got ", tide::ToString(x));
  const int d1 = tide::ops::NormAxis(op, dim1_attr, x.size());
  const int d2 = tide::ops::NormAxis(op, dim2_attr, x.size());
  TIDE_CHECK(d1 != d2, "op '", op, "': dim1 (", dim1_attr, ") and dim2 (", dim2_attr,
             ") must be different dims of X ", tide::ToString(x));
  std::vector<int64_t> stride(x.size(), 1);
  for (size_t i = x.size() - 1; i-- > 0;) stride[i] = stride[i + 1] * x[i + 1];
  Diagonal g;
  g.len = offset >= 0 ? std::min(x[d1], x[d2] - offset) : std::min(x[d1] + offset, x[d2]);
  TIDE_CHECK(g.len > 0 || x[d1] == 0 || x[d2] == 0, "op '", op, "': offset ", offset,
             " leaves no diagonal in dims ", d1, " and ", d2, " of X ", tide::ToString(x));
  g.len = std::max<int64_t>(g.len, 0);
  g.step = stride[d1] + stride[d2];
  const int64_t base = offset >= 0 ? offset * stride[d2] : -offset * stride[d1];
  g.first = {base};
  for (size_t i = 0; i < x.size(); ++i) {
    if (static_cast<int>(i) == d1 || static_cast<int>(i) == d2) continue;
    std::vector<int64_t> next;
    next.reserve(g.first.size() * static_cast<size_t>(std::max<int64_t>(x[i], 0)));
    for (int64_t f : g.first)
      for (int64_t k = 0; k < x[i]; ++k) next.push_back(f + k * stride[i]);
    g.first.swap(next);
    g.rows *= x[i];
  }
  return g;
}

template <typename Ctx>
Diagonal AttrDiagonal(const Ctx& ctx, const Dims& x) {
  return GetDiagonal(ctx.op_type(), x, ctx.template Attr<int64_t>("offset"),
                     ctx.template Attr<int32_t>("dim1"), ctx.template Attr<int32_t>("dim2"));
}

// Y, flattened to [rows, last dim], must be the diagonal's [rows, len].
void CheckY(const char* op, const Dims& y, const Diagonal& g) {
  const int64_t last = y.empty() ? 1 : y.back();
  const int64_t rows = y.empty() ? 1 : DimsProduct(Dims(y.begin(), y.end() - 1));
  TIDE_CHECK(rows == g.rows && last == g.len, "op '", op, "': Y ", tide::ToString(y),
             " must flatten to the diagonal's [", g.rows, ", ", g.len,
             "] (its last dim the "
             "diagonal's length, the others X's other dims)");
}

bool Known(const Dims& d) {
  return std::none_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
}

void FillDiagonalTensorShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  TIDE_CHECK(ctx.InputDataType("X") == ctx.InputDataType("Y"), "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') is ", tide::DataTypeName(ctx.InputDataType("X")), " but Y ('",
             ctx.InputName("Y"), "') is ", tide::DataTypeName(ctx.InputDataType("Y")));
  if (Known(x)) {
    const Diagonal g = AttrDiagonal(ctx, x);
    if (Known(y)) CheckY(ctx.op_type(), y, g);
  }
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void FillDiagonalTensorKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const Diagonal g = AttrDiagonal(ctx, x.dims());
  CheckY(ctx.op_type(), y.dims(), g);
  const T *xd = x.data<T>(), *yd = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(xd, xd + x.numel(), o);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t j = 0; j < g.len; ++j) o[g.first[r] + j * g.step] = yd[r * g.len + j];
}

template <typename T>
void FillDiagonalTensorGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Diagonal g = AttrDiagonal(ctx, dout.dims());
  const T* d = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(dout.dims(), ctx.place());
  std::copy(d, d + dout.numel(), dx);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t j = 0; j < g.len; ++j) dx[g.first[r] + j * g.step] = T(0);
}

void FillDiagonalTensorGradShape(tide::InferShapeContext& ctx) {
  const std::string dout = GradVarName("Out"), dx = GradVarName("X");
  const Dims d = ctx.InputDims(dout.c_str());
  if (Known(d)) AttrDiagonal(ctx, d);
  ctx.SetOutputDims(dx.c_str(), d);
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("fill_diagonal_tensor")
                     .Comment("Out = X with its diagonal over dim1 and dim2 (offset along dim2) "
                              "set to Y (paddle.diagonal_scatter).")
                     .Input("X", "rank >= 2")
                     .Input("Y",
                            "X's type: [X's other dims..., the diagonal's length], its "
                            "dims but the last flattened")
                     .Output("Out", "X's type and dims")
                     .Attr("offset", int64_t{0}, "the diagonal: > 0 above, < 0 below the main")
                     .Attr("dim1", int32_t{0}, "the diagonal's first dim")
                     .Attr("dim2", int32_t{1}, "the diagonal's second dim")
                     .InferShape(FillDiagonalTensorShape)
                     .Grad([](tide::GradMaker& g) {  // Y takes no gradient, as Paddle
                       g.NewOp("fill_diagonal_tensor_grad")
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("fill_diagonal_tensor_grad")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("offset", int64_t{0})
                     .Attr("dim1", int32_t{0})
                     .Attr("dim2", int32_t{1})
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape(FillDiagonalTensorGradShape));
TIDE_REGISTER_KERNEL("fill_diagonal_tensor", "cpu", FillDiagonalTensorKernel,
                     OPS_MATH_NUMERIC_TYPES, int16_t, int8_t, uint8_t, bool);
TIDE_REGISTER_KERNEL("fill_diagonal_tensor_grad", "cpu", FillDiagonalTensorGradKernel,
                     OPS_MATH_FLOAT_TYPES);
