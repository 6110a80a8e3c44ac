// tide/kernels/conv_winograd.hpp: the plain float32 3x3 stride-1 convolution by Winograd's minimal
// filtering F(2x2, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2016):
// each 2x2 block of output positions from a 4x4 block of input, with 16 products per channel pair
// instead of 36. The filter is transformed once per op (U = G g G^T, kept in the op's kernel state
// as the direct kernel keeps its packed filter); per job, a chunk of one image's tiles and a range
// of output channels, on one thread: the input tiles transformed (V = B^T d B), 16 GEMMs
// (M = U V, one per tile element, tide/gemm.hpp) and the output transformed back (Y = A^T M A)
// with bias, residual and the activation applied as it is stored. Portable C++: the transforms'
// loops run over contiguous tiles, so the compiler vectorizes them for whatever the pack is
// built for; the GEMM brings the ISA.
#ifndef TIDE_KERNELS_CONV_WINOGRAD_HPP_
#define TIDE_KERNELS_CONV_WINOGRAD_HPP_

#include <tide/cpu_context.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tide/eigen.hpp>
#include <tide/gemm.hpp>
#include <tide/kernels/conv_direct.hpp>
#include <tide/kernels/fused_activation.hpp>
#include <tide/ops/conv.hpp>
#include <tide/plugin.hpp>
#include <utility>

namespace tide {
namespace kernels {

// Tile elements: the 4x4 transformed block of one tile and channel.
constexpr int64_t kWinogradElems = 16;

// Where it runs: a 3x3 filter with unit stride and dilation, one group, at least
// kWinogradMinChannels input and output channels (fewer leave the 16 GEMMs too small to pay for
// the transforms) and at least kWinogradMinTiles tiles of 2x2 outputs over the batch. The
// transformed filter is 16/9 of the filter's size, read whole for each image's tiles: with few
// tiles the conv is bound by reading it from memory, not by its products (ResNet-50 at batch 1,
// in the whole net, 2 threads: the [512, 512] 7x7 convs, 16 tiles, took 1.04x the direct
// kernel's time, the [256, 256] 14x14 ones, 49 tiles, 0.96x, where the 28x28 and 56x56 ones,
// 196 and 784 tiles, took 0.74x and 0.70x). TIDE_PLAIN_CONV_WINOGRAD=0 turns it off (the direct
// kernel then runs these), and so does TIDE_PLAIN_CONV_ISA=none (im2col + GEMM everywhere).
constexpr int64_t kWinogradMinChannels = 32, kWinogradMinTiles = 64;
inline bool WinogradEnabled() {
  static const bool on = [] {
    const char* w = std::getenv("TIDE_PLAIN_CONV_WINOGRAD");
    const char* isa = std::getenv("TIDE_PLAIN_CONV_ISA");
    return !(w && std::string(w) == "0") && !(isa && std::string(isa) == "none");
  }();
  return on;
}
inline bool WinogradFits(const ops::ConvGeom& g) {
  const int64_t tiles = g.n * ((g.oh + 1) / 2) * ((g.ow + 1) / 2);
  return WinogradEnabled() && DirectConvForCpu() && g.groups == 1 && g.kh == 3 && g.kw == 3 &&
         g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.c >= kWinogradMinChannels &&
         g.m >= kWinogradMinChannels && g.oh > 0 && g.ow > 0 && tiles >= kWinogradMinTiles;
}

// U [16][m][c] = G g G^T for each filter g [m, c, 3, 3]; G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
inline void WinogradTransformFilter(const KernelContext& ctx, const ops::ConvGeom& g,
                                    const float* f, float* u) {
  const int64_t mc = g.m * g.c;
  ParallelFor(ctx, mc, 64, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float* k = f + i * 9;
      float t[4][3];  // G g
      for (int col = 0; col < 3; ++col) {
        const float k0 = k[col], k1 = k[3 + col], k2 = k[6 + col];
        t[0][col] = k0;
        t[1][col] = 0.5f * (k0 + k1 + k2);
        t[2][col] = 0.5f * (k0 - k1 + k2);
        t[3][col] = k2;
      }
      for (int r = 0; r < 4; ++r) {  // (G g) G^T
        const float a = t[r][0], b1 = t[r][1], c = t[r][2];
        u[(r * 4 + 0) * mc + i] = a;
        u[(r * 4 + 1) * mc + i] = 0.5f * (a + b1 + c);
        u[(r * 4 + 2) * mc + i] = 0.5f * (a - b1 + c);
        u[(r * 4 + 3) * mc + i] = c;
      }
    }
  });
}

// The filter f transformed into scratch of this run.
inline const float* WinogradFilterForRun(const KernelContext& ctx, const ops::ConvGeom& g,
                                         const float* f) {
  float* u = ctx.TempBuffer<float>(static_cast<size_t>(kWinogradElems * g.m * g.c));
  WinogradTransformFilter(ctx, g, f, u);
  return u;
}

// The transformed filter for this run: the op's kept copy, or transformed anew (and kept:
// PlanFilterCopy). The op's state slot is the direct kernel's PackedConvFilter (an op may take
// either kernel as its input's size changes), marked `winograd`.
inline const float* WinogradFilterFor(KernelContext& ctx, const ops::ConvGeom& g,
                                      const Tensor& filter) {
  const FilterCopy plan = PlanFilterCopy(ctx, filter, true, nullptr);
  if (plan == FilterCopy::kUseKept) return ctx.State<PackedConvFilter>()->data;
  if (plan == FilterCopy::kPerRun) return WinogradFilterForRun(ctx, g, filter.data<float>());
  const size_t n = static_cast<size_t>(kWinogradElems * g.m * g.c);
  float* u = KeepFilterCopy(ctx, filter, n, true, nullptr);
  WinogradTransformFilter(ctx, g, filter.data<float>(), u);
  return u;
}

// The work: tiles of 2x2 output positions, th x tw per image, numbered over the batch; output
// channels cut into k_chunks ranges where there are fewer images than threads (each thread then
// reads only its part of the transformed filter, 16 x a 3x3 filter's size), the tiles into
// chunks of at most kWinogradChunkFloats of transformed input and products (16 * (c + k_rows)
// floats a tile), a chunk spanning images where they are small. A job is one (tile chunk,
// channel range), a thread takes an equal run of them. Wide chunks make the 16 GEMMs wide:
// measured on ResNet-50's 3x3 convs (2 threads, AVX-512), at batch 1 whole images with the
// channels split in two took 0.75x-0.95x the time of chunks that fit 1 MiB with the channels
// whole. On many threads the chunks shrink so that all the threads' scratch stays within
// kWinogradScratchFloats.
constexpr int64_t kWinogradChunkFloats = int64_t(1) << 20;    // 4 MiB
constexpr int64_t kWinogradScratchFloats = int64_t(1) << 23;  // 32 MiB
struct WinogradPlan {
  int64_t th = 0, tw = 0, tiles = 0;  // per image
  int64_t chunk = 0, chunks = 0;      // tiles per chunk, chunks over the batch
  int64_t k_rows = 0, k_chunks = 1;   // output channels per range, ranges
  int64_t jobs = 0;
};

inline WinogradPlan PlanWinograd(const ops::ConvGeom& g, int64_t threads) {
  WinogradPlan p;
  p.th = (g.oh + 1) / 2;
  p.tw = (g.ow + 1) / 2;
  p.tiles = p.th * p.tw;
  const int64_t total = g.n * p.tiles;
  const int64_t max_k_chunks = std::max<int64_t>(1, g.m / 16);
  p.k_chunks = std::min(max_k_chunks, std::max<int64_t>(1, threads / g.n));
  const int64_t budget = std::min(kWinogradChunkFloats, kWinogradScratchFloats / threads);
  const int64_t fit = budget / (kWinogradElems * (g.c + g.m / p.k_chunks));
  p.chunk = std::min(total, std::max<int64_t>(16, fit));
  p.chunks = (total + p.chunk - 1) / p.chunk;
  p.chunk = (total + p.chunks - 1) / p.chunks;  // even chunks
  // More ranges where the jobs would leave threads uneven and are few.
  while (p.k_chunks < max_k_chunks && (p.chunks * p.k_chunks) % threads != 0 &&
         p.chunks * p.k_chunks < 8 * threads)
    ++p.k_chunks;
  p.k_rows = (g.m + p.k_chunks - 1) / p.k_chunks;
  p.k_chunks = (g.m + p.k_rows - 1) / p.k_rows;
  p.jobs = p.chunks * p.k_chunks;
  return p;
}

// fn(n, t0, count, col) for each image n that the batch's tiles [first, first + nb) reach: its
// tiles [t0, t0 + count), at column col of the chunk.
template <typename Fn>
void ForEachImageOfChunk(const WinogradPlan& p, int64_t first, int64_t nb, Fn&& fn) {
  for (int64_t n = first / p.tiles; n * p.tiles < first + nb; ++n) {
    const int64_t t0 = std::max(first, n * p.tiles) - n * p.tiles;
    const int64_t t1 = std::min(first + nb, (n + 1) * p.tiles) - n * p.tiles;
    fn(n, t0, t1 - t0, n * p.tiles + t0 - first);
  }
}

// The distance between the 16 elements' matrices in the scratch, at least `elems`: 64 bytes past
// a multiple of 4 KiB, so that the 16 streams a row kernel reads or writes at once fall in
// different cache sets (at a multiple of 4 KiB they all compete for one set of L1).
inline int64_t WinogradElemStep(int64_t elems) { return (elems + 1023) / 1024 * 1024 + 16; }

// The input rows a tile row reads: rows 2 ty - ph .. 2 ty - ph + 3, from column -pw, staged
// zero-bordered and wide enough for the row kernel's whole vectors (2 tw + 2 lanes + 2).
inline int64_t WinogradRowWidth(const WinogradPlan& p, int64_t lanes) {
  return 2 * p.tw + 2 * lanes + 2;
}

// v [16][c][ld] = B^T d B for the tiles [t0, t0 + nb) of image x [c, h, w]: per channel, the
// chunk's input rows staged once (consecutive tile rows share two), then each tile row
// transformed by the ISA's row kernel. ld leaves a vector of room past nb.
inline void WinogradInput(const DirectConvIsa& isa, const ops::ConvGeom& g, const WinogradPlan& p,
                          const float* x, int64_t t0, int64_t nb, float* v, int64_t ld,
                          int64_t step, float* staged) {
  const int64_t width = WinogradRowWidth(p, isa.lanes), plane = g.h * g.w;
  const int64_t ty0 = t0 / p.tw, ty1 = (t0 + nb - 1) / p.tw, rows = 2 * (ty1 - ty0) + 4;
  const int64_t lo = std::min<int64_t>(width, g.pw), hi = std::min<int64_t>(width, g.pw + g.w);
  for (int64_t c = 0; c < g.c; ++c) {
    const float* xc = x + c * plane;
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = staged + r * width;
      const int64_t y = 2 * ty0 - g.ph + r;
      if (y < 0 || y >= g.h || hi <= lo) {
        std::fill(dst, dst + width, 0.0f);
        continue;
      }
      std::fill(dst, dst + lo, 0.0f);
      std::memcpy(dst + lo, xc + y * g.w + (lo - g.pw), sizeof(float) * (hi - lo));
      std::fill(dst + hi, dst + width, 0.0f);
    }
    for (int64_t ty = ty0; ty <= ty1; ++ty) {
      const int64_t tx0 = ty == ty0 ? t0 % p.tw : 0;
      const int64_t tx1 = ty == ty1 ? (t0 + nb - 1) % p.tw + 1 : p.tw;
      const float* in[4];
      for (int64_t i = 0; i < 4; ++i) in[i] = staged + (2 * (ty - ty0) + i) * width + 2 * tx0;
      isa.winograd_input_row(in, tx1 - tx0, v + c * ld + ty * p.tw + tx0 - t0, step);
    }
  }
}

// Output channels [k0, k0 + kc) of image n's tiles [t0, t0 + nb) from the products
// mm [16][kc][ld]: Y = A^T M A, then + bias + residual (relu), stored row by row of tiles by the
// ISA's row kernel (residual may be the output itself: each value is read before it is written).
inline void WinogradOutput(const DirectConvIsa& isa, const ops::ConvGeom& g, const WinogradPlan& p,
                           const float* mm, int64_t ld, int64_t step, int64_t n, int64_t t0,
                           int64_t nb, int64_t k0, int64_t kc, const float* bias,
                           const float* residual, bool relu, float* out) {
  const int64_t ohw = g.oh * g.ow, ty0 = t0 / p.tw, ty1 = (t0 + nb - 1) / p.tw;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const int64_t plane = (n * g.m + k0 + kk) * ohw;
    const float bk = bias ? bias[k0 + kk] : 0.0f;
    for (int64_t ty = ty0; ty <= ty1; ++ty) {
      const int64_t tx0 = ty == ty0 ? t0 % p.tw : 0;
      const int64_t tx1 = ty == ty1 ? (t0 + nb - 1) % p.tw + 1 : p.tw;
      const int64_t at0 = plane + 2 * ty * g.ow + 2 * tx0;
      const bool second = 2 * ty + 1 < g.oh;
      const int64_t at1 = at0 + g.ow;
      isa.winograd_output_row(mm + kk * ld + ty * p.tw + tx0 - t0, step, tx1 - tx0, bk,
                              residual ? residual + at0 : nullptr,
                              residual && second ? residual + at1 : nullptr, relu, out + at0,
                              second ? out + at1 : nullptr, std::min(2 * tx1, g.ow) - 2 * tx0);
    }
  }
}

// od [n, m, oh, ow] = act(conv(xd, filter) + bias + residual), act relu or none, for a conv
// WinogradFits, with u the filter from WinogradFilterFor (null bias / residual: none; residual
// may be od itself).
inline void ConvForwardWinograd(const KernelContext& ctx, const DirectConvIsa& isa,
                                const ops::ConvGeom& g, const float* xd, const float* u,
                                const float* bias, const float* residual, bool relu, float* od) {
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  const int64_t threads = std::max<int64_t>(1, cpu.num_threads);
  const WinogradPlan p = PlanWinograd(g, threads);
  const int64_t slots = std::min(threads, p.jobs);
  // Each slot's scratch: the chunk's transformed input, its products, its staged input rows.
  const int64_t ld = (p.chunk + isa.lanes - 1) / isa.lanes * isa.lanes + isa.lanes;
  const int64_t v_step = WinogradElemStep(g.c * ld), m_step = WinogradElemStep(p.k_rows * ld);
  const int64_t v_elems = kWinogradElems * v_step, m_elems = kWinogradElems * m_step;
  const int64_t staged_elems =
      (2 * (std::min(p.chunk, p.tiles) / p.tw + 2) + 4) * WinogradRowWidth(p, isa.lanes);
  const int64_t per_slot = v_elems + m_elems + staged_elems + 2 * int64_t(kAlignSlack);
  float* scratch = ctx.TempBuffer<float>(static_cast<size_t>(slots * per_slot));
  const int64_t image = g.c * g.h * g.w, mk = g.m * g.c;
  const int64_t flops = 2 * kWinogradElems * g.c * p.k_rows * p.chunk;
  // One chunk of jobs per thread, each with its own scratch.
  ForEachChunk(
      ctx, p.jobs, slots,
      [&](int64_t s, int64_t j0, int64_t j1) {
        float* v = AlignTo64(scratch + s * per_slot);
        float* mm = AlignTo64(v + v_elems);
        float* staged = mm + m_elems;
        int64_t transformed = -1;  // the chunk whose input v holds
        for (int64_t j = j0; j < j1; ++j) {
          // Jobs ordered chunk, channel range: a thread's run of one chunk's ranges transforms
          // its input once. A chunk's images one after another: a row kernel's writes past an
          // image's last tile land on the next image's columns before that image writes them.
          const int64_t ci = j / p.k_chunks, kci = j % p.k_chunks;
          const int64_t first = ci * p.chunk, nb = std::min(p.chunk, g.n * p.tiles - first);
          const int64_t k0 = kci * p.k_rows, kc = std::min(p.k_rows, g.m - k0);
          if (transformed != ci) {
            ForEachImageOfChunk(
                p, first, nb, [&](int64_t n, int64_t t0, int64_t count, int64_t col) {
                  WinogradInput(isa, g, p, xd + n * image, t0, count, v + col, ld, v_step, staged);
                });
            transformed = ci;
          }
          for (int64_t e = 0; e < kWinogradElems; ++e)
            Gemm<float>(ctx, false, false, kc, nb, g.c, 1.0f, u + e * mk + k0 * g.c, g.c,
                        v + e * v_step, ld, 0.0f, mm + e * m_step, ld);
          ForEachImageOfChunk(p, first, nb, [&](int64_t n, int64_t t0, int64_t count, int64_t col) {
            WinogradOutput(isa, g, p, mm + col, ld, m_step, n, t0, count, k0, kc, bias, residual,
                           relu, od);
          });
        }
      },
      p.jobs / slots * flops);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_WINOGRAD_HPP_
