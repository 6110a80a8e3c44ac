// pool_channels_last.h: max pooling over 2x2 windows at stride 2 (tide::kernels::IsMaxPool2x2)
// of channels-last float32 or bfloat16 data, the layout oneDNN's brgemm convolutions write for
// few channels (acdb). oneDNN 2.6's pooling took 0.77 ms forward and 0.88 ms backward on LeNet's
// [64, 20, 24, 24] that way, where these loops over each window's contiguous channels take a
// tenth of it (benchmarks/lenet_train_step.py). Same results as the plain kernels
// (plugins/ops_nn/pool_max2x2.h): the running max in scan order forward, all of Out@GRAD to the
// window's first maximum backward, 0 to cells outside every window.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/kernels/pool.hpp>
#include <tide/ops/pool.hpp>
#include <type_traits>
#include <vector>

#include "bf16_bits.h"

namespace tide_mkldnn {

// One output row o [ow, c] from its window's two input rows x0, x0 + row.
inline void MaxPool2x2RowChannelsLast(const float* x0, int64_t row, int64_t ow, int64_t c,
                                      float* o) {
  for (int64_t ox = 0; ox < ow; ++ox, o += c) {
    const float* a = x0 + 2 * ox * c;
    const float* b = a + c;
    const float* d0 = a + row;
    const float* d1 = d0 + c;
    for (int64_t k = 0; k < c; ++k) o[k] = tide::kernels::MaxPool2x2Max(a[k], b[k], d0[k], d1[k]);
  }
}

// bfloat16 rows go through float32 buffers (bf16_bits.h). Exact both ways here: the loops only
// pick values (forward: one of the window's, or float's lowest(), whose top half is bfloat16's
// lowest()) and route them (backward: Out@GRAD or 0), so the low halves are always zero.

// out [n, oh, ow, c] = the max of each 2x2 window of x [n, h, w, c]; T is float or bfloat16 (whose
// rows go through float32 buffers: oneDNN 2.6's bfloat16 pooling took 0.45 ms on LeNet's
// [64, 20, 24, 24] in acdb on a Sapphire Rapids, the float32 loops a fifth of it).
template <typename T>
void MaxPool2x2ChannelsLast(const tide::KernelContext& ctx, const tide::ops::PoolGeom& g,
                            const T* x, T* out) {
  const int64_t c = g.c, row = g.w * c, orow = g.ow * c;
  tide::ParallelFor(ctx, g.n * g.oh, 4 * orow, [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(std::is_same<T, float>::value ? 0 : 2 * row + orow);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / g.oh, oy = r % g.oh;
      const T* x0 = x + (n * g.h + 2 * oy) * row;
      if constexpr (std::is_same<T, float>::value) {
        MaxPool2x2RowChannelsLast(x0, row, g.ow, c, out + r * orow);
      } else {
        WidenBf16(x0, buf.data(), 2 * row);
        MaxPool2x2RowChannelsLast(buf.data(), row, g.ow, c, buf.data() + 2 * row);
        NarrowExactBf16(buf.data() + 2 * row, out + r * orow, orow);
      }
    }
  });
}

// One window's channels: Out@GRAD go to the first maximum of (a, b / c, d) in scan order, 0 to the
// other cells (tide::kernels::MaxPool2x2RouteVec on four channels at once).
inline void MaxPool2x2RouteChannels(const float* __restrict a, const float* __restrict b,
                                    const float* __restrict c, const float* __restrict d,
                                    const float* __restrict go, float* __restrict da,
                                    float* __restrict db, float* __restrict dc,
                                    float* __restrict dd, int64_t n) {
  int64_t k = 0;
#if defined(__SSE2__)
  for (; k + 4 <= n; k += 4) {  // four channels at once
    const auto r = tide::kernels::MaxPool2x2RouteVec(_mm_loadu_ps(a + k), _mm_loadu_ps(b + k),
                                                     _mm_loadu_ps(c + k), _mm_loadu_ps(d + k),
                                                     _mm_loadu_ps(go + k));
    _mm_storeu_ps(da + k, r.a);
    _mm_storeu_ps(db + k, r.b);
    _mm_storeu_ps(dc + k, r.c);
    _mm_storeu_ps(dd + k, r.d);
  }
#endif
  for (; k < n; ++k)
    tide::kernels::MaxPool2x2Route(a[k], b[k], c[k], d[k], 0.0f + go[k], da + k, db + k, dc + k,
                                   dd + k);
}

// Two input rows d, d + row of dx from x's rows x0, x0 + row and Out@GRAD's row go [ow, c].
inline void MaxPool2x2GradRowsChannelsLast(const float* x0, const float* go, int64_t row,
                                           int64_t ow, int64_t c, float* d) {
  float* e = d + row;
  for (int64_t ox = 0; ox < ow; ++ox, go += c) {
    const float* a = x0 + 2 * ox * c;
    float* da = d + 2 * ox * c;
    float* dc = e + 2 * ox * c;
    MaxPool2x2RouteChannels(a, a + c, a + row, a + row + c, go, da, da + c, dc, dc + c, c);
  }
  // columns right of every window
  std::fill(d + 2 * ow * c, d + row, 0.0f);
  std::fill(e + 2 * ow * c, e + row, 0.0f);
}

// dx [n, h, w, c] = each window's Out@GRAD dout [n, oh, ow, c] routed to its first maximum in x;
// T is float or bfloat16 (through float32 buffers, as MaxPool2x2ChannelsLast).
template <typename T>
void MaxPool2x2GradChannelsLast(const tide::KernelContext& ctx, const tide::ops::PoolGeom& g,
                                const T* x, const T* dout, T* dx) {
  const int64_t c = g.c, row = g.w * c, orow = g.ow * c;
  constexpr bool kFloat = std::is_same<T, float>::value;
  tide::ParallelFor(ctx, g.n * g.h, 2 * row, [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(kFloat ? 0 : 4 * row + orow);
    for (int64_t r = r0; r < r1; ++r) {  // input rows; a window's two rows are written by
      const int64_t n = r / g.h, iy = r % g.h, oy = iy / 2;  // the thread of its first
      T* d = dx + r * row;
      if (oy >= g.oh) {  // below every window
        std::fill(d, d + row, T(0));
        continue;
      }
      if (iy % 2) continue;
      const T* go = dout + (n * g.oh + oy) * orow;
      if constexpr (kFloat) {
        MaxPool2x2GradRowsChannelsLast(x + r * row, go, row, g.ow, c, d);
      } else {
        float* xf = buf.data();
        float* gf = xf + 2 * row;
        float* df = gf + orow;
        WidenBf16(x + r * row, xf, 2 * row);
        WidenBf16(go, gf, orow);
        MaxPool2x2GradRowsChannelsLast(xf, gf, row, g.ow, c, df);
        NarrowExactBf16(df, d, 2 * row);
      }
    }
  });
}

}  // namespace tide_mkldnn
