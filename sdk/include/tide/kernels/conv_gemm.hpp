// tide/kernels/conv_gemm.hpp: the plain convolution's forward on NCHW data, im2col + GEMM over
// the batch cut tide/kernels/conv_im2col.hpp plans (Output from Input and Filter): the
// header-only conv kernel (tide/kernels/conv.hpp) runs it where the direct kernel does not, and
// the op packs' conv2d_transpose runs it as its backward.
#ifndef TIDE_KERNELS_CONV_GEMM_HPP_
#define TIDE_KERNELS_CONV_GEMM_HPP_

#include <tide/cpu_context.h>

#include <algorithm>
#include <cstdint>
#include <tide/eigen.hpp>
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

// A 1x1 filter without padding that skips positions (stride > 1): the positions it reads, gathered,
// are a pointwise conv's input.
inline bool IsStridedPointwise(const ops::ConvGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.ph == 0 && g.pw == 0 && g.ph_end == 0 && g.pw_end == 0 &&
         !IsPointwise(g);
}

// No epilogue (ConvForwardNchw's `done`).
struct NoConvEpilogue {
  void operator()(int64_t, int64_t, int64_t, int64_t, int64_t) const {}
};

// A pointwise conv's GEMMs (C [M, P] = Filter [M, K] * image [K, P] per image) cut into tiles of
// rows x columns, on the CPU pool: each thread runs its tiles' GEMMs single-threaded and the
// epilogue on each tile while it is in L2. (One GEMM per image left its epilogue to read the
// output back from L3: ResNet-50's pointwise convs took 1.1x-1.3x this time at batch 1 and 16,
// the 56x56 ones with a residual the most.)
struct GemmTiles {
  int64_t rows = 0, cols = 0;  // per tile
  int64_t row_tiles = 1, col_tiles = 1;
  int64_t count() const { return row_tiles * col_tiles; }
};

// Columns in tiles of about kTileCols (16-aligned), rows in tiles of at most kTileElems / cols and
// as many as make the tile count over all images a multiple of the threads, at least two per
// thread (the pool gives each thread a contiguous range of tiles: equal counts, equal work).
constexpr int64_t kTileCols = 256, kTileElems = int64_t(1) << 16;  // 256 KiB of float32 C
inline int64_t Up16(int64_t v) { return (v + 15) / 16 * 16; }

// Rows per tile (16-aligned) of m rows by `cols` columns: within kTileElems, and as many tiles as
// make their count times `per_row_tile` (the other tiles each row tile is paired with) a multiple
// of the threads, at least two per thread.
inline int64_t PlanTileRows(int64_t m, int64_t cols, int64_t per_row_tile, int64_t threads) {
  const int64_t max_row_tiles = std::max<int64_t>(1, m / 16);
  int64_t r = std::min(max_row_tiles, std::max<int64_t>(1, m * cols / kTileElems));
  auto balanced = [&](int64_t rt) {
    const int64_t count = per_row_tile * rt;
    return count % threads == 0 && count >= 2 * threads;
  };
  while (r < max_row_tiles && !balanced(r)) ++r;
  return std::min(m, Up16((m + r - 1) / r));
}

inline GemmTiles PlanGemmTiles(int64_t m, int64_t p, int64_t images, int64_t threads) {
  GemmTiles t;
  t.col_tiles = std::max<int64_t>(1, (p + kTileCols / 2) / kTileCols);
  t.cols = std::min(p, Up16((p + t.col_tiles - 1) / t.col_tiles));
  t.col_tiles = (p + t.cols - 1) / t.cols;
  t.rows = PlanTileRows(m, t.cols, images * t.col_tiles, threads);
  t.row_tiles = (m + t.rows - 1) / t.rows;
  return t;
}

// A pointwise conv over images of few positions (a 7x7 map): GEMMs that narrow run at about
// two thirds of the speed of wide ones (oneDNN's sgemm, 1 thread, AVX-512: [2048, 512] x
// [512, 49] 85-95 GF/s, x [512, 490] 113-160), so groups of images are put side by side: each
// job gathers its group's columns ([c, images * positions]) once, runs a GEMM for a tile of
// filter rows over them, and puts the rows back into each image with the epilogue. Below
// kBatchedGemmCols positions per image, where there are images to batch: ResNet-50's 7x7
// pointwise convs at batch 16, 2 threads, took 0.64x-0.77x the time of a GEMM per image; its
// 14x14 ones (196 positions) were no faster batched (1.02x-1.07x).
constexpr int64_t kBatchedGemmCols = 128;
struct BatchedGemmPlan {
  int64_t images = 1, groups = 1;  // images per group, groups
  int64_t rows = 0, row_tiles = 1;
  int64_t jobs() const { return groups * row_tiles; }
};
inline BatchedGemmPlan PlanBatchedGemm(int64_t m, int64_t p, int64_t n, int64_t threads) {
  BatchedGemmPlan b;
  b.images = std::min(n, std::max<int64_t>(1, 2 * kTileCols / p));  // about 512 columns
  b.groups = (n + b.images - 1) / b.images;
  b.images = (n + b.groups - 1) / b.groups;  // even groups
  b.rows = PlanTileRows(m, b.images * p, b.groups, threads);
  b.row_tiles = (m + b.rows - 1) / b.rows;
  return b;
}

template <typename T, typename Done>
void PointwiseBatched(const KernelContext& ctx, const ops::ConvGeom& g, const T* xd, const T* fd,
                      T* od, bool accumulate, Done& done) {
  const int64_t p = g.oh * g.ow, k = g.c;
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  const int64_t threads = std::max<int64_t>(1, cpu.num_threads);
  const BatchedGemmPlan b = PlanBatchedGemm(g.m, p, g.n, threads);
  const int64_t cols = b.images * p, slots = std::min(threads, b.jobs());
  const int64_t per_slot = k * cols + b.rows * cols;
  T* scratch = ctx.TempBuffer<T>(static_cast<size_t>(slots * per_slot));
  // One chunk of jobs per thread, each with its own scratch.
  ForEachChunk(
      ctx, b.jobs(), slots,
      [&](int64_t s, int64_t j0, int64_t j1) {
        T* x = scratch + s * per_slot;  // [k, cols]: the group's images side by side
        T* c = x + k * cols;            // [rows, cols]
        int64_t gathered = -1;
        for (int64_t j = j0; j < j1; ++j) {
          const int64_t gi = j / b.row_tiles, rt = j % b.row_tiles;
          const int64_t n0 = gi * b.images, nb = std::min(b.images, g.n - n0), w = nb * p;
          if (gathered != gi) {
            ImagesToRows(xd + n0 * k * p, nb, k, p, x);
            gathered = gi;
          }
          const int64_t m0 = rt * b.rows, m1 = std::min(g.m, m0 + b.rows);
          Gemm<T>(ctx, false, false, m1 - m0, w, k, T(1), fd + m0 * k, k, x, w, T(0), c, w);
          for (int64_t i = 0; i < nb; ++i) {
            for (int64_t m = m0; m < m1; ++m) {
              const T* src = c + (m - m0) * w + i * p;
              T* dst = od + ((n0 + i) * g.m + m) * p;
              if (accumulate)
                for (int64_t q = 0; q < p; ++q) dst[q] += src[q];
              else
                std::copy_n(src, p, dst);
            }
            done(n0 + i, m0, m1, int64_t(0), p);
          }
        }
      },
      b.jobs() / slots * 2 * b.rows * cols * k);
}

// od [n, m, ohw] = Filter * xd for a pointwise conv (one group) in PlanGemmTiles' tiles over the
// CPU pool; done(n, m0, m1, p0, p1) on each tile.
template <typename T, typename Done>
void PointwiseTiled(const KernelContext& ctx, const ops::ConvGeom& g, const T* xd, const T* fd,
                    T* od, bool accumulate, Done& done) {
  const int64_t p = g.oh * g.ow, k = g.c;
  if (g.n <= 0 || g.m <= 0 || p <= 0) return;  // no output
  if (p < kBatchedGemmCols && g.n > 1) {
    PointwiseBatched<T>(ctx, g, xd, fd, od, accumulate, done);
    return;
  }
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  const GemmTiles t = PlanGemmTiles(g.m, p, g.n, cpu.num_threads);
  // Tiles ordered image, column tile, row tile: a thread's range reads part of the image's
  // columns with all the filter rows (many positions) or part of the filter (few positions).
  ParallelFor(ctx, g.n * t.count(), 2 * t.rows * t.cols * k, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t n = it / t.count(), ct = it % t.count() / t.row_tiles, rt = it % t.row_tiles;
      const int64_t m0 = rt * t.rows, m1 = std::min(g.m, m0 + t.rows);
      const int64_t p0 = ct * t.cols, p1 = std::min(p, p0 + t.cols);
      T* c = od + n * g.m * p + m0 * p + p0;
      Gemm<T>(ctx, false, false, m1 - m0, p1 - p0, k, T(1), fd + m0 * k, k, xd + n * k * p + p0, p,
              accumulate ? T(1) : T(0), c, p);
      done(n, m0, m1, p0, p1);
    }
  });
}

// od [n, m, oh, ow] = conv(xd [n, c, h, w], fd [m, c / groups, kh, kw]), added to what od holds
// when `accumulate` (a residual already in place); done(n, m0, m1, p0, p1) runs on output
// channels [m0, m1) at positions [p0, p1) of image n as soon as they are computed, on the thread
// that computed them (an epilogue while they are in cache, in parallel as the GEMMs are).
template <typename T, typename Done = NoConvEpilogue>
void ConvForwardNchw(const KernelContext& ctx, const ops::ConvGeom& g, const T* xd, const T* fd,
                     T* od, bool accumulate = false, Done&& done = Done()) {
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  const bool pointwise = IsPointwise(g);  // the image is its own column matrix
  if (pointwise && g.groups == 1) {
    PointwiseTiled<T>(ctx, g, xd, fd, od, accumulate, done);
    return;
  }
  if (IsStridedPointwise(g) && g.groups == 1) {
    // The positions a strided 1x1 reads, gathered as [n, c, oh, ow] (Im2Col of its planes, as
    // many channels of one image): a pointwise conv's input.
    T* xs = ctx.TempBuffer<T>(static_cast<size_t>(g.n * g.c * ohw));
    ParallelFor(ctx, g.n * g.c, 2 * ohw, [&](int64_t b, int64_t e) {
      ops::ConvGeom planes = g;
      planes.c = e - b;
      Im2Col(planes, xd + b * g.h * g.w, xs + b * ohw, ohw);
    });
    PointwiseTiled<T>(ctx, g, xs, fd, od, accumulate, done);
    return;
  }
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
      for (int64_t i = n; i < n + nb; ++i) done(i, int64_t(0), g.m, int64_t(0), ohw);
    }
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_GEMM_HPP_
