// tide/kernels/pool.hpp: the plain CPU kernel of pool2d (max / avg over NCHW windows, or NHWC
// ones on transposed copies; global, ceil_mode, exclusive, adaptive, padding_algorithm), with
// Fluid 1.x window rules (tide/ops/pool.hpp): a window is clipped to the image (padding never wins
// a max); an exclusive avg divides by the clipped window's size, a non-exclusive one by kh * kw.
// Max over 2x2 windows at stride 2 (LeNet's, VGG's) takes its own loops, as straight loops over
// row pairs that the compiler vectorises, with the same results bit for bit (the same comparisons
// in the same order); any other max pool goes by rows (MaxPoolRowsPlane). Header-only: ops_nn
// registers it, and a compiled model (tide.aot.compile) calls it directly
// (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_POOL_HPP_
#define TIDE_KERNELS_POOL_HPP_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tide/eigen.hpp>
#include <tide/kernels/layout.hpp>
#include <tide/ops/pool.hpp>
#include <tide/plugin.hpp>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tide {
namespace kernels {

// Out@GRAD's share of each cell of one window (a, b on the top row, c, d below): all of it to
// the first maximum in scan order (the reference keeps the first cell unless a later one is
// strictly greater), 0 to the others. `go` is 0 + Out@GRAD, as the reference adds it to a zeroed
// dx (-0 becomes +0 there too).
template <typename T>
inline void MaxPool2x2Route(T a, T b, T c, T d, T go, T* da, T* db, T* dc, T* dd) {
  const bool win_b = b > a;
  const T ab = win_b ? b : a;
  const bool win_c = c > ab;
  const bool win_d = d > (win_c ? c : ab);
  *dd = win_d ? go : T(0);
  *dc = win_c && !win_d ? go : T(0);
  *db = win_b && !win_c && !win_d ? go : T(0);
  *da = !win_b && !win_c && !win_d ? go : T(0);
}

#if defined(__SSE2__)
// MaxPool2x2Route on four lanes (SSE2, which every x86-64 has), the comparisons as masks.
struct MaxPool2x2Grads {
  __m128 a, b, c, d;
};
inline MaxPool2x2Grads MaxPool2x2RouteVec(__m128 a, __m128 b, __m128 c, __m128 d, __m128 go) {
  const __m128 win_b = _mm_cmpgt_ps(b, a);
  const __m128 ab = _mm_or_ps(_mm_and_ps(win_b, b), _mm_andnot_ps(win_b, a));
  const __m128 win_c = _mm_cmpgt_ps(c, ab);
  const __m128 abc = _mm_or_ps(_mm_and_ps(win_c, c), _mm_andnot_ps(win_c, ab));
  const __m128 win_d = _mm_cmpgt_ps(d, abc);
  const __m128 v = _mm_add_ps(_mm_setzero_ps(), go);
  const __m128 later = _mm_or_ps(win_c, win_d);  // a later row-1 cell took it
  return {_mm_andnot_ps(_mm_or_ps(later, win_b), v), _mm_andnot_ps(later, _mm_and_ps(win_b, v)),
          _mm_andnot_ps(win_d, _mm_and_ps(win_c, v)), _mm_and_ps(win_d, v)};
}
#endif

// Max pooling, 2x2 windows, stride 2, no padding, none clipped (an odd last row or column is
// outside every window).
inline bool IsMaxPool2x2(const ops::PoolGeom& g) {
  return g.max && !g.adaptive && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 &&
         g.pw == 0 && g.ph_end == 0 && g.pw_end == 0 && 2 * g.oh <= g.h && 2 * g.ow <= g.w;
}

// One window's max (a, b on the top row, c, d below): the running max from lowest() in scan
// order, as ops::PoolPlane takes it.
template <typename T>
inline T MaxPool2x2Max(T a, T b, T c, T d) {
  return std::max(std::max(std::max(std::max(std::numeric_limits<T>::lowest(), a), b), c), d);
}

// ops::PoolPlane for IsMaxPool2x2.
template <typename T>
void MaxPool2x2Plane(const ops::PoolGeom& g, const T* x, T* out) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const T* r0 = x + 2 * oy * g.w;
    const T* r1 = r0 + g.w;
    T* o = out + oy * g.ow;
    for (int64_t ox = 0; ox < g.ow; ++ox)
      o[ox] = MaxPool2x2Max(r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]);
  }
}

// ops::PoolPlane for any other max pool, by rows: a window's rows depend on oy alone and its
// columns on ox alone ([x0[ox], x1[ox]), from MaxPoolColumns), so each output row takes the
// running max of its window's rows for every column (contiguous, vectorised), then of each
// window's columns in that. The same maximum of the same values, NaN ignored as there (from
// lowest()); only which of a tied +0 and -0 comes out may differ. ResNet's 3x3 stride-2 max pool
// at batch 1, 2 threads: 310 us against PoolPlane's 826.
struct MaxPoolColumns {
  std::vector<int64_t> x0, x1;
  explicit MaxPoolColumns(const ops::PoolGeom& g) : x0(g.ow), x1(g.ow) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const ops::PoolWindow win = ops::GetPoolWindow(g, 0, ox);
      x0[ox] = win.x0;
      x1[ox] = std::max(win.x0, win.x1);  // empty where wholly in the padding
    }
  }
};

template <typename T>
void MaxPoolRowsPlane(const ops::PoolGeom& g, const MaxPoolColumns& cols, const T* x, T* out,
                      T* row_max) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const ops::PoolWindow rows = ops::GetPoolWindow(g, oy, 0);
    T* o = out + oy * g.ow;
    if (rows.y1 <= rows.y0) {  // wholly in the padding: 0, as PoolPlane
      std::fill(o, o + g.ow, T(0));
      continue;
    }
    std::fill(row_max, row_max + g.w, std::numeric_limits<T>::lowest());
    for (int64_t y = rows.y0; y < rows.y1; ++y) {
      const T* r = x + y * g.w;
      for (int64_t i = 0; i < g.w; ++i) row_max[i] = std::max(row_max[i], r[i]);
    }
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t b = cols.x0[ox], e = cols.x1[ox];
      T r = e > b ? std::numeric_limits<T>::lowest() : T(0);
      for (int64_t i = b; i < e; ++i) r = std::max(r, row_max[i]);
      o[ox] = r;
    }
  }
}

template <typename T>
void Pool2d(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const bool nhwc = ChannelLast(ctx);
  ops::PoolGeom g = ops::GetPoolGeom(ctx, op, nhwc ? NhwcToNchwDims(x.dims()) : x.dims());
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  T* od = NchwOutput<T>(ctx, out, g.out_dims(), nhwc);
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  const bool max2x2 = IsMaxPool2x2(g);
  const bool by_rows = g.max && !max2x2;
  const MaxPoolColumns cols(by_rows ? g : ops::PoolGeom{});
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    std::vector<T> row_max(by_rows ? static_cast<size_t>(g.w) : 0);
    for (int64_t p = b; p < e; ++p)
      if (max2x2)
        MaxPool2x2Plane(g, xd + p * plane, od + p * oplane);
      else if (by_rows)
        MaxPoolRowsPlane(g, cols, xd + p * plane, od + p * oplane, row_max.data());
      else
        ops::PoolPlane(g, xd + p * plane, od + p * oplane);
  });
  StoreNhwc(ctx, od, out, g.out_dims(), nhwc);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_POOL_HPP_
