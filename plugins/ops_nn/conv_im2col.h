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

using tide::kernels::AddShortRow;
using tide::kernels::ConvBatchPlan;
using tide::kernels::ForEachChunk;
using tide::kernels::Im2ColImages;
using tide::kernels::ImagesToRows;
using tide::kernels::PlanConvBatch;
using tide::kernels::RowsToImages;

// The adjoint of Im2Col: dx[c][iy][ix] += col[...] (dx must be zeroed first).
template <typename T>
void Col2Im(const tide::ops::ConvGeom& g, const T* col, int64_t ld, T* dx) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t dy = i * g.dh - g.ph;
      int64_t oy0, oy1;
      tide::kernels::RowsInside(g, dy, &oy0, &oy1);
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* src = col + ((c * g.kh + i) * g.kw + j) * ld;
        const int64_t dxo = j * g.dw - g.pw;
        int64_t ox0, ox1;
        tide::kernels::ColumnsInside(g, dxo, &ox0, &ox1);
        T* dst = dx + c * g.h * g.w + dxo;  // dst[(oy*sh + dy) * w + ox*sw] is dx[iy][ix]
        if (g.sw == 1) {
          for (int64_t oy = oy0; oy < oy1; ++oy)
            AddShortRow(src + oy * g.ow + ox0, ox1 - ox0, dst + (oy * g.sh + dy) * g.w + ox0);
        } else {
          for (int64_t oy = oy0; oy < oy1; ++oy) {
            T* d = dst + (oy * g.sh + dy) * g.w;
            for (int64_t ox = ox0; ox < ox1; ++ox) d[ox * g.sw] += src[oy * g.ow + ox];
          }
        }
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
