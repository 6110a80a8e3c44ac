// tide/kernels/mul.hpp: the plain CPU kernel of mul (Fluid's product of X and Y flattened to 2-D
// at x_num_col_dims / y_num_col_dims, the fc layer's core) on tide/gemm.hpp, header-only: ops_math
// registers it, and a compiled model (tide.aot.compile) calls it directly
// (tide/kernels/registry.hpp). The GEMM is oneDNN's sgemm for float32 when TIDE_GEMM_WITH_DNNL is
// defined (as ops_math builds it where oneDNN is found), Eigen's otherwise: a compiled model
// builds it the pack's way (tide/kernels/registry.hpp, kNeedsGemm).
#ifndef TIDE_KERNELS_MUL_HPP_
#define TIDE_KERNELS_MUL_HPP_

#include <tide/gemm.hpp>
#include <tide/ops/matmul.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Out = X * Y on the flattened matrices.
template <typename T>
void Mul(KernelContext& ctx) {
  const auto a = ops::GetMulArgs<T>(ctx);
  Gemm<T>(ctx, false, false, a.m, a.n, a.k, T(1), a.x, a.y, T(0), a.out);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_MUL_HPP_
