// tide/kernels/conv_gemm.hpp: the plain convolution's forward on NCHW data, im2col + GEMM over
// the batch cut tide/kernels/conv_im2col.hpp plans (Output from Input and Filter): the
// header-only conv kernel (tide/kernels/conv.hpp) runs it where the direct kernel does not, and
// the op packs' conv2d_transpose runs it as its backward.
#ifndef TIDE_KERNELS_CONV_GEMM_HPP_
#define TIDE_KERNELS_CONV_GEMM_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/gemm.hpp>
#include <tide/kernels/conv_im2col.hpp>
#include <tide/ops/conv.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// A 1x1 filter with unit stride and dilation and no padding reads the image as its own columns.
inline bool IsPointwise(const ops::ConvGeom& g) {
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
void ConvForwardNchw(const KernelContext& ctx, const ops::ConvGeom& g, const T* xd, const T* fd,
                     T* od, bool accumulate = false, Done&& done = Done()) {
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

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_GEMM_HPP_
