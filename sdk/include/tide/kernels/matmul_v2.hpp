// tide/kernels/matmul_v2.hpp: the plain CPU kernel of matmul_v2 (Paddle 2.x's numpy matmul:
// trans_x / trans_y, batch dims broadcast, a 1-D operand a vector) on tide/gemm.hpp, one GEMM per
// batch matrix, header-only: ops_math registers it, and a compiled model (tide.aot.compile) calls
// it directly (tide/kernels/registry.hpp). Its float32 GEMM is built as mul's (kNeedsGemm).
#ifndef TIDE_KERNELS_MATMUL_V2_HPP_
#define TIDE_KERNELS_MATMUL_V2_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/gemm.hpp>
#include <tide/ops/matmul_v2.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Out_b = op(X_b) op(Y_b), X_b and Y_b the matrices batch b broadcasts from.
template <typename T>
void MatmulV2(KernelContext& ctx) {
  const auto a = ops::GetMatmulV2Args<T>(ctx);
  const ops::MatmulV2Shape& s = a.s;
  const int64_t xs = s.m * s.k, ys = s.k * s.n, os = s.m * s.n;
  if (s.k == 0) std::fill(a.out, a.out + s.batch * os, T(0));
  if (s.k == 0 || os == 0) return;
  for (int64_t b = 0; b < s.batch; ++b)
    Gemm<T>(ctx, s.tx, s.ty, s.m, s.n, s.k, T(1), a.x + s.x_off[b] * xs, a.y + s.y_off[b] * ys,
            T(0), a.out + b * os);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_MATMUL_V2_HPP_
