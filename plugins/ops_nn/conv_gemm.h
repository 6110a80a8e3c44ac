// conv_gemm.h: the plain convolution's backward on NCHW data, im2col + GEMM over the batch cut
// conv_im2col.h plans (Input@GRAD by col2im, Filter@GRAD), beside the SDK's forward
// (tide/kernels/conv_gemm.hpp), under this pack's namespace. conv2d_grad runs them as they are;
// conv2d_transpose runs the forward as a conv's backward and the reverse (conv_transpose_op.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/kernels/conv_gemm.hpp>
#include <tide/ops/conv.hpp>

#include "conv_im2col.h"
#include "gemm.h"

namespace ops_nn {

using tide::kernels::ConvForwardNchw;
using tide::kernels::IsPointwise;

// dxd [n, c, h, w] = Input@GRAD and dfd = Filter@GRAD (either may be null: not computed) of the
// conv of xd by fd, from gd [n, m, oh, ow] = Output@GRAD.
template <typename T>
void ConvBackwardNchw(const KernelContext& ctx, const tide::ops::ConvGeom& g, const T* xd,
                      const T* fd, const T* gd, T* dxd, T* dfd) {
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);
  const bool dx = dxd != nullptr, df = dfd != nullptr;
  const int64_t f_numel = g.m * k;
  const ConvBatchPlan plan = PlanConvBatch(ctx, g, pointwise);
  // After the chunks' scratch, each chunk but the first sums its own Filter@GRAD, added up at
  // the end.
  const int64_t chunks_elems = plan.chunks * plan.chunk_elems();
  const int64_t partials = df ? (plan.chunks - 1) * f_numel : 0;
  T* scratch = chunks_elems + partials
                   ? ctx.TempBuffer<T>(static_cast<size_t>(chunks_elems + partials))
                   : nullptr;
  ForEachChunk(ctx, g.n, plan.chunks, [&](int64_t chunk, int64_t n0, int64_t n1) {
    T* col = scratch ? scratch + chunk * plan.chunk_elems() : nullptr;
    T* dout_rows = col ? col + plan.col_elems : nullptr;  // [M, nb * ohw] when nb > 1
    T* dfc = !df || chunk == 0 ? dfd : scratch + chunks_elems + (chunk - 1) * f_numel;
    if (df) std::fill(dfc, dfc + f_numel, T(0));
    if (dx && !pointwise) std::fill(dxd + n0 * chw, dxd + n1 * chw, T(0));  // col2im adds
    for (int64_t n = n0; n < n1; n += plan.per_gemm) {
      const int64_t nb = std::min(plan.per_gemm, n1 - n), cols_n = nb * ohw;
      const T* gb = gd + n * g.m * ohw;
      if (nb > 1) {
        ImagesToRows(gb, nb, g.m, ohw, dout_rows);
        gb = dout_rows;
      }
      if (df) {  // dF_g += dOut_g [mg, cols_n] * col_g^T [cols_n, k]
        const T* cols = xd + n * chw;
        if (!pointwise) {
          Im2ColImages(g, cols, nb, col);
          cols = col;
        }
        for (int64_t gi = 0; gi < g.groups; ++gi)
          Gemm<T>(ctx, false, true, mg, k, cols_n, T(1), gb + gi * mg * cols_n,
                  cols + gi * k * cols_n, T(1), dfc + gi * mg * k);
      }
      if (dx) {  // dcol_g = F_g^T [k, mg] * dOut_g [mg, cols_n], then col2im
        T* dcol = pointwise ? dxd + n * chw : col;
        for (int64_t gi = 0; gi < g.groups; ++gi)
          Gemm<T>(ctx, true, false, k, cols_n, mg, T(1), fd + gi * mg * k, gb + gi * mg * cols_n,
                  T(0), dcol + gi * k * cols_n);
        if (!pointwise) Col2ImImages(g, col, nb, dxd + n * chw);
      }
    }
  });
  for (int64_t c = 1; df && c < plan.chunks; ++c) {
    const T* part = scratch + chunks_elems + (c - 1) * f_numel;
    for (int64_t i = 0; i < f_numel; ++i) dfd[i] += part[i];
  }
}

}  // namespace ops_nn
