// conv_direct.h: the plain float32 convolution without im2col: the output computed straight from
// the (padded) NCHW input in register tiles of output-channel blocks by output positions
// (conv_direct_kernel.h), the filter packed once by channel blocks and kept in the op's kernel
// state until its bytes change, bias / residual / relu applied as each tile is stored, the tiles
// of all images on the CPU pool. The kernel is chosen by the CPU at run time (AVX-512, else AVX2
// with FMA; the plugin itself stays built for any x86-64); TIDE_PLAIN_CONV_ISA=avx2 holds it to
// AVX2, =none turns it off (im2col + GEMM everywhere, as where the CPU has neither).
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <tide/ops/conv.hpp>

#include "common.h"
#include "conv_direct_job.h"

namespace ops_nn {

// The kernel for this CPU, or null (none fits it, or TIDE_PLAIN_CONV_ISA=none).
inline const DirectConvIsa* DirectConvForCpu() {
  static const DirectConvIsa* const isa = [] {
#if defined(__x86_64__) || defined(__i386__)
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

// Where the direct kernel runs: one group (depthwise and grouped convs keep im2col + GEMM).
inline bool DirectConvFits(const tide::ops::ConvGeom& g) { return g.groups == 1; }

// The filter [m, c, kh, kw] packed for `isa`: [m_blocks][c][kh][kw][block], zeros past m, in
// storage that stays 64-byte aligned.
struct PackedConvFilter {
  const void* source = nullptr;  // the Filter's bytes it was packed from
  uint64_t version = 0;          // their content version (0: never reused)
  Dims dims;
  const DirectConvIsa* isa = nullptr;
  std::unique_ptr<float[]> storage;
  float* data = nullptr;
};

inline void PackConvFilter(const KernelContext& ctx, const DirectConvIsa& isa,
                           const tide::ops::ConvGeom& g, const float* f, float* packed) {
  const int64_t taps = g.c * g.kh * g.kw, blocks = (g.m + isa.block - 1) / isa.block;
  ParallelFor(ctx, blocks, taps * isa.block, [&](int64_t b0, int64_t b1) {
    for (int64_t mb = b0; mb < b1; ++mb) {
      float* dst = packed + mb * taps * isa.block;
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t j = 0; j < isa.block; ++j) {
          const int64_t m = mb * isa.block + j;
          dst[t * isa.block + j] = m < g.m ? f[m * taps + t] : 0.0f;
        }
    }
  });
}

// The packed filter for this run: the op's kept copy when Filter's bytes are the ones it was
// packed from, else packed anew (and kept when the bytes have a content version).
inline const float* PackedFilterFor(KernelContext& ctx, const DirectConvIsa& isa,
                                    const tide::ops::ConvGeom& g, const Tensor& filter) {
  PackedConvFilter* st = ctx.State<PackedConvFilter>();
  const uint64_t version = filter.content_version();
  if (st && version != 0 && st->version == version && st->source == filter.raw_data() &&
      st->dims == filter.dims() && st->isa == &isa)
    return st->data;
  const int64_t blocks = (g.m + isa.block - 1) / isa.block;
  const size_t n = static_cast<size_t>(blocks * g.c * g.kh * g.kw * isa.block);
  constexpr size_t kAlign = 64 / sizeof(float);
  if (version == 0) {  // bytes that may change unseen: packed for this run only
    float* p = ctx.TempBuffer<float>(n + kAlign);
    p += (kAlign - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kAlign) % kAlign;
    PackConvFilter(ctx, isa, g, filter.data<float>(), p);
    return p;
  }
  auto next = std::make_unique<PackedConvFilter>();
  next->source = filter.raw_data();
  next->version = version;
  next->dims = filter.dims();
  next->isa = &isa;
  next->storage.reset(new float[n + kAlign]);
  float* p = next->storage.get();
  p += (kAlign - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kAlign) % kAlign;
  next->data = p;
  PackConvFilter(ctx, isa, g, filter.data<float>(), p);
  return ctx.SetState(std::move(next))->data;
}

// od [n, m, oh, ow] = act(conv(xd, filter) + bias + residual), act relu or none (null bias /
// residual: none; residual may be od itself).
inline void ConvForwardDirect(const KernelContext& ctx, const DirectConvIsa& isa,
                              const tide::ops::ConvGeom& g, const float* xd, const float* packed,
                              const float* bias, const float* residual, bool relu, float* od) {
  DirectConvJob j{};
  j.x = xd;
  j.x_row = g.w;
  j.x_chan = g.h * g.w;
  j.x_image = g.c * j.x_chan;
  const bool padded = g.ph || g.pw || g.ph_end || g.pw_end;
  if (padded) {  // a zero-bordered copy: the kernel then reads every window without a check
    const int64_t hp = g.h + g.ph + g.ph_end, wp = g.w + g.pw + g.pw_end;
    float* xp = ctx.TempBuffer<float>(static_cast<size_t>(g.n * g.c * hp * wp));
    ParallelFor(ctx, g.n * g.c, 2 * hp * wp, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        float* dst = xp + i * hp * wp;
        const float* src = xd + i * g.h * g.w;
        std::memset(dst, 0, sizeof(float) * g.ph * wp);
        for (int64_t y = 0; y < g.h; ++y) {
          float* row = dst + (g.ph + y) * wp;
          std::memset(row, 0, sizeof(float) * g.pw);
          std::memcpy(row + g.pw, src + y * g.w, sizeof(float) * g.w);
          std::memset(row + g.pw + g.w, 0, sizeof(float) * g.pw_end);
        }
        std::memset(dst + (g.ph + g.h) * wp, 0, sizeof(float) * g.ph_end * wp);
      }
    });
    j.x = xp;
    j.x_row = wp;
    j.x_chan = hp * wp;
    j.x_image = g.c * j.x_chan;
  }
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
  j.bias = bias;
  j.residual = residual;
  j.relu = relu;
  j.m_blocks = (g.m + isa.block - 1) / isa.block;
  j.tiles = (g.oh * g.ow + isa.tile - 1) / isa.tile;
  const int64_t items = g.n * j.m_blocks * j.tiles;
  const int64_t flops_per_item = 2 * isa.block * isa.tile * g.c * g.kh * g.kw;
  ParallelFor(ctx, items, flops_per_item,
              [&](int64_t b, int64_t e) { isa.run(j, b, e); });
}

}  // namespace ops_nn
