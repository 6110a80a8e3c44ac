// eigh_op.cc: Paddle's eigh (paddle.linalg.eigh: X symmetric [..., M, M], read from its lower
// triangle (UPLO "L") or upper ("U"); Eigenvalues [..., M] ascending, Eigenvectors [..., M, M]
// their orthonormal columns, unique up to sign; Eigen's SelfAdjointEigenSolver in the input's
// type) and its grad, Paddle's (paddle/phi/kernels/impl/eigh_grad_kernel_impl.h):
// dX = V (diag(dW) + (V^T dV - dV^T V) / 2 / E) V^T, E_ij = w_j - w_i off the diagonal.
// eigvalsh (paddle.linalg.eigvalsh) is the same op under Paddle's other name, with its is_test
// attribute (unused: the eigenvectors are always written, which its grad reads).
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

bool UpperFromUplo(const char* op, const std::string& uplo) {
  TIDE_CHECK(uplo == "L" || uplo == "U", "op '", op, "': UPLO must be 'L' or 'U', but it is '",
             uplo, "'");
  return uplo == "U";
}

template <typename T>
void EighKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  CheckSquare(ctx.op_type(), "X", d);
  const bool upper = UpperFromUplo(ctx.op_type(), ctx.Attr<std::string>("UPLO"));
  const int64_t m = d.back(), nb = DimsProduct(BatchDims(d));
  T* w = ctx.Output("Eigenvalues").mutable_data<T>(Concat(BatchDims(d), {m}), ctx.place());
  T* v = ctx.Output("Eigenvectors").mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < nb; ++b) {
    ConstMatrixMap<T> a(x.data<T>() + b * m * m, m, m);
    // The solver reads the lower triangle: X^T's is X's upper one.
    const Matrix<T> s = upper ? Matrix<T>(a.transpose()) : Matrix<T>(a);
    Eigen::SelfAdjointEigenSolver<Matrix<T>> es(s);
    TIDE_CHECK(es.info() == Eigen::Success, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
               "') matrix ", b, " of ", nb, ": the eigenvalue iteration did not converge");
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(w + b * m, m) = es.eigenvalues();
    MatrixMap<T>(v + b * m * m, m, m) = es.eigenvectors();
  }
}

template <typename T>
void EighGradKernel(KernelContext& ctx) {
  Tensor wt = ctx.Input("Eigenvalues"), vt = ctx.Input("Eigenvectors");
  const Dims d = vt.dims();
  const int64_t m = d.back(), nb = DimsProduct(BatchDims(d));
  const T* dw_all = OptionalGrad<T>(ctx, "Eigenvalues");
  const T* dv_all = OptionalGrad<T>(ctx, "Eigenvectors");
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < nb; ++b) {
    ConstMatrixMap<T> v(vt.data<T>() + b * m * m, m, m);
    const T* w = wt.data<T>() + b * m;
    Matrix<T> inner = Matrix<T>::Zero(m, m);
    if (dv_all) {
      ConstMatrixMap<T> dv(dv_all + b * m * m, m, m);
      const Matrix<T> vdv = v.transpose() * dv;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j)
          if (i != j) inner(i, j) = T(0.5) * (vdv(i, j) - vdv(j, i)) / (w[j] - w[i]);
    }
    if (dw_all)
      for (int64_t i = 0; i < m; ++i) inner(i, i) = dw_all[b * m + i];
    MatrixMap<T>(dx + b * m * m, m, m).noalias() = v * inner * v.transpose();
  }
}

void EighInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("X");
  CheckSquare(ctx.op_type(), "X", d);
  UpperFromUplo(ctx.op_type(), ctx.Attr<std::string>("UPLO"));
  ctx.SetOutputDims("Eigenvalues", Concat(BatchDims(d), {d.back()}));
  ctx.SetOutputDims("Eigenvectors", d);
  ctx.SetOutputDataType("Eigenvalues", ctx.InputDataType("X"));
  ctx.SetOutputDataType("Eigenvectors", ctx.InputDataType("X"));
}

void EighGradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("X");
  if (!ctx.HasOutput(g.c_str())) return;
  ctx.SetOutputDims(g.c_str(), ctx.InputDims("Eigenvectors"));
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Eigenvectors"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("eigh")
                     .Comment("The eigenvalues (ascending) and eigenvectors of symmetric "
                              "matrices (paddle.linalg.eigh), read from one triangle.")
                     .Input("X", "symmetric matrices [..., M, M]")
                     .Output("Eigenvalues", "[..., M], ascending")
                     .Output("Eigenvectors", "[..., M, M], orthonormal columns")
                     .Attr("UPLO", std::string("L"), "the triangle read: 'L' (lower) or 'U'")
                     .InferShape(EighInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("eigh_grad")
                           .Input("Eigenvalues", g.Output("Eigenvalues"))
                           .Input("Eigenvectors", g.Output("Eigenvectors"))
                           .Input(GradVarName("Eigenvalues"), g.OutputGrad("Eigenvalues"))
                           .Input(GradVarName("Eigenvectors"), g.OutputGrad("Eigenvectors"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("eigh_grad")
                     .Input("Eigenvalues")
                     .Input("Eigenvectors")
                     .Input(GradVarName("Eigenvalues"))
                     .AsDispensable()
                     .Input(GradVarName("Eigenvectors"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .Attr("UPLO", std::string("L"))
                     .KernelDataTypeFrom("Eigenvectors")
                     .InferShape(EighGradInferShape));
TIDE_REGISTER_KERNEL("eigh", "cpu", EighKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("eigh_grad", "cpu", EighGradKernel, OPS_LINALG_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("eigvalsh")
                     .Comment("eigh's eigenvalues (paddle.linalg.eigvalsh); Eigenvectors too, "
                              "which the grad reads.")
                     .Input("X", "symmetric matrices [..., M, M]")
                     .Output("Eigenvalues", "[..., M], ascending")
                     .Output("Eigenvectors", "[..., M, M], orthonormal columns")
                     .Attr("UPLO", std::string("L"), "the triangle read: 'L' (lower) or 'U'")
                     .Attr("is_test", false, "Paddle's hint that no grad follows (unused)")
                     .InferShape(EighInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("eigvalsh_grad")
                           .Input("Eigenvalues", g.Output("Eigenvalues"))
                           .Input("Eigenvectors", g.Output("Eigenvectors"))
                           .Input(GradVarName("Eigenvalues"), g.OutputGrad("Eigenvalues"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("eigvalsh_grad")
                     .Input("Eigenvalues")
                     .Input("Eigenvectors")
                     .Input(GradVarName("Eigenvalues"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .Attr("UPLO", std::string("L"))
                     .Attr("is_test", false)
                     .KernelDataTypeFrom("Eigenvectors")
                     .InferShape(EighGradInferShape));
TIDE_REGISTER_KERNEL("eigvalsh", "cpu", EighKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("eigvalsh_grad", "cpu", EighGradKernel, OPS_LINALG_FLOAT_TYPES);
