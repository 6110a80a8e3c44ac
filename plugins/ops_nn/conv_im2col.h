// conv_im2col.h: the plain convolution's col2im (the backward's adjoint of im2col), beside the
// SDK's tide/kernels/conv_im2col.hpp (im2col and the batch's cut into work, which the forward,
// header-only in tide/kernels/conv.hpp, shares), under this pack's namespace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tide/kernels/conv_im2col.hpp>
#include <tide/ops/conv.hpp>

#include "common.h"

namespace ops_nn {

using tide::kernels::ConvBatchPlan;
using tide::kernels::ForEachChunk;
using tide::kernels::Im2ColImages;
using tide::kernels::ImagesToRows;
using tide::kernels::PlanConvBatch;
using tide::kernels::RowsToImages;

// dst[0, n) += src[0, n), vectorised (the two never overlap: col2im's image and columns).
template <typename T>
inline void AddRow(const T* __restrict src, int64_t n, T* __restrict dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

// The adjoint of Im2Col: dx[c][iy][ix] += col[...] (dx must be zeroed first).
template <typename T>
void Col2Im(const tide::ops::ConvGeom& g, const T* col, int64_t ld, T* dx) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* src = col + ((c * g.kh + i) * g.kw + j) * ld;
        T* dst = dx + c * g.h * g.w;
        const int64_t dxo = j * g.dw - g.pw;
        int64_t ox0, ox1;
        tide::kernels::ColumnsInside(g, dxo, &ox0, &ox1);
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          T* d = dst + iy * g.w;
          const T* s = src + oy * g.ow;
          if (g.sw == 1)
            AddRow(s + ox0, ox1 - ox0, d + ox0 + dxo);
          else
            for (int64_t ox = ox0; ox < ox1; ++ox) d[ox * g.sw + dxo] += s[ox];
        }
      }
}

// The adjoint of Im2ColImages: dx [nb, C, H, W] += col2im of each image's columns.
template <typename T>
void Col2ImImages(const tide::ops::ConvGeom& g, const T* col, int64_t nb, T* dx) {
  const int64_t ohw = g.oh * g.ow, chw = g.c * g.h * g.w;
  for (int64_t i = 0; i < nb; ++i) Col2Im(g, col + i * ohw, nb * ohw, dx + i * chw);
}

}  // namespace ops_nn
