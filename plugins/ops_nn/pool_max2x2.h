// pool_max2x2.h: pool2d_grad's most common case, max over 2x2 windows at stride 2 with every
// window inside the image (IsMaxPool2x2, beside the forward's loops in the SDK's
// tide/kernels/pool.hpp), in one pass instead of the reference's window arithmetic per output
// (tide/ops/pool.hpp). The same results bit for bit: the same comparisons in the same order
// (padding, clipped windows and every other geometry keep the reference).
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/kernels/pool.hpp>
#include <tide/ops/pool.hpp>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ops_nn {

using tide::kernels::IsMaxPool2x2;
using tide::kernels::MaxPool2x2Route;

#if defined(__SSE2__)
// Four windows of float32 rows at once (SSE2, which every x86-64 has): MaxPool2x2Route with the
// comparisons as masks; x0 / x1 and d0 / d1 point at the windows' first cells in the two rows.
inline int64_t MaxPool2x2GradVec(const float* x0, const float* x1, const float* go, float* d0,
                                 float* d1, int64_t ow) {
  int64_t ox = 0;
  for (; ox + 4 <= ow; ox += 4) {
    const __m128 t0 = _mm_loadu_ps(x0 + 2 * ox), t1 = _mm_loadu_ps(x0 + 2 * ox + 4);
    const __m128 u0 = _mm_loadu_ps(x1 + 2 * ox), u1 = _mm_loadu_ps(x1 + 2 * ox + 4);
    const __m128 a = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 b = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 c = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0));
    const __m128 d = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1));
    const auto r = tide::kernels::MaxPool2x2RouteVec(a, b, c, d, _mm_loadu_ps(go + ox));
    _mm_storeu_ps(d0 + 2 * ox, _mm_unpacklo_ps(r.a, r.b));
    _mm_storeu_ps(d0 + 2 * ox + 4, _mm_unpackhi_ps(r.a, r.b));
    _mm_storeu_ps(d1 + 2 * ox, _mm_unpacklo_ps(r.c, r.d));
    _mm_storeu_ps(d1 + 2 * ox + 4, _mm_unpackhi_ps(r.c, r.d));
  }
  return ox;
}
#endif

// tide::ops::PoolGradPlane for IsMaxPool2x2, in one pass writing every cell of dx once
// (MaxPool2x2Route; 0 outside every window).
template <typename T>
void MaxPool2x2GradPlane(const tide::ops::PoolGeom& g, const T* x, const T* dout, T* dx) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const T* r0 = x + 2 * oy * g.w;
    const T* r1 = r0 + g.w;
    T* d0 = dx + 2 * oy * g.w;
    T* d1 = d0 + g.w;
    const T* go = dout + oy * g.ow;
    int64_t ox = 0;
#if defined(__SSE2__)
    if constexpr (std::is_same_v<T, float>) ox = MaxPool2x2GradVec(r0, r1, go, d0, d1, g.ow);
#endif
    for (; ox < g.ow; ++ox)
      MaxPool2x2Route(r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1], T(0) + go[ox],
                      d0 + 2 * ox, d0 + 2 * ox + 1, d1 + 2 * ox, d1 + 2 * ox + 1);
    std::fill(d0 + 2 * g.ow, d0 + g.w, T(0));
    std::fill(d1 + 2 * g.ow, d1 + g.w, T(0));
  }
  std::fill(dx + 2 * g.oh * g.w, dx + g.h * g.w, T(0));
}

}  // namespace ops_nn
