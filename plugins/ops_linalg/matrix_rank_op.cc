// matrix_rank_op.cc: Paddle's matrix_rank (paddle.linalg.matrix_rank): per matrix of X
// [..., M, N], the number of singular values (with hermitian, of |eigenvalues| of the lower
// triangle, X [..., M, M]) above a tolerance, int64. Two ops, as Paddle's:
//  - matrix_rank (tol / TolTensor): tol = max(atol, rtol * sigma_max), atol the attribute `tol`
//    or the TolTensor input (broadcast against X's batch dims), rtol = eps * max(M, N) with
//    use_default_tol, else 0;
//  - matrix_rank_atol_rtol (Paddle 3's atol / rtol tensors): tol = max(atol, rtol * sigma_max),
//    without rtol: eps * max(M, N) where atol is 0, else 0.
// Out's dims: X's batch dims broadcast with the tolerance tensors' dims.
#include <limits>
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

// numpy-style broadcast of `a` and `b` (an unknown dim passes).
Dims Broadcast2(const char* op, const char* what, const Dims& a, const Dims& b) {
  Dims out;
  tide::ops::DimsClash c;
  TIDE_CHECK(tide::ops::BroadcastDims(a, b, &out, &c), "op '", op, "': ", what, " ",
             tide::ToString(b), " does not broadcast with X's batch dims ", tide::ToString(a), " (",
             c.a, " vs ", c.b, ")");
  return out;
}

// The element of a tensor of dims `d` that out's element `e` (dims `out`) reads, broadcasting.
int64_t BroadcastIndex(const Dims& out, const Dims& d, int64_t e) {
  int64_t idx = 0, stride = 1;
  for (size_t i = out.size(); i-- > 0;) {
    const int64_t c = e % out[i];
    e /= out[i];
    const size_t k = i + d.size();
    if (k < out.size()) continue;
    const int64_t dd = d[k - out.size()];
    if (dd != 1) idx += c * stride;
    stride *= dd;
  }
  return idx;
}

bool IsAtolRtol(const char* op) { return std::string(op) == "matrix_rank_atol_rtol"; }

// Out's dims for either op (compile or run time), checking X and the tolerance inputs.
template <typename Ctx, typename DimsOf>
Dims RankOutDims(const Ctx& ctx, const Dims& x, DimsOf dims_of) {
  const char* op = ctx.op_type();
  CheckMatrices(op, "X", x);
  if (ctx.template Attr<bool>("hermitian")) CheckSquare(op, "X", x);
  Dims out = BatchDims(x);
  for (const char* in : {"TolTensor", "atol", "rtol"})
    if (ctx.HasInput(in)) out = Broadcast2(op, in, out, dims_of(in));
  return out;
}

void MatrixRankInferShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(!IsAtolRtol(ctx.op_type()) || ctx.HasInput("atol"), "op '", ctx.op_type(),
             "': input atol is required");
  const Dims out =
      RankOutDims(ctx, ctx.InputDims("X"), [&](const char* in) { return ctx.InputDims(in); });
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", TIDE_INT64);
}

// Singular values (or |eigenvalues|) of one matrix, any order.
template <typename T>
Eigen::Matrix<T, Eigen::Dynamic, 1> Spectrum(const ConstMatrixMap<T>& a, bool hermitian) {
  if (hermitian) {
    Matrix<T> low = a.template triangularView<Eigen::Lower>();
    low.template triangularView<Eigen::StrictlyUpper>() = low.transpose();
    return Eigen::SelfAdjointEigenSolver<Matrix<T>>(low, Eigen::EigenvaluesOnly)
        .eigenvalues()
        .cwiseAbs();
  }
  return Eigen::BDCSVD<Matrix<T>>(a).singularValues();
}

template <typename T>
void MatrixRankKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  const Dims d = x.dims();
  const Dims out_dims = RankOutDims(ctx, d, [&](const char* in) { return ctx.Input(in).dims(); });
  const Dims batch = BatchDims(d);
  const int64_t m = d[d.size() - 2], n = d.back();
  const bool hermitian = ctx.Attr<bool>("hermitian");
  const T eps_rtol = std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(m, n));
  int64_t* o = ctx.Output("Out").mutable_data<int64_t>(out_dims, ctx.place());
  const int64_t nb = DimsProduct(batch), total = DimsProduct(out_dims);
  // sigma per X matrix, computed once.
  std::vector<Eigen::Matrix<T, Eigen::Dynamic, 1>> spectra(nb);
  std::vector<T> smax(nb, T(0));
  for (int64_t b = 0; b < nb; ++b) {
    spectra[b] = Spectrum<T>(ConstMatrixMap<T>(x.data<T>() + b * m * n, m, n), hermitian);
    if (spectra[b].size() > 0) smax[b] = spectra[b].maxCoeff();
  }
  // Each output element's atol and rtol.
  auto input_at = [&](const char* in, int64_t e, T fallback) -> T {
    if (!ctx.HasInput(in)) return fallback;
    Tensor t = ctx.Input(in);
    return t.data<T>()[BroadcastIndex(out_dims, t.dims(), e)];
  };
  const bool atol_rtol = IsAtolRtol(op);
  for (int64_t e = 0; e < total; ++e) {
    const int64_t b = BroadcastIndex(out_dims, batch, e);
    T atol, rtol;
    if (atol_rtol) {
      atol = input_at("atol", e, T(0));
      rtol = input_at("rtol", e, atol == T(0) ? eps_rtol : T(0));
    } else {
      atol = input_at("TolTensor", e, static_cast<T>(ctx.Attr<float>("tol")));
      if (!ctx.HasInput("TolTensor") && ctx.Attr<bool>("use_default_tol")) atol = T(0);
      rtol = ctx.Attr<bool>("use_default_tol") ? eps_rtol : T(0);
    }
    const T tol = std::max(atol, rtol * smax[b]);
    o[e] = (spectra[b].array() > tol).count();
  }
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("matrix_rank")
                     .Comment("Out = the rank of each matrix of X (paddle.linalg.matrix_rank): "
                              "its singular values above max(tol, eps * max(M, N) * sigma_max "
                              "with use_default_tol).")
                     .Input("X", "matrices [..., M, N]")
                     .Input("TolTensor", "the tolerance, broadcast with X's batch dims")
                     .AsDispensable()
                     .Output("Out", "int64: X's batch dims (broadcast with TolTensor's)")
                     .Attr("tol", 0.0f, "the tolerance without TolTensor")
                     .Attr("use_default_tol", true,
                           "add the relative tolerance eps * max(M, N) * sigma_max (tol then 0)")
                     .Attr("hermitian", false,
                           "X symmetric: |eigenvalues| of its lower triangle instead")
                     .KernelDataTypeFrom("X")
                     .InferShape(MatrixRankInferShape)
                     .NoGradient());
TIDE_REGISTER_OP(tide::OpSchema("matrix_rank_atol_rtol")
                     .Comment("Out = the rank of each matrix of X with tolerance max(atol, rtol * "
                              "sigma_max) (paddle.linalg.matrix_rank with atol / rtol).")
                     .Input("X", "matrices [..., M, N]")
                     .Input("atol", "the absolute tolerance, broadcast with X's batch dims")
                     .Input("rtol",
                            "the relative tolerance (absent: eps * max(M, N) where atol "
                            "is 0, else 0)")
                     .AsDispensable()
                     .Output("Out", "int64: X's batch dims broadcast with atol's and rtol's")
                     .Attr("hermitian", false,
                           "X symmetric: |eigenvalues| of its lower triangle instead")
                     .KernelDataTypeFrom("X")
                     .InferShape(MatrixRankInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("matrix_rank", "cpu", MatrixRankKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("matrix_rank_atol_rtol", "cpu", MatrixRankKernel, OPS_LINALG_FLOAT_TYPES);
