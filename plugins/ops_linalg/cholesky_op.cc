// cholesky_op.cc: Paddle's cholesky (paddle.linalg.cholesky: X = L L^T per matrix, Out = L, or
// U = L^T with upper; Eigen's LLT in the input's type, reading X's lower triangle as Paddle's
// does) and its grad (Murray's rule, symmetrized as Paddle's: dX = sym(L^-T phi(L^T dL) L^-1),
// phi the lower triangle with a halved diagonal). A matrix that is not positive definite is
// refused, as Paddle refuses it, naming the matrix.
#include "common.h"

namespace ops_linalg {
namespace {

template <typename T>
void CholeskyKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  CheckSquare(ctx.op_type(), "X", d);
  const bool upper = ctx.Attr<bool>("upper");
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* out = ctx.Output("Out").mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    Eigen::LLT<Matrix<T>> llt(ConstMatrixMap<T>(x.data<T>() + b * n * n, n, n));
    TIDE_CHECK(llt.info() == Eigen::Success, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
               "') matrix ", b, " of ", batch,
               " is not positive definite (its Cholesky decomposition failed)");
    MatrixMap<T> o(out + b * n * n, n, n);
    if (upper)
      o = llt.matrixU();
    else
      o = llt.matrixL();
  }
}

template <typename T>
void CholeskyGradKernel(KernelContext& ctx) {
  Tensor out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  const Dims d = out.dims();
  const bool upper = ctx.Attr<bool>("upper");
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    ConstMatrixMap<T> o(out.data<T>() + b * n * n, n, n), g(dout.data<T>() + b * n * n, n, n);
    const Matrix<T> l = upper ? Matrix<T>(o.transpose()) : Matrix<T>(o);
    const Matrix<T> dl = upper ? Matrix<T>(g.transpose()) : Matrix<T>(g);
    Matrix<T> phi = (l.transpose() * dl).template triangularView<Eigen::Lower>();
    phi.diagonal() *= T(0.5);
    // L^-T phi L^-1: two triangular solves.
    const auto lv = l.template triangularView<Eigen::Lower>();
    Matrix<T> s = lv.transpose().solve(phi);
    s = lv.transpose().solve(Matrix<T>(s.transpose())).transpose();
    MatrixMap<T>(dx + b * n * n, n, n) = T(0.5) * (s + s.transpose());
  }
}

void CholeskyInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("X");
  CheckSquare(ctx.op_type(), "X", d);
  ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void CholeskyGradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("X");
  if (!ctx.HasOutput(g.c_str())) return;
  ctx.SetOutputDims(g.c_str(), ctx.InputDims("Out"));
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Out"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("cholesky")
                     .Comment("X = L L^T per matrix (paddle.linalg.cholesky): Out = L, or L^T "
                              "with upper; X's lower triangle is read.")
                     .Input("X", "symmetric positive definite matrices [..., M, M]")
                     .Output("Out", "the triangular factors, X's dims")
                     .Attr("upper", false, "Out upper triangular (L^T) rather than lower (L)")
                     .InferShape(CholeskyInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("cholesky_grad")
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("cholesky_grad")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("upper", false)
                     .KernelDataTypeFrom("Out")
                     .InferShape(CholeskyGradInferShape));
TIDE_REGISTER_KERNEL("cholesky", "cpu", CholeskyKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cholesky_grad", "cpu", CholeskyGradKernel, OPS_LINALG_FLOAT_TYPES);
