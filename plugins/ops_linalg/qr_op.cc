// qr_op.cc: Paddle's qr (paddle.linalg.qr: X = Q R per matrix, X [..., M, N], K = min(M, N);
// mode "reduced": Q [..., M, K], R [..., K, N]; "complete": Q [..., M, M], R [..., M, N]; "r": R
// [..., K, N] alone, Q empty [0]; Eigen's Householder QR in the input's type, R's diagonal signs
// LAPACK's) and its grad, Paddle's (Roberts & Roberts 2020, paddle/phi/kernels/impl/
// qr_grad_kernel_impl.h): for M >= N, M = R dR^T - dQ^T Q made symmetric from its lower
// triangle, dX = (dQ + Q M) R^-T; for M < N, X = [X1 | X2] and R = [R1 | R2] with dX2 = Q dR2
// and dX1 from the square case with dQ + X2 dR2^T. As Paddle's, mode "r" and "complete" with
// M > N have no gradient.
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

// Whether the mode computes Q, and whether it is reduced; an unknown mode is an error.
struct QrMode {
  bool compute_q, reduced;
};

QrMode ParseQrMode(const char* op, const std::string& mode) {
  if (mode == "reduced") return {true, true};
  if (mode == "complete") return {true, false};
  if (mode == "r") return {false, true};
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op,
             "': mode must be 'reduced', 'complete' or 'r', but it is '", mode, "'");
}

struct QrDims {
  Dims q, r;
};

QrDims GetQrDims(const char* op, const Dims& d, const QrMode& mode) {
  CheckMatrices(op, "X", d);
  const Dims batch = BatchDims(d);
  const int64_t m = d[d.size() - 2], n = d.back();
  const int64_t k = Known(m) && Known(n) ? std::min(m, n) : -1;
  const int64_t rows = mode.reduced ? k : m;
  return {mode.compute_q ? Concat(batch, {m, rows}) : Dims{0}, Concat(batch, {rows, n})};
}

template <typename T>
void QrKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  const QrMode mode = ParseQrMode(ctx.op_type(), ctx.Attr<std::string>("mode"));
  const QrDims qd = GetQrDims(ctx.op_type(), d, mode);
  const int64_t m = d[d.size() - 2], n = d.back(), rows = qd.r[qd.r.size() - 2];
  const int64_t nb = DimsProduct(BatchDims(d));
  T* q = ctx.Output("Q").mutable_data<T>(qd.q, ctx.place());
  T* r = ctx.Output("R").mutable_data<T>(qd.r, ctx.place());
  for (int64_t b = 0; b < nb; ++b) {
    Eigen::HouseholderQR<Matrix<T>> qr(ConstMatrixMap<T>(x.data<T>() + b * m * n, m, n));
    MatrixMap<T>(r + b * rows * n, rows, n) =
        qr.matrixQR().topRows(rows).template triangularView<Eigen::Upper>();
    if (mode.compute_q)
      MatrixMap<T>(q + b * m * rows, m, rows) = qr.householderQ() * Matrix<T>::Identity(m, rows);
  }
}

// dX of the square or tall case (M >= K = R's rows): (dQ + Q M) R^-T.
template <typename T>
Matrix<T> QrTallGrad(const Matrix<T>& q, const Matrix<T>& r, const Matrix<T>* dq,
                     const Matrix<T>* dr) {
  const int64_t k = r.rows();
  Matrix<T> mm = Matrix<T>::Zero(k, k);
  if (dr) mm += r * dr->transpose();
  if (dq) mm -= dq->transpose() * q;
  Matrix<T> sym = mm.template triangularView<Eigen::Lower>();
  sym += Matrix<T>(mm.template triangularView<Eigen::StrictlyLower>()).transpose();
  Matrix<T> rhs = q * sym;
  if (dq) rhs += *dq;
  // dX R^T = rhs: R dX^T = rhs^T.
  return r.leftCols(k).template triangularView<Eigen::Upper>().solve(rhs.transpose()).transpose();
}

template <typename T>
void QrGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), qt = ctx.Input("Q"), rt = ctx.Input("R");
  const Dims d = x.dims();
  const char* op = ctx.op_type();
  const std::string mode_name = ctx.Attr<std::string>("mode");
  const QrMode mode = ParseQrMode(op, mode_name);
  const int64_t m = d[d.size() - 2], n = d.back(), nb = DimsProduct(BatchDims(d));
  TIDE_CHECK(mode.compute_q, "op '", op, "': qr has no gradient with mode 'r' (as Paddle's)");
  TIDE_CHECK(m <= n || mode.reduced, "op '", op,
             "': qr has no gradient with mode 'complete' when M > N (here ", m, " > ", n,
             "), as Paddle's");
  const int64_t k = std::min(m, n);
  const T* dq_all = OptionalGrad<T>(ctx, "Q");
  const T* dr_all = OptionalGrad<T>(ctx, "R");
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < nb; ++b) {
    const Matrix<T> q = ConstMatrixMap<T>(qt.data<T>() + b * m * k, m, k);
    const Matrix<T> r = ConstMatrixMap<T>(rt.data<T>() + b * k * n, k, n);
    Matrix<T> dq =
        dq_all ? Matrix<T>(ConstMatrixMap<T>(dq_all + b * m * k, m, k)) : Matrix<T>::Zero(m, k);
    const Matrix<T> dr =
        dr_all ? Matrix<T>(ConstMatrixMap<T>(dr_all + b * k * n, k, n)) : Matrix<T>::Zero(k, n);
    MatrixMap<T> g(dx + b * m * n, m, n);
    if (m >= n) {
      g = QrTallGrad<T>(q, r, dq_all ? &dq : nullptr, dr_all ? &dr : nullptr);
      continue;
    }
    // Wide: X = [X1 | X2], R = [R1 | R2].
    const Matrix<T> x2 = ConstMatrixMap<T>(x.data<T>() + b * m * n, m, n).rightCols(n - m);
    const Matrix<T> dr1 = dr.leftCols(m), dr2 = dr.rightCols(n - m);
    dq += x2 * dr2.transpose();
    g.leftCols(m) = QrTallGrad<T>(q, Matrix<T>(r.leftCols(m)), &dq, &dr1);
    g.rightCols(n - m) = q * dr2;
  }
}

void QrInferShape(tide::InferShapeContext& ctx) {
  const QrMode mode = ParseQrMode(ctx.op_type(), ctx.Attr<std::string>("mode"));
  const QrDims qd = GetQrDims(ctx.op_type(), ctx.InputDims("X"), mode);
  ctx.SetOutputDims("Q", qd.q);
  ctx.SetOutputDims("R", qd.r);
  ctx.SetOutputDataType("Q", ctx.InputDataType("X"));
  ctx.SetOutputDataType("R", ctx.InputDataType("X"));
}

void QrGradInferShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X"}); }

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("qr")
                     .Comment("X = Q R per matrix (paddle.linalg.qr), Q orthonormal columns, R "
                              "upper triangular.")
                     .Input("X", "matrices [..., M, N]")
                     .Output("Q", "[..., M, K] (K = min(M, N)); [..., M, M] complete; [0] for 'r'")
                     .Output("R", "[..., K, N]; [..., M, N] complete")
                     .Attr("mode", std::string("reduced"), "'reduced', 'complete' or 'r' (R alone)")
                     .InferShape(QrInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("qr_grad")
                           .Input("X", g.Input("X"))
                           .Input("Q", g.Output("Q"))
                           .Input("R", g.Output("R"))
                           .Input(GradVarName("Q"), g.OutputGrad("Q"))
                           .Input(GradVarName("R"), g.OutputGrad("R"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("qr_grad")
                     .Input("X")
                     .Input("Q")
                     .Input("R")
                     .Input(GradVarName("Q"))
                     .AsDispensable()
                     .Input(GradVarName("R"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .Attr("mode", std::string("reduced"))
                     .KernelDataTypeFrom("X")
                     .InferShape(QrGradInferShape));
TIDE_REGISTER_KERNEL("qr", "cpu", QrKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("qr_grad", "cpu", QrGradKernel, OPS_LINALG_FLOAT_TYPES);
