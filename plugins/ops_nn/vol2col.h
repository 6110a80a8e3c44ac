// vol2col.h: the volumetric convolution by columns + GEMM (tide/gemm.hpp, as conv2d's plain
// path): Vol2Col lays out each filter tap's input cells as a row of the columns [C * kd * kh * kw,
// od * oh * ow], so a conv3d is F_g [M / groups, C / groups * kvol] times the group's columns;
// Col2Vol is its adjoint (the backward's Input@GRAD, and conv3d_transpose's forward). NCDHW data,
// one image at a time (the GEMMs split themselves over the CPU pool when large).
#pragma once

#include <algorithm>
#include <cstdint>

#include "conv3d_geom.h"
#include "gemm.h"

namespace ops_nn {

// Calls visit(dst_row, src_plane_row or nullptr, x0_offset) for every output row (z, y) of tap
// (i, j, l): the input row it reads, or nullptr where the tap falls in the padding.
template <typename Visit>
void ForEachTapRow(const Conv3dGeom& g, int64_t i, int64_t j, Visit visit) {
  for (int64_t z = 0; z < g.out[0]; ++z) {
    const int64_t zz = z * g.s[0] - g.pb[0] + i * g.dil[0];
    const bool z_in = zz >= 0 && zz < g.in[0];
    for (int64_t y = 0; y < g.out[1]; ++y) {
      const int64_t yy = y * g.s[1] - g.pb[1] + j * g.dil[1];
      const bool in = z_in && yy >= 0 && yy < g.in[1];
      visit((z * g.out[1] + y) * g.out[2], in ? (zz * g.in[1] + yy) * g.in[2] : int64_t(-1));
    }
  }
}

// col [C * kvol, ovol] <- the columns of one image x [C, D, H, W].
template <typename T>
void Vol2Col(const Conv3dGeom& g, const T* x, T* col) {
  const int64_t ivol = g.in_vol(), ovol = g.out_vol(), ow = g.out[2], iw = g.in[2];
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.k[0]; ++i)
      for (int64_t j = 0; j < g.k[1]; ++j)
        for (int64_t l = 0; l < g.k[2]; ++l) {
          T* dst = col + (((c * g.k[0] + i) * g.k[1] + j) * g.k[2] + l) * ovol;
          const T* src = x + c * ivol;
          const int64_t x0 = l * g.dil[2] - g.pb[2];
          ForEachTapRow(g, i, j, [&](int64_t d, int64_t s) {
            for (int64_t o = 0; o < ow; ++o) {
              const int64_t xx = o * g.s[2] + x0;
              dst[d + o] = s >= 0 && xx >= 0 && xx < iw ? src[s + xx] : T(0);
            }
          });
        }
}

// The adjoint of Vol2Col: dx [C, D, H, W] += the columns' cells where they were read.
template <typename T>
void Col2Vol(const Conv3dGeom& g, const T* col, T* dx) {
  const int64_t ivol = g.in_vol(), ovol = g.out_vol(), ow = g.out[2], iw = g.in[2];
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.k[0]; ++i)
      for (int64_t j = 0; j < g.k[1]; ++j)
        for (int64_t l = 0; l < g.k[2]; ++l) {
          const T* src = col + (((c * g.k[0] + i) * g.k[1] + j) * g.k[2] + l) * ovol;
          T* dst = dx + c * ivol;
          const int64_t x0 = l * g.dil[2] - g.pb[2];
          ForEachTapRow(g, i, j, [&](int64_t d, int64_t s) {
            if (s < 0) return;
            for (int64_t o = 0; o < ow; ++o) {
              const int64_t xx = o * g.s[2] + x0;
              if (xx >= 0 && xx < iw) dst[s + xx] += src[d + o];
            }
          });
        }
}

// out [N, M, od, oh, ow] = conv3d of x [N, C, D, H, W] by f [M, C / groups, kd, kh, kw].
template <typename T>
void Conv3dForwardNcdhw(const KernelContext& ctx, const Conv3dGeom& g, const T* x, const T* f,
                        T* out) {
  const int64_t mg = g.m / g.groups, k = g.c / g.groups * g.k_vol();
  const int64_t ovol = g.out_vol(), chw = g.c * g.in_vol();
  if (g.n * g.m * ovol == 0) return;
  const bool pointwise = g.pointwise();
  T* col = pointwise ? nullptr : ctx.TempBuffer<T>(static_cast<size_t>(g.c * g.k_vol() * ovol));
  for (int64_t n = 0; n < g.n; ++n) {
    const T* cols = x + n * chw;
    if (!pointwise) {
      Vol2Col(g, cols, col);
      cols = col;
    }
    for (int64_t gi = 0; gi < g.groups; ++gi)
      Gemm<T>(ctx, false, false, mg, ovol, k, T(1), f + gi * mg * k, cols + gi * k * ovol, T(0),
              out + (n * g.m + gi * mg) * ovol);
  }
}

// dx = Input@GRAD and df = Filter@GRAD (either may be null: not computed; x is read only for
// df) of the conv3d of x by f, from gd [N, M, od, oh, ow] = Output@GRAD.
template <typename T>
void Conv3dBackwardNcdhw(const KernelContext& ctx, const Conv3dGeom& g, const T* x, const T* f,
                         const T* gd, T* dx, T* df) {
  const int64_t mg = g.m / g.groups, k = g.c / g.groups * g.k_vol();
  const int64_t ovol = g.out_vol(), chw = g.c * g.in_vol();
  const bool pointwise = g.pointwise();
  if (df) std::fill(df, df + g.m * k, T(0));
  if (dx && !pointwise) std::fill(dx, dx + g.n * chw, T(0));  // Col2Vol adds
  if (g.n * g.m * ovol == 0 || (!dx && !df)) return;
  T* col = pointwise ? nullptr : ctx.TempBuffer<T>(static_cast<size_t>(g.c * g.k_vol() * ovol));
  for (int64_t n = 0; n < g.n; ++n) {
    const T* gb = gd + n * g.m * ovol;
    if (df) {  // dF_g += dOut_g [mg, ovol] * col_g^T [ovol, k]
      const T* cols = x + n * chw;
      if (!pointwise) {
        Vol2Col(g, cols, col);
        cols = col;
      }
      for (int64_t gi = 0; gi < g.groups; ++gi)
        Gemm<T>(ctx, false, true, mg, k, ovol, T(1), gb + gi * mg * ovol, cols + gi * k * ovol,
                T(1), df + gi * mg * k);
    }
    if (dx) {  // dcol_g = F_g^T [k, mg] * dOut_g [mg, ovol], then Col2Vol
      T* dcol = pointwise ? dx + n * chw : col;
      for (int64_t gi = 0; gi < g.groups; ++gi)
        Gemm<T>(ctx, true, false, k, ovol, mg, T(1), f + gi * mg * k, gb + gi * mg * ovol, T(0),
                dcol + gi * k * ovol);
      if (!pointwise) Col2Vol(g, col, dx + n * chw);
    }
  }
}

}  // namespace ops_nn
