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
#include <type_traits>

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
  if constexpr (std::is_same_v<T, float>) {
    // Small products of a few rows (attention at decode: a head's query against its keys): one
    // thread per range of matrices, each product on its thread (tide/gemm.hpp's SkinnyGemm).
    if (!s.tx && s.m <= skinny::kMaxRows && s.batch > 1 && s.m * s.n * s.k < kSkinnyPoolMacs) {
      ParallelFor(ctx, s.batch, 2 * os * s.k, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b)
          SkinnyGemmColumns(s.ty, s.m, 0, s.n, s.k, 1.0f, a.x + s.x_off[b] * xs, s.k,
                            a.y + s.y_off[b] * ys, s.ty ? s.k : s.n, 0.0f, a.out + b * os, s.n);
      });
      return;
    }
  }
  for (int64_t b = 0; b < s.batch; ++b)
    Gemm<T>(ctx, s.tx, s.ty, s.m, s.n, s.k, T(1), a.x + s.x_off[b] * xs, a.y + s.y_off[b] * ys,
            T(0), a.out + b * os);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_MATMUL_V2_HPP_
