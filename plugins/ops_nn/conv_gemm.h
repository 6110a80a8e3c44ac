// conv_gemm.h: the plain convolution's arithmetic on NCHW data, im2col + GEMM over the batch cut
// conv_im2col.h plans: the forward (Output from Input and Filter) and the backward (Input@GRAD
// by col2im, Filter@GRAD). conv2d runs them as they are; conv2d_transpose runs the forward as a
// conv's backward and the reverse (conv_transpose_op.cc).
#pragma once

#include <tide/ops/conv.hpp>

#include "conv_im2col.h"
#include "gemm.h"

namespace ops_nn {

// A 1x1 filter with unit stride and dilation and no padding reads the image as its own columns.
inline bool IsPointwise(const tide::ops::ConvGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
         g.ph_end == 0 && g.pw_end == 0 && g.dh == 1 && g.dw == 1;
}

// No epilogue (ConvForwardNchw's `done`).
struct NoConvEpilogue {
  void operator()(int64_t, int64_t) const {}
};

// od [n, m, oh, ow] = conv(xd [n, c, h, w], fd [m, c / groups, kh, kw]), added to what od holds
// when `accumulate` (a residual already in place); done(n0, n1) runs on images [n0, n1) of od as
// soon as they are computed, on the thread that computed them (an epilogue while they are in
// cache, in parallel as the chunks are).
template <typename T, typename Done = NoConvEpilogue>
void ConvForwardNchw(const KernelContext& ctx, const tide::ops::ConvGeom& g, const T* xd,
                     const T* fd, T* od, bool accumulate = false, Done&& done = Done()) {
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);  // the image is its own column matrix
  const ConvBatchPlan plan = PlanConvBatch(ctx, g, pointwise);
  T* scratch = plan.chunk_elems()
                   ? ctx.TempBuffer<T>(static_cast<size_t>(plan.chunks * plan.chunk_elems()))
                   : nullptr;
  ForEachChunk(ctx, g.n, plan.chunks, [&](int64_t chunk, int64_t n0, int64_t n1) {
    T* col = scratch ? scratch + chunk * plan.chunk_elems() : nullptr;
    T* out_rows = col ? col + plan.col_elems : nullptr;  // [M, nb * ohw] when nb > 1
    for (int64_t n = n0; n < n1; n += plan.per_gemm) {
      const int64_t nb = std::min(plan.per_gemm, n1 - n), cols_n = nb * ohw;
      const T* cols = xd + n * chw;
      if (!pointwise) {
        Im2ColImages(g, cols, nb, col);
        cols = col;
      }
      T* o = nb == 1 ? od + n * g.m * ohw : out_rows;
      if (accumulate && nb > 1) ImagesToRows(od + n * g.m * ohw, nb, g.m, ohw, o);
      for (int64_t gi = 0; gi < g.groups; ++gi)
        Gemm<T>(ctx, false, false, mg, cols_n, k, T(1), fd + gi * mg * k, cols + gi * k * cols_n,
                accumulate ? T(1) : T(0), o + gi * mg * cols_n);
      if (nb > 1) RowsToImages(o, nb, g.m, ohw, od + n * g.m * ohw);
      done(n, n + nb);
    }
  });
}

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
