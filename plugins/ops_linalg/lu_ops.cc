// lu_ops.cc: Paddle's lu (paddle.linalg.lu: X [..., M, N] = P L U per matrix, K = min(M, N);
// LAPACK getrf's partial pivoting, the largest |pivot| of the column, first of equals; Out the
// packed factors (L's unit diagonal implied), Pivots int32 [..., K] 1-based row swaps, Infos
// int32 [...] the 1-based index of the first zero pivot, 0 when none) and lu_unpack (Pmat
// [..., M, M] from the pivots, L [..., M, K], U [..., K, N]; unpack_ludata / unpack_pivots
// leave the outputs they switch off empty, [0]), with their grads as Paddle's
// (paddle/phi/kernels/impl/lu_grad_kernel_impl.h, lu_unpack_grad_kernel_impl.h). As Paddle's
// CPU kernel, lu refuses pivot = false.
#include <cmath>
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

struct MNK {
  int64_t m, n, k, batch;
};

MNK GetMNK(const Dims& d) {
  const int64_t m = d[d.size() - 2], n = d.back();
  return {m, n, std::min(m, n), DimsProduct(BatchDims(d))};
}

// getf2 in place on a row-major M x N matrix: pivots (1-based) and info.
template <typename T>
int32_t GetrfInPlace(MatrixMap<T> a, int32_t* piv) {
  const int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  int32_t info = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    T best = std::abs(a(j, j));
    for (int64_t i = j + 1; i < m; ++i)
      if (std::abs(a(i, j)) > best) {
        best = std::abs(a(i, j));
        p = i;
      }
    piv[j] = static_cast<int32_t>(p + 1);
    if (a(p, j) != T(0)) {
      if (p != j) a.row(p).swap(a.row(j));
      a.col(j).tail(m - j - 1) /= a(j, j);
    } else if (info == 0) {
      info = static_cast<int32_t>(j + 1);
    }
    if (j + 1 < n)
      a.bottomRightCorner(m - j - 1, n - j - 1).noalias() -=
          a.col(j).tail(m - j - 1) * a.row(j).tail(n - j - 1);
  }
  return info;
}

// The permutation P [M, M] of X = P L U from 1-based row swaps: rows 0..M-1 swapped in order,
// P[perm[i], i] = 1.
template <typename T>
Matrix<T> PivotMatrix(const int32_t* piv, int64_t m, int64_t k, const char* op) {
  std::vector<int64_t> perm(m);
  for (int64_t i = 0; i < m; ++i) perm[i] = i;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t p = piv[j] - 1;
    TIDE_CHECK(p >= j && p < m, "op '", op, "': Pivots[", j, "] must be in [", j + 1, ", ", m,
               "] (1-based rows), but it is ", piv[j]);
    std::swap(perm[j], perm[p]);
  }
  Matrix<T> pm = Matrix<T>::Zero(m, m);
  for (int64_t i = 0; i < m; ++i) pm(perm[i], i) = T(1);
  return pm;
}

// L [M, K] (unit lower) and U [K, N] (upper) from the packed factors.
template <typename T>
void Unpack(const ConstMatrixMap<T>& lu, Matrix<T>* l, Matrix<T>* u) {
  const int64_t m = lu.rows(), n = lu.cols(), k = std::min(m, n);
  *l = lu.leftCols(k).template triangularView<Eigen::StrictlyLower>();
  l->diagonal().setOnes();
  *u = lu.topRows(k).template triangularView<Eigen::Upper>();
}

void CheckPivot(const char* op, bool pivot) {
  TIDE_CHECK(pivot, "op '", op,
             "': lu without pivoting (pivot = false) is not implemented on the CPU (as "
             "Paddle's CPU kernel)");
}

// --- lu ---

void LuInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckPivot(op, ctx.Attr<bool>("pivot"));
  const Dims d = ctx.InputDims("X");
  CheckMatrices(op, "X", d);
  const int64_t m = d[d.size() - 2], n = d.back();
  const Dims batch = BatchDims(d);
  ctx.SetOutputDims("Out", d);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("Pivots", Concat(batch, {Known(m) && Known(n) ? std::min(m, n) : -1}));
  ctx.SetOutputDataType("Pivots", TIDE_INT32);
  if (ctx.HasOutput("Infos")) {
    ctx.SetOutputDims("Infos", batch);
    ctx.SetOutputDataType("Infos", TIDE_INT32);
  }
}

template <typename T>
void LuKernel(KernelContext& ctx) {
  CheckPivot(ctx.op_type(), ctx.Attr<bool>("pivot"));
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  CheckMatrices(ctx.op_type(), "X", d);
  const MNK s = GetMNK(d);
  const Dims batch = BatchDims(d);
  T* out = ctx.Output("Out").mutable_data<T>(d, ctx.place());
  std::copy(x.data<T>(), x.data<T>() + x.numel(), out);
  int32_t* piv = ctx.Output("Pivots").mutable_data<int32_t>(Concat(batch, {s.k}), ctx.place());
  int32_t* info = ctx.HasOutput("Infos")
                      ? ctx.Output("Infos").mutable_data<int32_t>(batch, ctx.place())
                      : nullptr;
  for (int64_t b = 0; b < s.batch; ++b) {
    const int32_t i = GetrfInPlace<T>(MatrixMap<T>(out + b * s.m * s.n, s.m, s.n), piv + b * s.k);
    if (info) info[b] = i;
  }
}

// Paddle's lu_grad for one matrix: dX from the packed factors, the pivots and dOut (the packed
// factors' gradient).
template <typename T>
Matrix<T> LuGradOne(const ConstMatrixMap<T>& lu, const int32_t* piv, const Matrix<T>& g,
                    const char* op) {
  const int64_t m = lu.rows(), n = lu.cols(), k = std::min(m, n);
  Matrix<T> l, u;
  Unpack<T>(lu, &l, &u);
  const Matrix<T> l1 = l.topRows(k), u1 = u.leftCols(k), g1 = g.topLeftCorner(k, k);
  Matrix<T> phi = Matrix<T>((l1.transpose() * g1).template triangularView<Eigen::StrictlyLower>()) +
                  Matrix<T>((g1 * u1.transpose()).template triangularView<Eigen::Upper>());
  Matrix<T> psi = Matrix<T>::Zero(m, n);
  const Matrix<T> p = PivotMatrix<T>(piv, m, k, op);
  if (m <= n) {
    if (k < n) {
      const Matrix<T> u2 = u.rightCols(n - k), g2 = g.topRightCorner(k, n - k);
      phi -= Matrix<T>((g2 * u2.transpose()).template triangularView<Eigen::StrictlyLower>());
      psi.rightCols(n - k) = g2;
    }
    // phi U1^-T, then L1^-T of all of psi, then P.
    psi.leftCols(k) = u1.template triangularView<Eigen::Upper>().solve(phi.transpose()).transpose();
    const Matrix<T> tmp = l1.transpose().template triangularView<Eigen::UnitUpper>().solve(psi);
    return p * tmp;
  }
  const Matrix<T> l2 = l.bottomRows(m - k), g2 = g.bottomLeftCorner(m - k, k);
  phi -= Matrix<T>((l2.transpose() * g2).template triangularView<Eigen::Upper>());
  psi.bottomRows(m - k) = g2;
  psi.topRows(k) = l1.transpose().template triangularView<Eigen::UnitUpper>().solve(phi);
  const Matrix<T> tmp = p * psi;  // then tmp U1^-T
  return u1.template triangularView<Eigen::Upper>().solve(tmp.transpose()).transpose();
}

template <typename T>
void LuGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), lu = ctx.Input("Out"), piv = ctx.Input("Pivots");
  const Dims d = x.dims();
  const MNK s = GetMNK(d);
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t off = b * s.m * s.n;
    MatrixMap<T>(dx + off, s.m, s.n) =
        LuGradOne<T>(ConstMatrixMap<T>(lu.data<T>() + off, s.m, s.n), piv.data<int32_t>() + b * s.k,
                     ConstMatrixMap<T>(g + off, s.m, s.n), ctx.op_type());
  }
}

// --- lu_unpack ---

struct UnpackDims {
  Dims pmat, l, u;
};

template <typename Ctx>
UnpackDims GetUnpackDims(const Ctx& ctx, const Dims& x, const Dims& piv) {
  const char* op = ctx.op_type();
  CheckMatrices(op, "X", x);
  const int64_t m = x[x.size() - 2], n = x.back();
  const int64_t k = Known(m) && Known(n) ? std::min(m, n) : -1;
  const Dims batch = BatchDims(x);
  const Dims want = Concat(batch, {k});
  bool ok = piv.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i)
    ok = !Known(want[i]) || !Known(piv[i]) || want[i] == piv[i];
  TIDE_CHECK(ok, "op '", op, "': Pivots must have dims ", tide::ToString(want),
             " (X's batch dims and min(M, N)) for X ", tide::ToString(x), ", but its dims are ",
             tide::ToString(piv));
  UnpackDims u{Dims{0}, Dims{0}, Dims{0}};
  if (ctx.template Attr<bool>("unpack_ludata")) {
    u.l = Concat(batch, {m, k});
    u.u = Concat(batch, {k, n});
  }
  if (ctx.template Attr<bool>("unpack_pivots")) u.pmat = Concat(batch, {m, m});
  return u;
}

void LuUnpackInferShape(tide::InferShapeContext& ctx) {
  const UnpackDims u = GetUnpackDims(ctx, ctx.InputDims("X"), ctx.InputDims("Pivots"));
  const TideDataType t = ctx.InputDataType("X");
  ctx.SetOutputDims("Pmat", u.pmat);
  ctx.SetOutputDims("L", u.l);
  ctx.SetOutputDims("U", u.u);
  ctx.SetOutputDataType("Pmat", t);
  ctx.SetOutputDataType("L", t);
  ctx.SetOutputDataType("U", t);
}

template <typename T>
void LuUnpackKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), piv = ctx.Input("Pivots");
  const Dims d = x.dims();
  const UnpackDims ud = GetUnpackDims(ctx, d, piv.dims());
  const MNK s = GetMNK(d);
  T* pm = ctx.Output("Pmat").mutable_data<T>(ud.pmat, ctx.place());
  T* l = ctx.Output("L").mutable_data<T>(ud.l, ctx.place());
  T* u = ctx.Output("U").mutable_data<T>(ud.u, ctx.place());
  const bool lu = ctx.Attr<bool>("unpack_ludata"), pivots = ctx.Attr<bool>("unpack_pivots");
  for (int64_t b = 0; b < s.batch; ++b) {
    if (lu) {
      Matrix<T> lm, um;
      Unpack<T>(ConstMatrixMap<T>(x.data<T>() + b * s.m * s.n, s.m, s.n), &lm, &um);
      MatrixMap<T>(l + b * s.m * s.k, s.m, s.k) = lm;
      MatrixMap<T>(u + b * s.k * s.n, s.k, s.n) = um;
    }
    if (pivots)
      MatrixMap<T>(pm + b * s.m * s.m, s.m, s.m) =
          PivotMatrix<T>(piv.data<int32_t>() + b * s.k, s.m, s.k, ctx.op_type());
  }
}

// dX = tril(dL, -1) over X's [M, K] part plus triu(dU) over its [K, N] part.
template <typename T>
void LuUnpackGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  const MNK s = GetMNK(d);
  const T* dl = OptionalGrad<T>(ctx, "L");
  const T* du = OptionalGrad<T>(ctx, "U");
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(d, ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t b = 0; b < s.batch; ++b) {
    MatrixMap<T> g(dx + b * s.m * s.n, s.m, s.n);
    if (dl)
      g.leftCols(s.k) += Matrix<T>(ConstMatrixMap<T>(dl + b * s.m * s.k, s.m, s.k)
                                       .template triangularView<Eigen::StrictlyLower>());
    if (du)
      g.topRows(s.k) += Matrix<T>(
          ConstMatrixMap<T>(du + b * s.k * s.n, s.k, s.n).template triangularView<Eigen::Upper>());
  }
}

void LuUnpackGradInferShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X"}); }

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("lu")
                     .Comment("X = P L U per matrix (paddle.linalg.lu), partial pivoting as "
                              "LAPACK's getrf; Out the packed L (unit diagonal implied) and U.")
                     .Input("X", "matrices [..., M, N]")
                     .Output("Out", "[..., M, N]: U on and above the diagonal, L below")
                     .Output("Pivots", "int32 [..., min(M, N)]: 1-based row swaps")
                     .Output("Infos", "int32 [...]: first zero pivot (1-based), 0 when none")
                     .AsDispensable()
                     .Attr("pivot", true, "partial pivoting (false is refused on the CPU)")
                     .InferShape(LuInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lu_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input("Pivots", g.Output("Pivots"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lu_grad")
                     .Input("X")
                     .Input("Out")
                     .Input("Pivots")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("pivot", true)
                     .KernelDataTypeFrom("X")
                     .InferShape(LuUnpackGradInferShape));
TIDE_REGISTER_OP(tide::OpSchema("lu_unpack")
                     .Comment("P, L, U from lu's packed factors and pivots "
                              "(paddle.linalg.lu_unpack): X = P L U.")
                     .Input("X", "lu's Out [..., M, N]")
                     .Input("Pivots", "lu's Pivots, int32 [..., min(M, N)]")
                     .Output("Pmat", "[..., M, M] permutation ([0] without unpack_pivots)")
                     .Output("L", "[..., M, K] unit lower triangular ([0] without unpack_ludata)")
                     .Output("U", "[..., K, N] upper triangular ([0] without unpack_ludata)")
                     .Attr("unpack_ludata", true, "compute L and U")
                     .Attr("unpack_pivots", true, "compute Pmat")
                     .KernelDataTypeFrom("X")
                     .InferShape(LuUnpackInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("lu_unpack_grad")
                           .Input("X", g.Input("X"))
                           .Input("Pivots", g.Input("Pivots"))
                           .Input(GradVarName("L"), g.OutputGrad("L"))
                           .Input(GradVarName("U"), g.OutputGrad("U"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lu_unpack_grad")
                     .Input("X")
                     .Input("Pivots")
                     .Input(GradVarName("L"))
                     .AsDispensable()
                     .Input(GradVarName("U"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .Attr("unpack_ludata", true)
                     .Attr("unpack_pivots", true)
                     .KernelDataTypeFrom("X")
                     .InferShape(LuUnpackGradInferShape));
TIDE_REGISTER_KERNEL("lu", "cpu", LuKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lu_grad", "cpu", LuGradKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lu_unpack", "cpu", LuUnpackKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lu_unpack_grad", "cpu", LuUnpackGradKernel, OPS_LINALG_FLOAT_TYPES);
