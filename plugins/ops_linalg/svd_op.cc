// svd_op.cc: Paddle's svd (paddle.linalg.svd: X = U diag(S) VH per matrix, X [..., M, N], K =
// min(M, N): U [..., M, K], S [..., K] descending, VH [..., K, N]; full_matrices: U [..., M, M],
// VH [..., N, N]; Eigen's BDCSVD in the input's type; singular vectors are unique up to sign
// only) and its grad, Paddle's formula (paddle/phi/kernels/impl/svd_grad_kernel_impl.h): with
// F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, dX = U diag(dS) VH
// + U ((U^T dU - dU^T U) o F) diag(S) VH + (I - U U^T) dU diag(1/S) VH (M > K)
// + U diag(S) ((VH dVH^T - dVH VH^T) o F) VH + U diag(1/S) dVH (I - VH^T VH) (N > K); with
// full_matrices only the first K columns of U (rows of VH) carry gradient, as Paddle's.
#include "common.h"

namespace ops_linalg {
namespace {

struct SvdShape {
  int64_t m, n, k, ucols, vrows;
};

SvdShape GetSvdShape(const Dims& d, bool full) {
  SvdShape s;
  s.m = d[d.size() - 2];
  s.n = d.back();
  s.k = Known(s.m) && Known(s.n) ? std::min(s.m, s.n) : -1;
  s.ucols = full ? s.m : s.k;
  s.vrows = full ? s.n : s.k;
  return s;
}

template <typename T>
void SvdKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  CheckMatrices(ctx.op_type(), "X", d);
  const bool full = ctx.Attr<bool>("full_matrices");
  const SvdShape s = GetSvdShape(d, full);
  const Dims batch = BatchDims(d);
  const int64_t nb = DimsProduct(batch);
  T* u = ctx.Output("U").mutable_data<T>(Concat(batch, {s.m, s.ucols}), ctx.place());
  T* sv = ctx.Output("S").mutable_data<T>(Concat(batch, {s.k}), ctx.place());
  T* vh = ctx.Output("VH").mutable_data<T>(Concat(batch, {s.vrows, s.n}), ctx.place());
  const unsigned flags =
      full ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV;
  for (int64_t b = 0; b < nb; ++b) {
    Eigen::BDCSVD<Matrix<T>> svd(ConstMatrixMap<T>(x.data<T>() + b * s.m * s.n, s.m, s.n), flags);
    MatrixMap<T>(u + b * s.m * s.ucols, s.m, s.ucols) = svd.matrixU();
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(sv + b * s.k, s.k) = svd.singularValues();
    MatrixMap<T>(vh + b * s.vrows * s.n, s.vrows, s.n) = svd.matrixV().transpose();
  }
}

template <typename T>
void SvdGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), ut = ctx.Input("U"), st = ctx.Input("S"), vht = ctx.Input("VH");
  const Dims d = x.dims();
  const SvdShape s = GetSvdShape(d, ctx.Attr<bool>("full_matrices"));
  const int64_t m = s.m, n = s.n, k = s.k, nb = DimsProduct(BatchDims(d));
  const T* du_all = OptionalGrad<T>(ctx, "U");
  const T* ds_all = OptionalGrad<T>(ctx, "S");
  const T* dvh_all = OptionalGrad<T>(ctx, "VH");
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < nb; ++b) {
    // The first K columns of U (rows of VH) and their gradients.
    const Matrix<T> u = ConstMatrixMap<T>(ut.data<T>() + b * m * s.ucols, m, s.ucols).leftCols(k);
    const Matrix<T> vh = ConstMatrixMap<T>(vht.data<T>() + b * s.vrows * n, s.vrows, n).topRows(k);
    const Eigen::Array<T, Eigen::Dynamic, 1> sv =
        Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(st.data<T>() + b * k, k).array();
    Matrix<T> f(k, k);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        f(i, j) = i == j ? T(0) : T(1) / (sv(j) * sv(j) - sv(i) * sv(i));
    Matrix<T> g = Matrix<T>::Zero(m, n);
    if (ds_all) {
      const Eigen::Matrix<T, Eigen::Dynamic, 1> ds =
          Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(ds_all + b * k, k);
      g += u * ds.asDiagonal() * vh;
    }
    if (du_all) {
      const Matrix<T> du = ConstMatrixMap<T>(du_all + b * m * s.ucols, m, s.ucols).leftCols(k);
      Matrix<T> t = Matrix<T>((u.transpose() * du - du.transpose() * u).cwiseProduct(f)) *
                    sv.matrix().asDiagonal();
      Matrix<T> term = u * t;
      if (m > k)
        term += (Matrix<T>::Identity(m, m) - u * u.transpose()) * du *
                sv.inverse().matrix().asDiagonal();
      g += term * vh;
    }
    if (dvh_all) {
      const Matrix<T> dvh = ConstMatrixMap<T>(dvh_all + b * s.vrows * n, s.vrows, n).topRows(k);
      Matrix<T> term =
          sv.matrix().asDiagonal() *
          Matrix<T>((vh * dvh.transpose() - dvh * vh.transpose()).cwiseProduct(f) * vh);
      if (n > k)
        term += sv.inverse().matrix().asDiagonal() * dvh *
                (Matrix<T>::Identity(n, n) - vh.transpose() * vh);
      g += u * term;
    }
    MatrixMap<T>(dx + b * m * n, m, n) = g;
  }
}

void SvdInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("X");
  CheckMatrices(ctx.op_type(), "X", d);
  const SvdShape s = GetSvdShape(d, ctx.Attr<bool>("full_matrices"));
  const Dims batch = BatchDims(d);
  ctx.SetOutputDims("U", Concat(batch, {s.m, s.ucols}));
  ctx.SetOutputDims("S", Concat(batch, {s.k}));
  ctx.SetOutputDims("VH", Concat(batch, {s.vrows, s.n}));
  for (const char* o : {"U", "S", "VH"}) ctx.SetOutputDataType(o, ctx.InputDataType("X"));
}

void SvdGradInferShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X"}); }

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("svd")
                     .Comment("X = U diag(S) VH per matrix (paddle.linalg.svd), S descending.")
                     .Input("X", "matrices [..., M, N]")
                     .Output("U", "[..., M, K] (K = min(M, N)), or [..., M, M] with full_matrices")
                     .Output("S", "the singular values [..., K], descending")
                     .Output("VH", "[..., K, N], or [..., N, N] with full_matrices")
                     .Attr("full_matrices", false, "square U and VH")
                     .InferShape(SvdInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("svd_grad")
                           .Input("X", g.Input("X"))
                           .Input("U", g.Output("U"))
                           .Input("VH", g.Output("VH"))
                           .Input("S", g.Output("S"))
                           .Input(GradVarName("U"), g.OutputGrad("U"))
                           .Input(GradVarName("VH"), g.OutputGrad("VH"))
                           .Input(GradVarName("S"), g.OutputGrad("S"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("svd_grad")
                     .Input("X")
                     .Input("U")
                     .Input("VH")
                     .Input("S")
                     .Input(GradVarName("U"))
                     .AsDispensable()
                     .Input(GradVarName("VH"))
                     .AsDispensable()
                     .Input(GradVarName("S"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .Attr("full_matrices", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(SvdGradInferShape));
TIDE_REGISTER_KERNEL("svd", "cpu", SvdKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("svd_grad", "cpu", SvdGradKernel, OPS_LINALG_FLOAT_TYPES);
