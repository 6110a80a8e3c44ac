// tide/kernels/conv_direct.hpp: the plain float32 convolution without im2col: the input staged
// once as zero-bordered NHWC, the output computed from it in register tiles of output-channel
// blocks by output positions (conv_direct_tile.hpp), the filter packed once by channel blocks and
// kept in the op's kernel state until its bytes change, bias / residual / relu applied as each
// tile is stored, the tiles of all images on the CPU pool. The kernel is chosen by the CPU at run
// time (AVX-512, else AVX2 with FMA: conv_direct_isa.hpp; whatever the file including this is
// built for); TIDE_PLAIN_CONV_ISA=avx2 holds it to AVX2, =none turns it off (im2col + GEMM
// everywhere, as where the CPU has neither).
#ifndef TIDE_KERNELS_CONV_DIRECT_HPP_
#define TIDE_KERNELS_CONV_DIRECT_HPP_

#include <tide/cpu_context.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tide/eigen.hpp>
#include <tide/kernels/conv_direct_isa.hpp>
#include <tide/kernels/conv_direct_job.hpp>
#include <tide/kernels/conv_gemm.hpp>
#include <tide/ops/conv.hpp>
#include <tide/plugin.hpp>
#include <utility>

namespace tide {
namespace kernels {

// The kernel for this CPU, or null (none fits it, or TIDE_PLAIN_CONV_ISA=none).
inline const DirectConvIsa* DirectConvForCpu() {
  static const DirectConvIsa* const isa = [] {
#ifdef TIDE_KERNELS_CONV_X86
    const char* env = std::getenv("TIDE_PLAIN_CONV_ISA");
    const std::string want = env ? env : "";
    if (want == "none") return static_cast<const DirectConvIsa*>(nullptr);
    __builtin_cpu_init();
    if (want != "avx2" && __builtin_cpu_supports("avx512f") && DirectConvAvx512())
      return DirectConvAvx512();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && DirectConvAvx2())
      return DirectConvAvx2();
#endif
    return static_cast<const DirectConvIsa*>(nullptr);
  }();
  return isa;
}

// Where the direct kernel runs: one group (depthwise and grouped convs keep im2col + GEMM), data
// to convolve, at least kDirectConvMinTaps products per output (C * kh * kw: below, the tile's
// fixed cost, its stores through the epilogue, outweighs its arithmetic), and not a 1x1 filter
// without padding (the image, or the positions a stride reads gathered, is GEMM's column matrix:
// ResNet-50's strided 1x1s took 1.0x-1.3x the GEMM's time on the direct kernel). Measured
// at 1 thread, AVX-512, on a busy 2-core EPYC: batch 64 at 28x28, 3x3 and 5x5 filters over 1-8
// channels (25-72 products) took 1.1x-1.6x im2col + GEMM's time; ResNet-50's stem (147) 0.6x-0.8x,
// its 3x3 convs (576-4608) 0.5x-1.0x; its pointwise convs were no faster at 1 thread (CPU per run
// of the whole net 88.9-90.5 ms against 87.4-90.4) and slower at 2 (125-128 ms against 107-122).
constexpr int64_t kDirectConvMinTaps = 128;

// A channel block's packed filter of at least kDirectConvChunkedFilterBytes over an image of at
// most kDirectConvMaxChunkedTiles tiles is taken kDirectConvChunkBytes at a time by all the
// tiles (DirectConvRun): otherwise the first tile reads it from memory at the pace of one
// tile's arithmetic, and the rest from cache. ResNet-50 at batch 1 (2 threads, AVX-512, 2 MiB
// of L2), in the whole net: the [512, 512] 3x3 convs at 7x7 (1.2 MB a block) took 0.84x their
// time, the [256, 256] ones at 14x14 (0.6 MB) 0.9x-1.2x, so the bound is 1 MiB.
constexpr int64_t kDirectConvChunkedFilterBytes = int64_t(1) << 20;
constexpr int64_t kDirectConvMaxChunkedTiles = 64;
constexpr int64_t kDirectConvChunkBytes = int64_t(32) << 10;
inline bool DirectConvFits(const ops::ConvGeom& g) {
  const bool empty = g.n == 0 || g.c == 0 || g.m == 0 || g.oh <= 0 || g.ow <= 0;
  return g.groups == 1 && !IsPointwise(g) && !IsStridedPointwise(g) && !empty &&
         g.c * g.kh * g.kw >= kDirectConvMinTaps;
}

// The output-channel block of `isa`'s kernel for m channels: as many vectors as m fills, at most
// its largest.
inline int64_t DirectConvVectors(const DirectConvIsa& isa, int64_t m) {
  return std::min(isa.max_vectors, (m + isa.lanes - 1) / isa.lanes);
}
inline int64_t DirectConvBlock(const DirectConvIsa& isa, int64_t m) {
  return DirectConvVectors(isa, m) * isa.lanes;
}

// Floats of slack that let AlignTo64 move a buffer's start to the next 64-byte boundary.
constexpr size_t kAlignSlack = 64 / sizeof(float);
inline float* AlignTo64(float* p) {
  return p +
         (kAlignSlack - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kAlignSlack) % kAlignSlack;
}

// The filter [m, c, kh, kw] packed for `isa`: [m_blocks][kh][kw][c][block], zeros past m, in
// storage that stays 64-byte aligned.
struct PackedConvFilter {
  const void* source = nullptr;  // the Filter's bytes it was packed from
  uint64_t version = 0;          // their content version (0: never reused)
  Dims dims;
  const DirectConvIsa* isa = nullptr;
  bool winograd = false;  // holds conv_winograd.hpp's transformed filter instead
  bool per_run = false;   // the filter is trained: packed for each run, never kept
  OwnedTensor storage;    // the core's memory, so its statistics count the copy
  float* data = nullptr;  // null: a marker of the bytes seen, nothing kept yet
};

// What a conv op does with its packed (or transformed) filter this run.
enum class FilterCopy { kUseKept, kKeep, kPerRun };

// A copy is kept on the second run that finds the filter's bytes unchanged (inference), never
// for a filter whose bytes change in place between runs (training: the copy is stale by the next
// step, and held between steps and through the first one for nothing: a ResNet-18-sized net
// training at batch 16 peaked 50 MiB higher with its Winograd filters kept). The op's state
// remembers the bytes seen; a kept copy serves the kernel that made it (Winograd's transform,
// or the direct kernel's packing for `isa`).
inline FilterCopy PlanFilterCopy(KernelContext& ctx, const Tensor& filter, bool winograd,
                                 const DirectConvIsa* isa) {
  const PackedConvFilter* st = ctx.State<PackedConvFilter>();
  const uint64_t version = filter.content_version();
  if (version == 0) return FilterCopy::kPerRun;  // bytes that may change unseen
  const bool same_bytes = st && st->source == filter.raw_data() && st->dims == filter.dims();
  if (same_bytes && st->per_run) return FilterCopy::kPerRun;
  if (same_bytes && st->version == version)
    return st->data && st->winograd == winograd && (winograd || st->isa == isa)
               ? FilterCopy::kUseKept
               : FilterCopy::kKeep;
  auto marker = std::make_unique<PackedConvFilter>();
  marker->source = filter.raw_data();
  marker->dims = filter.dims();
  marker->version = version;
  marker->per_run = same_bytes;  // changed in place since the last run: trained
  ctx.SetState(std::move(marker));
  return FilterCopy::kPerRun;
}

// Room for the op's kept copy of `filter` (FilterCopy::kKeep), `n` floats 64-byte aligned, made
// the op's state; the caller packs or transforms the filter into it.
inline float* KeepFilterCopy(KernelContext& ctx, const Tensor& filter, size_t n, bool winograd,
                             const DirectConvIsa* isa) {
  auto next = std::make_unique<PackedConvFilter>();
  next->source = filter.raw_data();
  next->version = filter.content_version();
  next->dims = filter.dims();
  next->winograd = winograd;
  next->isa = isa;
  next->data = AlignTo64(
      next->storage.mutable_data<float>(Dims{static_cast<int64_t>(n + kAlignSlack)}, ctx.place()));
  return ctx.SetState(std::move(next))->data;
}

inline void PackConvFilter(const KernelContext& ctx, const DirectConvIsa& isa,
                           const ops::ConvGeom& g, const float* f, float* packed) {
  const int64_t block = DirectConvBlock(isa, g.m);
  const int64_t taps = g.c * g.kh * g.kw, blocks = (g.m + block - 1) / block;
  ParallelFor(ctx, blocks, taps * block, [&](int64_t b0, int64_t b1) {
    for (int64_t mb = b0; mb < b1; ++mb) {
      float* dst = packed + mb * taps * block;
      for (int64_t k = 0; k < g.kh * g.kw; ++k)
        for (int64_t c = 0; c < g.c; ++c)
          for (int64_t j = 0; j < block; ++j) {
            const int64_t m = mb * block + j;
            dst[(k * g.c + c) * block + j] = m < g.m ? f[(m * g.c + c) * g.kh * g.kw + k] : 0.0f;
          }
    }
  });
}

// Floats of the filter packed for `isa`.
inline size_t PackedConvFilterSize(const DirectConvIsa& isa, const ops::ConvGeom& g) {
  const int64_t block = DirectConvBlock(isa, g.m), blocks = (g.m + block - 1) / block;
  return static_cast<size_t>(blocks * g.c * g.kh * g.kw * block);
}

// The filter f packed into scratch of this run.
inline const float* PackConvFilterForRun(const KernelContext& ctx, const DirectConvIsa& isa,
                                         const ops::ConvGeom& g, const float* f) {
  float* p = AlignTo64(ctx.TempBuffer<float>(PackedConvFilterSize(isa, g) + kAlignSlack));
  PackConvFilter(ctx, isa, g, f, p);
  return p;
}

// The packed filter for this run: the op's kept copy, or packed anew (and kept: PlanFilterCopy).
inline const float* PackedFilterFor(KernelContext& ctx, const DirectConvIsa& isa,
                                    const ops::ConvGeom& g, const Tensor& filter) {
  const FilterCopy plan = PlanFilterCopy(ctx, filter, false, &isa);
  if (plan == FilterCopy::kUseKept) return ctx.State<PackedConvFilter>()->data;
  if (plan == FilterCopy::kPerRun) return PackConvFilterForRun(ctx, isa, g, filter.data<float>());
  float* p = KeepFilterCopy(ctx, filter, PackedConvFilterSize(isa, g), false, &isa);
  PackConvFilter(ctx, isa, g, filter.data<float>(), p);
  return p;
}

// od [n, m, oh, ow] = act(conv(xd, filter) + bias + residual), act relu or none (null bias /
// residual: none; residual may be od itself).
inline void ConvForwardDirect(const KernelContext& ctx, const DirectConvIsa& isa,
                              const ops::ConvGeom& g, const float* xd, const float* packed,
                              const float* bias, const float* residual, bool relu, float* od) {
  DirectConvJob j{};
  // The input staged as zero-bordered NHWC: a tile's positions then read their channels from
  // consecutive addresses (NCHW planes would be a cache line per channel and position), and the
  // kernel reads every window without a bounds check.
  const int64_t hw = g.h * g.w;
  const int64_t hp = g.h + g.ph + g.ph_end, wp = g.w + g.pw + g.pw_end;
  float* xs = ctx.TempBuffer<float>(static_cast<size_t>(g.n * hp * wp * g.c));
  auto stage = [&](int64_t b, int64_t e) {  // rows [b, e) of the staged images
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / hp, y = r % hp - g.ph;
      float* dst = xs + r * wp * g.c;
      if (y < 0 || y >= g.h) {
        std::memset(dst, 0, sizeof(float) * wp * g.c);
        continue;
      }
      std::memset(dst, 0, sizeof(float) * g.pw * g.c);
      std::memset(dst + (g.pw + g.w) * g.c, 0, sizeof(float) * (wp - g.pw - g.w) * g.c);
      isa.stage_row(xd + n * g.c * hw + y * g.w, hw, g.w, g.c, dst + g.pw * g.c);
    }
  };
  j.x = xs;
  j.x_chan = 1;
  j.x_col = g.c;
  j.x_row = wp * g.c;
  j.x_image = hp * j.x_row;
  j.c = g.c;
  j.kh = g.kh;
  j.kw = g.kw;
  j.sh = g.sh;
  j.sw = g.sw;
  j.dh = g.dh;
  j.dw = g.dw;
  j.m = g.m;
  j.oh = g.oh;
  j.ow = g.ow;
  j.filter = packed;
  j.out = od;
  j.bias = nullptr;
  j.residual = residual;
  j.relu = relu;
  const int64_t vectors = DirectConvVectors(isa, g.m), block = vectors * isa.lanes;
  j.m_blocks = (g.m + block - 1) / block;
  if (bias) {  // padded to whole blocks, aligned: the kernel loads it a vector at a time
    float* padded =
        AlignTo64(ctx.TempBuffer<float>(static_cast<size_t>(j.m_blocks * block) + kAlignSlack));
    std::fill(std::copy(bias, bias + g.m, padded), padded + j.m_blocks * block, 0.0f);
    j.bias = padded;
  }
  j.tiles = (g.oh * g.ow + isa.tile - 1) / isa.tile;
  const int64_t per_image = j.m_blocks * j.tiles, items = g.n * per_image;
  const int64_t flops_per_item = 2 * block * isa.tile * g.c * g.kh * g.kw;
  const DirectConvRange run = isa.run[vectors - 1];
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  // A large filter over few positions: each thread's channel blocks take it a chunk of taps at a
  // time (DirectConvRun), the tiles' sums in the thread's own room.
  const int64_t block_bytes = g.c * g.kh * g.kw * block * int64_t(sizeof(float));
  const bool chunked =
      block_bytes >= kDirectConvChunkedFilterBytes && j.tiles <= kDirectConvMaxChunkedTiles;
  j.tap_chunk =
      chunked ? std::max<int64_t>(1, kDirectConvChunkBytes / (block * int64_t(sizeof(float)))) : 0;
  j.partial = nullptr;
  const int64_t slots = std::min<int64_t>(std::max<int64_t>(1, cpu.num_threads), items);
  const int64_t room =
      chunked ? j.tiles * vectors * isa.tile * isa.lanes + int64_t(kAlignSlack) : 0;
  float* partials = chunked ? ctx.TempBuffer<float>(static_cast<size_t>(slots * room)) : nullptr;
  // Images enough for every thread: each stages its images and runs their tiles image by image,
  // one parallel region instead of two, the staged image still in cache. (Few images, batch 1
  // above all, split the tiles of each image between the threads instead.)
  const bool by_image = g.n >= 2 * slots;
  if (!by_image) ParallelFor(ctx, g.n * hp, 2 * wp * g.c, stage);
  ForEachChunk(
      ctx, by_image ? g.n : items, slots,
      [&](int64_t s, int64_t u0, int64_t u1) {
        DirectConvJob js = j;
        if (chunked) js.partial = AlignTo64(partials + s * room);
        if (!by_image) {
          run(js, u0, u1);
          return;
        }
        for (int64_t n = u0; n < u1; ++n) {
          stage(n * hp, (n + 1) * hp);
          run(js, n * per_image, (n + 1) * per_image);
        }
      },
      items / slots * flops_per_item);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_DIRECT_HPP_
