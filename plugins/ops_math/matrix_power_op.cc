// matrix_power_op.cc: Paddle's matrix_power (paddle.linalg.matrix_power): Out = X^n for each
// [M, M] matrix of X [..., M, M]; n = 0 gives the identity, n < 0 the inverse's power (each
// inverse by Eigen's partial-pivot LU; a singular matrix is an error). Its grad, with A = X (or
// X^-1 when n < 0) and m = |n|: dA = sum_{i<m} (A^T)^i dOut (A^T)^(m-1-i), and for n < 0
// dX = -X^-T dA X^-T.
#include <Eigen/LU>
#include <string>
#include <vector>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// X's matrices: `count` of them, each [m, m].
struct Batch {
  int64_t count, m;
};

Batch BatchOf(const char* op, const Dims& x) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must be [..., M, M] (at least 2-D), got ",
             tide::ToString(x));
  const int64_t r = x[x.size() - 2], c = x[x.size() - 1];
  TIDE_CHECK(tide::ops::DimsCompatible(r, c), "op '", op, "': X's matrices must be square, got X ",
             tide::ToString(x));
  return {tide::ops::DimsProductOrUnknown(x, 0, x.size() - 2), r < 0 ? c : r};
}

// The base A whose |n|-th power is Out: X, or X's inverse when n < 0.
template <typename T>
Mat<T> Base(const char* op, const Eigen::Map<const Mat<T>>& x, int n, int64_t which) {
  if (n >= 0) return x;
  Eigen::PartialPivLU<Mat<T>> lu(x);
  const auto diag = lu.matrixLU().diagonal();
  for (Eigen::Index i = 0; i < diag.size(); ++i)
    TIDE_CHECK(diag(i) != T(0), "op '", op, "': matrix ", which,
               " of X is singular, so it has no negative power (n = ", n, ")");
  return lu.inverse();
}

// a^p by repeated squaring.
template <typename T>
Mat<T> Power(const Mat<T>& a, int p) {
  Mat<T> r = Mat<T>::Identity(a.rows(), a.cols()), b = a;
  for (; p > 0; p >>= 1) {
    if (p & 1) r = r * b;
    if (p > 1) b = b * b;
  }
  return r;
}

template <typename T>
void MatrixPowerKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Batch b = BatchOf(ctx.op_type(), x.dims());
  const int n = ctx.Attr<int32_t>("n");
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  const int64_t mm = b.m * b.m;
  for (int64_t i = 0; i < b.count; ++i) {
    const Eigen::Map<const Mat<T>> xi(xd + i * mm, b.m, b.m);
    Eigen::Map<Mat<T>>(o + i * mm, b.m, b.m) = Power(Base<T>(ctx.op_type(), xi, n, i), std::abs(n));
  }
}

template <typename T>
void MatrixPowerGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const Batch b = BatchOf(ctx.op_type(), x.dims());
  const int n = ctx.Attr<int32_t>("n"), m = std::abs(n);
  const T *xd = x.data<T>(), *gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  const int64_t mm = b.m * b.m;
  for (int64_t i = 0; i < b.count; ++i) {
    Eigen::Map<Mat<T>> dxi(dx + i * mm, b.m, b.m);
    if (n == 0) {
      dxi.setZero();
      continue;
    }
    const Eigen::Map<const Mat<T>> xi(xd + i * mm, b.m, b.m), gi(gd + i * mm, b.m, b.m);
    const Mat<T> at = Base<T>(ctx.op_type(), xi, n, i).transpose();
    std::vector<Mat<T>> pw(m);  // (A^T)^0 .. (A^T)^(m-1)
    pw[0] = Mat<T>::Identity(b.m, b.m);
    for (int k = 1; k < m; ++k) pw[k] = pw[k - 1] * at;
    Mat<T> da = Mat<T>::Zero(b.m, b.m);
    for (int k = 0; k < m; ++k) da += pw[k] * gi * pw[m - 1 - k];
    if (n > 0)
      dxi = da;
    else
      dxi = -at * da * at;
  }
}

void MatrixPowerInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  BatchOf(ctx.op_type(), x);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("matrix_power")
                     .Comment("Out = X^n per [M, M] matrix (paddle.linalg.matrix_power): n = 0 "
                              "the identity, n < 0 the inverse's |n|-th power.")
                     .Input("X", "[..., M, M]")
                     .Output("Out", "X's dims")
                     .Attr("n", int32_t(0), "the exponent")
                     .InferShape(MatrixPowerInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("matrix_power_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("matrix_power_grad")
                     .Input("X")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("n", int32_t(0))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("matrix_power", "cpu", MatrixPowerKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("matrix_power_grad", "cpu", MatrixPowerGradKernel, OPS_MATH_FLOAT_TYPES);
