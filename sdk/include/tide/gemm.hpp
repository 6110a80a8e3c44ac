// tide/gemm.hpp: C = alpha * op(A) * op(B) + beta * C on row-major matrices for op packs' CPU
// kernels. float32 with at most 8 rows of A, untransposed, goes to tide/gemm_skinny.hpp's
// kernels (a decode step's tokens against a weight: bound by reading B once). Other float32
// goes to oneDNN's sgemm when the pack defines TIDE_GEMM_WITH_DNNL and links
// oneDNN (a BLAS with run-time ISA dispatch, as Fluid's CPU kernels call MKL/OpenBLAS); otherwise,
// and for float64, Eigen's matrix product, split by rows of C over the CPU pool (tide/eigen.hpp)
// when large. The overload with lda / ldb / ldc takes sub-matrices whose rows are that many
// elements apart (an attention head's columns inside a [tokens, heads * size] matrix).
#ifndef TIDE_GEMM_HPP_
#define TIDE_GEMM_HPP_

#include <Eigen/Core>
#include <tide/eigen.hpp>
#include <tide/gemm_skinny.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

#ifdef TIDE_GEMM_WITH_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace tide {

template <typename T>
void EigenGemm(const KernelContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n,
               int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
               int64_t ldc) {
  using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  using ConstMap = Eigen::Map<const RowMat, 0, Stride>;
  Eigen::Map<RowMat, 0, Stride> cm(c, m, n, Stride(ldc));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0))
      cm.setZero();
    else
      cm *= beta;
    return;
  }
  ConstMap am(a, trans_a ? k : m, trans_a ? m : k, Stride(lda));
  ConstMap bm(b, trans_b ? n : k, trans_b ? k : n, Stride(ldb));
  // Rows [r0, r1) of C from the same rows of op(A); on the CPU pool by row blocks when large.
  auto rows = [&](int64_t r0, int64_t r1) {
    auto c_rows = cm.middleRows(r0, r1 - r0);
    auto prod = [&](const auto& x, const auto& y) {
      if (beta == T(0))
        c_rows.noalias() = alpha * x.middleRows(r0, r1 - r0) * y;
      else
        c_rows = beta * c_rows + alpha * x.middleRows(r0, r1 - r0) * y;
    };
    if (!trans_a && !trans_b)
      prod(am, bm);
    else if (trans_a && !trans_b)
      prod(am.transpose(), bm);
    else if (!trans_a && trans_b)
      prod(am, bm.transpose());
    else
      prod(am.transpose(), bm.transpose());
  };
  if (m * n * k < (int64_t(1) << 18)) {  // small: one thread, no hand-off
    rows(0, m);
    return;
  }
  ParallelFor(ctx, m, 2 * n * k, rows);
}

// Below this many multiply-adds a skinny product runs on the calling thread: handing a few
// microseconds of work to the pool costs more than it saves (a decode step's attention, a GEMM
// per head, spent longer in hand-offs than in products). A batch of them is split over the pool
// by matrices instead (tide/kernels/matmul_v2.hpp).
constexpr int64_t kSkinnyPoolMacs = int64_t(1) << 18;

// tide/gemm_skinny.hpp's kernels over the CPU pool, each thread a range of C's columns.
inline void SkinnyGemm(const KernelContext& ctx, bool trans_b, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float beta, float* c, int64_t ldc) {
  if (m * n * k < kSkinnyPoolMacs)
    return SkinnyGemmColumns(trans_b, m, 0, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  constexpr int64_t kQ = skinny::kColumnQuantum;
  ParallelFor(ctx, (n + kQ - 1) / kQ, 2 * m * k * kQ, [&](int64_t q0, int64_t q1) {
    SkinnyGemmColumns(trans_b, m, q0 * kQ, std::min(n, q1 * kQ), k, alpha, a, lda, b, ldb, beta, c,
                      ldc);
  });
}

template <typename T>
void Gemm(const KernelContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          T alpha, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    if (!trans_a && m >= 1 && m <= skinny::kMaxRows && n > 0 && k > 0) {
      SkinnyGemm(ctx, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return;
    }
  }
#ifdef TIDE_GEMM_WITH_DNNL
  if constexpr (std::is_same_v<T, float>) {
    if (m > 0 && n > 0 && k > 0) {
      dnnl_status_t st = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a,
                                    lda, b, ldb, beta, c, ldc);
      TIDE_CHECK(st == dnnl_success, "op '", ctx.op_type(), "': oneDNN sgemm failed (status ",
                 int(st), ") for [", m, " x ", k, "] * [", k, " x ", n, "]");
      return;
    }
  }
#endif
  EigenGemm<T>(ctx, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Dense matrices: rows of op(A), op(B) and C follow each other.
template <typename T>
void Gemm(const KernelContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          T alpha, const T* a, const T* b, T beta, T* c) {
  Gemm<T>(ctx, trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b, trans_b ? k : n, beta, c,
          n);
}

}  // namespace tide

#endif  // TIDE_GEMM_HPP_
