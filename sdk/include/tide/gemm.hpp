// tide/gemm.hpp: C = alpha * op(A) * op(B) + beta * C on row-major matrices for op packs' CPU
// kernels. float32 goes to oneDNN's sgemm when the pack defines TIDE_GEMM_WITH_DNNL and links
// oneDNN (a BLAS with run-time ISA dispatch, as Fluid's CPU kernels call MKL/OpenBLAS); otherwise,
// and for float64, Eigen: a plain matrix product for small problems, a tensor contraction on the
// CPU pool (tide/eigen.hpp) for large ones.
#ifndef TIDE_GEMM_HPP_
#define TIDE_GEMM_HPP_

#include <tide/eigen.hpp>
#include <tide/plugin.hpp>

#include <Eigen/Core>
#include <type_traits>

#ifdef TIDE_GEMM_WITH_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace tide {


template <typename T>
void EigenGemm(const KernelContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
               T alpha, const T* a, const T* b, T beta, T* c) {
  using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const RowMat>;
  Eigen::Map<RowMat> cm(c, m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0)) cm.setZero(); else cm *= beta;
    return;
  }
  if (m * n * k < (int64_t(1) << 18)) {  // small: one thread, no hand-off
    ConstMap am(a, trans_a ? k : m, trans_a ? m : k), bm(b, trans_b ? n : k, trans_b ? k : n);
    auto prod = [&](const auto& x, const auto& y) {
      if (beta == T(0)) cm.noalias() = alpha * x * y;
      else cm = beta * cm + alpha * x * y;
    };
    if (!trans_a && !trans_b) prod(am, bm);
    else if (trans_a && !trans_b) prod(am.transpose(), bm);
    else if (!trans_a && trans_b) prod(am, bm.transpose());
    else prod(am.transpose(), bm.transpose());
    return;
  }
  using CT = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
  using MT = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
  CT at(a, trans_a ? k : m, trans_a ? m : k), bt(b, trans_b ? n : k, trans_b ? k : n);
  MT ct(c, m, n);
  Eigen::array<Eigen::IndexPair<int>, 1> dims = {Eigen::IndexPair<int>(trans_a ? 0 : 1, trans_b ? 1 : 0)};
  const auto& dev = EigenDevice(ctx);
  if (alpha == T(1) && beta == T(0)) ct.device(dev) = at.contract(bt, dims);
  else if (beta == T(0)) ct.device(dev) = at.contract(bt, dims) * alpha;
  else ct.device(dev) = at.contract(bt, dims) * alpha + ct * beta;
}

template <typename T>
void Gemm(const KernelContext& ctx, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
          T alpha, const T* a, const T* b, T beta, T* c) {
#ifdef TIDE_GEMM_WITH_DNNL
  if constexpr (std::is_same_v<T, float>) {
    if (m > 0 && n > 0 && k > 0) {
      dnnl_status_t st = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a,
                                    trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
      TIDE_CHECK(st == dnnl_success, "op '", ctx.op_type(), "': oneDNN sgemm failed (status ", int(st),
                 ") for [", m, " x ", k, "] * [", k, " x ", n, "]");
      return;
    }
  }
#endif
  EigenGemm<T>(ctx, trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

}  // namespace tide

#endif  // TIDE_GEMM_HPP_
