// pool_nd.h: the window loop of Paddle's volumetric pools (pool3d, max_pool3d_with_index) and of
// max_pool2d_with_index, one geometry for both ranks: a 2-D pool is a 3-D one of depth 1. Each
// spatial axis (PoolAxis) maps output index i to its input window [b, e): adaptive windows split
// the input evenly ([floor(i in / out), ceil((i + 1) in / out))), the others start at i * stride -
// pad_begin, clipped to the input (padding never wins a max). An exclusive or adaptive avg divides
// by the clipped window's cells, a non-exclusive one by the cells inside the padded input (Paddle
// 3's rule: a ceil_mode window past the end pads no further). pool2d keeps its own kernels
// (tide/kernels/pool.hpp, Fluid 1.x's rules, benchmarked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common.h"

namespace ops_nn {

struct PoolAxis {
  int64_t in = 1, out = 1, k = 1, s = 1, pb = 0, pe = 0;
  bool adaptive = false;
  // The window of output index i: [*b, *e) inside the input, and *span, its cells inside the
  // padded input (the non-exclusive divisor).
  void Window(int64_t i, int64_t* b, int64_t* e, int64_t* span) const {
    if (adaptive) {
      *b = i * in / out;
      *e = ((i + 1) * in + out - 1) / out;
      *span = *e - *b;
      return;
    }
    const int64_t start = i * s - pb;
    const int64_t end = std::min(start + k, in + pb);
    *span = end - start;
    *b = std::max<int64_t>(start, 0);
    *e = std::min(end, in);
  }
};

// One spatial output size (Paddle's): -1 when the input size is unknown (compile time).
inline int64_t PoolNdOutSize(int64_t in, int64_t k, int64_t pb, int64_t pe, int64_t s,
                             bool ceil_mode) {
  if (in < 0) return -1;
  const int64_t span = in - k + pb + pe;
  return (ceil_mode ? span + s - 1 : span) / s + 1;
}

// X [n, c, d, h, w] pooled to [n, c, od, oh, ow] (a 2-D pool: d = od = 1).
struct PoolNdGeom {
  int64_t n = 0, c = 0;
  int rank = 3;    // spatial dims of X: 2 or 3
  PoolAxis ax[3];  // depth, height, width
  int64_t in_vol() const { return ax[0].in * ax[1].in * ax[2].in; }
  int64_t out_vol() const { return ax[0].out * ax[1].out * ax[2].out; }
  Dims out_dims() const {
    Dims d{n, c};
    for (int a = 3 - rank; a < 3; ++a) d.push_back(ax[a].out);
    return d;
  }
};

// The spatial dims of NC... dims x as a PoolNdGeom's axes (in only), checking the rank.
inline PoolNdGeom PoolNdInput(const char* op, const Dims& x, int rank) {
  TIDE_CHECK(static_cast<int>(x.size()) == rank + 2, "op '", op, "': X must be ", rank + 2,
             rank == 3 ? "-D [N, C, D, H, W]" : "-D [N, C, H, W]", ", got ", tide::ToString(x));
  PoolNdGeom g;
  g.rank = rank;
  g.n = x[0];
  g.c = x[1];
  for (int a = 0; a < rank; ++a) g.ax[3 - rank + a].in = x[2 + a];
  return g;
}

// Calls visit(out_index, window) for every output cell of one plane, window = {b[3], e[3], size}
// with size the avg divisor (clipped cells when `exclusive`, else the padded span).
struct PoolNdWindow {
  int64_t b[3], e[3];
  int64_t clipped, span;
};
template <typename Visit>
void ForEachPoolWindow(const PoolNdGeom& g, Visit visit) {
  PoolNdWindow win;
  int64_t o = 0, sd, sh, sw;
  for (int64_t z = 0; z < g.ax[0].out; ++z) {
    g.ax[0].Window(z, &win.b[0], &win.e[0], &sd);
    for (int64_t y = 0; y < g.ax[1].out; ++y) {
      g.ax[1].Window(y, &win.b[1], &win.e[1], &sh);
      for (int64_t x = 0; x < g.ax[2].out; ++x, ++o) {
        g.ax[2].Window(x, &win.b[2], &win.e[2], &sw);
        win.clipped = 1;
        for (int a = 0; a < 3; ++a) win.clipped *= std::max<int64_t>(win.e[a] - win.b[a], 0);
        win.span = sd * sh * sw;
        visit(o, win);
      }
    }
  }
}

// Calls cell(flat input index) for each cell of the window, in scan order.
template <typename Cell>
void ForEachWindowCell(const PoolNdGeom& g, const PoolNdWindow& win, Cell cell) {
  for (int64_t z = win.b[0]; z < win.e[0]; ++z)
    for (int64_t y = win.b[1]; y < win.e[1]; ++y) {
      const int64_t row = (z * g.ax[1].in + y) * g.ax[2].in;
      for (int64_t x = win.b[2]; x < win.e[2]; ++x) cell(row + x);
    }
}

// The first maximum of the window in scan order and its flat index (-1, lowest() when empty).
template <typename T>
std::pair<T, int64_t> WindowMax(const PoolNdGeom& g, const PoolNdWindow& win, const T* x) {
  T best = std::numeric_limits<T>::lowest();
  int64_t at = -1;
  ForEachWindowCell(g, win, [&](int64_t i) {
    if (best < x[i]) {
      best = x[i];
      at = i;
    }
  });
  return {best, at};
}

}  // namespace ops_nn
