// tide/kernels/conv_im2col.hpp: the plain convolution's im2col and how it cuts a batch into
// work (the forward of tide/kernels/conv.hpp; the op packs' backward adds col2im).
// A batch is cut into chunks of images, one per CPU thread when there are enough images (each
// chunk with its own scratch, its GEMMs single-threaded inside the pool's range); within a chunk,
// up to `per_gemm` images sit side by side in one column matrix [C*kh*kw, per_gemm * oh*ow], so
// small images (LeNet's 8x8) still give GEMMs a long dimension instead of one tiny GEMM per image
// (larger ones, a long dimension of their own, keep one image per GEMM).
#ifndef TIDE_KERNELS_CONV_IM2COL_HPP_
#define TIDE_KERNELS_CONV_IM2COL_HPP_

#include <tide/cpu_context.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tide/eigen.hpp>
#include <tide/ops/conv.hpp>
#include <tide/plugin.hpp>
#include <utility>

namespace tide {
namespace kernels {

// The outputs [*o0, *o1) of `out` along one axis (stride `s`) whose input i = o*s + d lies in
// [0, in); the rest read padding. At stride 1 without divisions, which cost as much as a short
// row's copy.
inline void OutputsInside(int64_t out, int64_t in, int64_t s, int64_t d, int64_t* o0, int64_t* o1) {
  if (s == 1) {
    *o0 = std::clamp<int64_t>(-d, 0, out);
    *o1 = std::max(*o0, std::min(out, in - d));
    return;
  }
  *o0 = std::min(out, d >= 0 ? 0 : (-d + s - 1) / s);
  *o1 = std::max(*o0, std::min(out, in - d <= 0 ? 0 : (in - d + s - 1) / s));
}
// The output columns [*ox0, *ox1) whose input column ix = ox*sw + dx lies inside the image, and
// the rows likewise (im2col's and col2im's shared bounds).
inline void ColumnsInside(const ops::ConvGeom& g, int64_t dx, int64_t* ox0, int64_t* ox1) {
  OutputsInside(g.ow, g.w, g.sw, dx, ox0, ox1);
}
inline void RowsInside(const ops::ConvGeom& g, int64_t dy, int64_t* oy0, int64_t* oy1) {
  OutputsInside(g.oh, g.h, g.sh, dy, oy0, oy1);
}

// Short rows (an output row of im2col / col2im: 7 to 56 elements in common nets) copied, zeroed
// and added in fixed-size blocks the compiler keeps as vector moves, with the last 0-3 elements
// one by one: std::copy, std::fill or a plain loop call memmove / memset per row, and LeNet's
// 20->50 5x5 conv (8-element rows) took im2col 1.9x this time that way.
template <typename T>
inline void CopyShortRow(const T* __restrict src, int64_t n, T* __restrict dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(T));
  if (i + 4 <= n) {
    std::memcpy(dst + i, src + i, 4 * sizeof(T));
    i += 4;
  }
  if (i == n) return;
  dst[i] = src[i];
  if (i + 1 < n) dst[i + 1] = src[i + 1];
  if (i + 2 < n) dst[i + 2] = src[i + 2];
}
template <typename T>
inline void ZeroShortRow(int64_t n, T* __restrict dst) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) dst[i + k] = T(0);
  if (i == n) return;
  dst[i] = T(0);
  if (i + 1 < n) dst[i + 1] = T(0);
  if (i + 2 < n) dst[i + 2] = T(0);
}
template <typename T>
inline void AddShortRow(const T* __restrict src, int64_t n, T* __restrict dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) dst[i + k] += src[i + k];
  if (i + 4 <= n) {
    for (int k = 0; k < 4; ++k) dst[i + k] += src[i + k];
    i += 4;
  }
  if (i == n) return;
  dst[i] += src[i];
  if (i + 1 < n) dst[i + 1] += src[i + 1];
  if (i + 2 < n) dst[i + 2] += src[i + 2];
}

// col[(c*kh + i)*kw + j][oy*ow + ox] = x[c][oy*sh - ph + i*dh][ox*sw - pw + j*dw] (0 outside the
// image), rows `ld` elements apart (ld >= oh*ow: other images' columns sit between).
template <typename T>
void Im2Col(const ops::ConvGeom& g, const T* x, T* col, int64_t ld) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t dy = i * g.dh - g.ph;
      int64_t oy0, oy1;
      RowsInside(g, dy, &oy0, &oy1);
      for (int64_t j = 0; j < g.kw; ++j) {
        T* dst = col + ((c * g.kh + i) * g.kw + j) * ld;
        const int64_t dx = j * g.dw - g.pw;
        int64_t ox0, ox1;
        ColumnsInside(g, dx, &ox0, &ox1);
        const T* src = x + c * g.h * g.w;  // src[(oy*sh + dy) * w + ox*sw + dx] is x[iy][ix]
        std::fill(dst, dst + oy0 * g.ow, T(0));
        if (g.sw == 1 && ox0 == 0 && ox1 == g.ow) {  // whole rows: the common case, kept tight
          for (int64_t oy = oy0; oy < oy1; ++oy)
            CopyShortRow(src + (oy * g.sh + dy) * g.w + dx, g.ow, dst + oy * g.ow);
        } else {
          for (int64_t oy = oy0; oy < oy1; ++oy) {
            T* row = dst + oy * g.ow;
            const T* s = src + (oy * g.sh + dy) * g.w + dx;
            ZeroShortRow(ox0, row);
            if (g.sw == 1)
              CopyShortRow(s + ox0, ox1 - ox0, row + ox0);
            else
              for (int64_t ox = ox0; ox < ox1; ++ox) row[ox] = s[ox * g.sw];
            ZeroShortRow(g.ow - ox1, row + ox1);
          }
        }
        std::fill(dst + oy1 * g.ow, dst + g.oh * g.ow, T(0));
      }
    }
}

// How a batch of g.n images is cut: `chunks` ranges of images run in parallel, each doing up to
// `per_gemm` images per GEMM; each chunk's scratch holds its column matrix (none when the image is
// its own, a pointwise filter's) and, when images share a GEMM, their outputs (or Output@GRAD) as
// [M, per_gemm * oh*ow].
struct ConvBatchPlan {
  int64_t chunks = 1, per_gemm = 1;
  int64_t col_elems = 0, rows_elems = 0;
  int64_t chunk_elems() const { return col_elems + rows_elems; }
};

// Column matrices of at most this many elements per chunk (256 KiB of float32): long enough GEMMs
// while the columns and the GEMM's output rows stay in a core's L2 (1 MiB columns spilled it:
// LeNet's 20->50 5x5 conv at batch 64, forward + backward, took 1.06x this CPU time at 1 thread).
constexpr int64_t kColBudget = int64_t(1) << 16;
// Images share a GEMM only until it has this many columns: more adds only the copies between
// images and rows (LeNet's 1->20 5x5 conv, 576 columns an image, forward + backward at 1 thread:
// 1.78-1.81 ms CPU one image per GEMM, 1.90-1.98 four).
constexpr int64_t kGemmCols = 256;

inline ConvBatchPlan PlanConvBatch(const KernelContext& ctx, const ops::ConvGeom& g,
                                   bool pointwise) {
  ConvBatchPlan p;
  const int64_t col_per_image = g.c * g.kh * g.kw * g.oh * g.ow;
  const int64_t flops = 2 * g.n * g.m * col_per_image / g.groups;
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  // A chunk per thread only when each has work worth a hand-off; one chunk lets the GEMMs thread.
  if (flops >= (int64_t(1) << 22))
    p.chunks = std::max<int64_t>(1, std::min<int64_t>(cpu.num_threads, g.n));
  if (pointwise) return p;
  const int64_t ohw = std::max<int64_t>(g.oh * g.ow, 1);
  p.per_gemm =
      std::max<int64_t>(1, std::min({(g.n + p.chunks - 1) / p.chunks, (kGemmCols + ohw - 1) / ohw,
                                     kColBudget / std::max<int64_t>(col_per_image, 1)}));
  p.col_elems = p.per_gemm * col_per_image;
  if (p.per_gemm > 1) p.rows_elems = g.m * p.per_gemm * g.oh * g.ow;
  return p;
}

// Im2Col of nb consecutive images x [nb, C, H, W] side by side: col [C*kh*kw, nb * oh*ow].
template <typename T>
void Im2ColImages(const ops::ConvGeom& g, const T* x, int64_t nb, T* col) {
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  for (int64_t i = 0; i < nb; ++i) Im2Col(g, x + i * chw, col + i * ohw, nb * ohw);
}

// [nb, M, ohw] images <-> [M, nb * ohw] rows: the layout of a GEMM over several images.
template <typename T>
void ImagesToRows(const T* images, int64_t nb, int64_t m, int64_t ohw, T* rows) {
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t r = 0; r < m; ++r)
      std::copy_n(images + (i * m + r) * ohw, ohw, rows + (r * nb + i) * ohw);
}
template <typename T>
void RowsToImages(const T* rows, int64_t nb, int64_t m, int64_t ohw, T* images) {
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t r = 0; r < m; ++r)
      std::copy_n(rows + (r * nb + i) * ohw, ohw, images + (i * m + r) * ohw);
}

// fn(chunk, n0, n1) for each chunk's items [n0, n1) (images, jobs), the chunks in parallel on the
// CPU pool (each chunk's work `cost_per_chunk`, by default enough for a thread of its own).
template <typename F>
void ForEachChunk(const KernelContext& ctx, int64_t n, int64_t chunks, F&& fn,
                  int64_t cost_per_chunk = kParallelThreshold) {
  auto range = [&](int64_t c) { return std::make_pair(n * c / chunks, n * (c + 1) / chunks); };
  if (chunks == 1) {
    fn(int64_t(0), int64_t(0), n);
    return;
  }
  ParallelFor(ctx, chunks, cost_per_chunk, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) fn(c, range(c).first, range(c).second);
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_IM2COL_HPP_
