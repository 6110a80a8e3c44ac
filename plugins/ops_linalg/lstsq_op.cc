// lstsq_op.cc: Paddle's lstsq (paddle.linalg.lstsq: per matrix pair, the least-squares solution
// of X [..., M, N] Solution = Y [..., M, K], the minimum-norm one when X is wide or
// rank-deficient), with the outputs Paddle's CPU kernel gives for each LAPACK driver:
//  - gels: Householder QR (X full rank; a wide X through the QR of X^T), no Rank (int64 [0])
//    nor SingularValues ([0]);
//  - gelsy: a complete orthogonal decomposition with column pivoting, rank = the leading
//    |R_ii| above rcond * |R_00|; Rank int32 [...];
//  - gelsd, gelss: the SVD, rank = the singular values above rcond * sigma_max; Rank int32
//    [...], SingularValues [..., min(M, N)].
// rcond < 0 means machine epsilon (as LAPACK). Residuals [..., K] = the squared residual norms
// when M > N, the driver is not gelsy and every matrix has rank N; else empty [0]. No grad (as
// Paddle's).
#include <limits>
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

enum class Driver { kGels, kGelsy, kGelsd, kGelss };

Driver ParseDriver(const char* op, const std::string& d) {
  if (d == "gels") return Driver::kGels;
  if (d == "gelsy") return Driver::kGelsy;
  if (d == "gelsd") return Driver::kGelsd;
  if (d == "gelss") return Driver::kGelss;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op,
             "': driver must be 'gels', 'gelsy', 'gelsd' or 'gelss' on the CPU, but it is '", d,
             "'");
}

struct LstsqDims {
  Dims solution, residuals, rank, singular_values;
};

LstsqDims GetLstsqDims(const char* op, const Dims& x, const Dims& y, Driver driver) {
  CheckMatrices(op, "X", x);
  CheckMatrices(op, "Y", y);
  TIDE_CHECK(x.size() == y.size(), "op '", op, "': X ", tide::ToString(x), " and Y ",
             tide::ToString(y), " must have the same rank");
  for (size_t i = 0; i + 2 < x.size(); ++i)
    TIDE_CHECK(!Known(x[i]) || !Known(y[i]) || x[i] == y[i], "op '", op, "': X ", tide::ToString(x),
               " and Y ", tide::ToString(y), " must have the same batch dims (dim ", i, ": ", x[i],
               " vs ", y[i], ")");
  const int64_t m = x[x.size() - 2], n = x.back(), k = y.back();
  TIDE_CHECK(!Known(m) || !Known(y[y.size() - 2]) || m == y[y.size() - 2], "op '", op, "': Y ",
             tide::ToString(y), " must have as many rows as X ", tide::ToString(x), " (", m, ")");
  const Dims batch = BatchDims(x);
  LstsqDims d;
  d.solution = Concat(batch, {n, k});
  d.residuals =
      Known(m) && Known(n) && m > n && driver != Driver::kGelsy ? Concat(batch, {k}) : Dims{0};
  d.rank = driver == Driver::kGels ? Dims{0} : batch;
  d.singular_values = driver == Driver::kGelsd || driver == Driver::kGelss
                          ? Concat(batch, {Known(m) && Known(n) ? std::min(m, n) : -1})
                          : Dims{0};
  return d;
}

void LstsqInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Driver driver = ParseDriver(op, ctx.Attr<std::string>("driver"));
  const LstsqDims d = GetLstsqDims(op, ctx.InputDims("X"), ctx.InputDims("Y"), driver);
  const TideDataType t = ctx.InputDataType("X");
  TIDE_CHECK(ctx.InputDataType("Y") == t, "op '", op, "': X and Y must have one data type");
  ctx.SetOutputDims("Solution", d.solution);
  ctx.SetOutputDataType("Solution", t);
  if (ctx.HasOutput("Residuals")) {
    ctx.SetOutputDims("Residuals", d.residuals);
    ctx.SetOutputDataType("Residuals", t);
  }
  if (ctx.HasOutput("Rank")) {
    ctx.SetOutputDims("Rank", d.rank);
    ctx.SetOutputDataType("Rank", driver == Driver::kGels ? TIDE_INT64 : TIDE_INT32);
  }
  if (ctx.HasOutput("SingularValues")) {
    ctx.SetOutputDims("SingularValues", d.singular_values);
    ctx.SetOutputDataType("SingularValues", t);
  }
}

// One matrix pair: the solution [N, K], its rank, and the singular values (SVD drivers).
template <typename T>
int64_t SolveOne(Driver driver, T rcond, const ConstMatrixMap<T>& a, const ConstMatrixMap<T>& b,
                 MatrixMap<T> x, T* sv) {
  const int64_t m = a.rows(), n = a.cols();
  if (driver == Driver::kGels) {
    if (m >= n) {
      x = Eigen::HouseholderQR<Matrix<T>>(a).solve(b);
    } else {  // minimum norm: X^T = Q R, solution Q R^-T B
      Eigen::HouseholderQR<Matrix<T>> qr(a.transpose());
      const Matrix<T> z = qr.matrixQR()
                              .topLeftCorner(m, m)
                              .template triangularView<Eigen::Upper>()
                              .transpose()
                              .solve(b);
      x = qr.householderQ() *
          (Matrix<T>(n, b.cols()) << z, Matrix<T>::Zero(n - m, b.cols())).finished();
    }
    return std::min(m, n);
  }
  if (driver == Driver::kGelsy) {
    Eigen::CompleteOrthogonalDecomposition<Matrix<T>> cod(a);
    cod.setThreshold(rcond);
    x = cod.solve(b);
    return cod.rank();
  }
  Eigen::BDCSVD<Matrix<T>> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const auto s = svd.singularValues();
  const T cut = s.size() > 0 ? rcond * s(0) : T(0);
  int64_t rank = 0;
  while (rank < s.size() && s(rank) > cut) ++rank;
  const Matrix<T> utb = svd.matrixU().leftCols(rank).transpose() * b;
  x = svd.matrixV().leftCols(rank) * (s.head(rank).cwiseInverse().asDiagonal() * utb);
  std::copy(s.data(), s.data() + s.size(), sv);
  return rank;
}

template <typename T>
void LstsqKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const Driver driver = ParseDriver(op, ctx.Attr<std::string>("driver"));
  Tensor xt = ctx.Input("X"), yt = ctx.Input("Y");
  const Dims xd = xt.dims(), yd = yt.dims();
  LstsqDims d = GetLstsqDims(op, xd, yd, driver);
  const int64_t m = xd[xd.size() - 2], n = xd.back(), k = yd.back(), s = std::min(m, n);
  const int64_t nb = DimsProduct(BatchDims(xd));
  T rcond = static_cast<T>(ctx.Attr<float>("rcond"));
  if (rcond < T(0)) rcond = std::numeric_limits<T>::epsilon();
  T* sol = ctx.Output("Solution").mutable_data<T>(d.solution, ctx.place());
  std::vector<int64_t> ranks(nb, 0);
  std::vector<T> svals(std::max<int64_t>(nb * s, 1));
  bool full_rank = true;
  for (int64_t b = 0; b < nb; ++b) {
    MatrixMap<T> x(sol + b * n * k, n, k);
    if (m == 0 || n == 0 || k == 0) {
      x.setZero();
      continue;
    }
    ranks[b] =
        SolveOne<T>(driver, rcond, ConstMatrixMap<T>(xt.data<T>() + b * m * n, m, n),
                    ConstMatrixMap<T>(yt.data<T>() + b * m * k, m, k), x, svals.data() + b * s);
    full_rank = full_rank && ranks[b] == n;
  }
  if (!full_rank) d.residuals = Dims{0};
  if (ctx.HasOutput("Residuals")) {
    T* res = ctx.Output("Residuals").mutable_data<T>(d.residuals, ctx.place());
    if (DimsProduct(d.residuals) > 0)
      for (int64_t b = 0; b < nb; ++b) {
        const Matrix<T> r = ConstMatrixMap<T>(xt.data<T>() + b * m * n, m, n) *
                                ConstMatrixMap<T>(sol + b * n * k, n, k) -
                            ConstMatrixMap<T>(yt.data<T>() + b * m * k, m, k);
        Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(res + b * k, k) = r.colwise().squaredNorm();
      }
  }
  if (ctx.HasOutput("Rank")) {
    if (driver == Driver::kGels) {
      ctx.Output("Rank").mutable_data<int64_t>(d.rank, ctx.place());
    } else {
      int32_t* r = ctx.Output("Rank").mutable_data<int32_t>(d.rank, ctx.place());
      for (int64_t b = 0; b < nb; ++b) r[b] = static_cast<int32_t>(ranks[b]);
    }
  }
  if (ctx.HasOutput("SingularValues")) {
    T* sv = ctx.Output("SingularValues").mutable_data<T>(d.singular_values, ctx.place());
    std::copy(svals.begin(), svals.begin() + DimsProduct(d.singular_values), sv);
  }
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("lstsq")
                     .Comment("Solution = the least-squares (minimum-norm) solution of X "
                              "Solution = Y per matrix pair (paddle.linalg.lstsq).")
                     .Input("X", "matrices [..., M, N]")
                     .Input("Y", "right-hand sides [..., M, K], X's batch dims")
                     .Output("Solution", "[..., N, K]")
                     .Output("Residuals",
                             "[..., K] squared residual norms (M > N, full rank, not gelsy), "
                             "else [0]")
                     .AsDispensable()
                     .Output("Rank", "int32 [...] (int64 [0] with gels)")
                     .AsDispensable()
                     .Output("SingularValues", "[..., min(M, N)] with gelsd / gelss, else [0]")
                     .AsDispensable()
                     .Attr("rcond", 0.0f,
                           "singular values (gelsy: |R_ii|) below rcond times the largest count "
                           "as zero; < 0: machine epsilon")
                     .Attr("driver", std::string("gelsy"), "'gels', 'gelsy', 'gelsd' or 'gelss'")
                     .KernelDataTypeFrom("X")
                     .InferShape(LstsqInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("lstsq", "cpu", LstsqKernel, OPS_LINALG_FLOAT_TYPES);
