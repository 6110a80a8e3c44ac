// conv_backward_data.h: Input@GRAD of a "same"-padded stride-1 float32 convolution as a forward
// convolution (tide/kernels/conv_winograd.hpp or conv_direct.hpp): Output@GRAD convolved with
// the filter turned 180 degrees and its channels swapped, padded kh - 1 - ph. conv2d_grad runs it
// in place of a GEMM and col2im (conv_gemm.h) where the forward kernels take the shape and the
// padding adds no positions the GEMM does not compute (kh - 1 - ph <= ph, as for a 3x3 filter
// padded 1).
#pragma once

#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/kernels/conv_direct.hpp>
#include <tide/kernels/conv_winograd.hpp>
#include <tide/ops/conv.hpp>
#include <type_traits>

namespace ops_nn {

// The filter is turned and packed (or transformed) on every run, which the direct kernel pays
// back only over many positions: ResNet-50's [256, 256] 3x3 at 14x14, batch 1, took 1.2x the
// GEMM's time by the direct kernel; at batch 8 the 56x56 and 28x28 ones (Winograd) took 0.7x and
// 0.88x.
constexpr int64_t kBackwardDirectMinPositions = 4096;

// The forward conv whose output is Input@GRAD of g's conv; false (`b` unset) where there is none.
inline bool BackwardDataGeom(const tide::ops::ConvGeom& g, tide::ops::ConvGeom* b) {
  if (g.groups != 1 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1) return false;
  tide::ops::ConvGeom r = g;
  r.c = g.m;
  r.m = g.c;
  r.h = g.oh;
  r.w = g.ow;
  r.oh = g.h;
  r.ow = g.w;
  r.ph = g.kh - 1 - g.ph;
  r.ph_end = g.kh - 1 - g.ph_end;
  r.pw = g.kw - 1 - g.pw;
  r.pw_end = g.kw - 1 - g.pw_end;
  if (r.ph < 0 || r.ph_end < 0 || r.pw < 0 || r.pw_end < 0) return false;
  if (r.ph > g.ph || r.ph_end > g.ph_end || r.pw > g.pw || r.pw_end > g.pw_end) return false;
  *b = r;
  return true;
}

// dxd [n, c, h, w] = Input@GRAD from gd [n, m, oh, ow] = Output@GRAD and the filter fd; false
// (nothing written) where the forward kernels do not take it.
inline bool ConvInputGradByForwardF32(const tide::KernelContext& ctx, const tide::ops::ConvGeom& g,
                                      const float* fd, const float* gd, float* dxd) {
  namespace k = tide::kernels;
  tide::ops::ConvGeom b;
  const k::DirectConvIsa* isa = k::DirectConvForCpu();
  if (!isa || !BackwardDataGeom(g, &b)) return false;
  const bool winograd = k::WinogradFits(b);
  const bool direct = k::DirectConvFits(b) && b.n * b.oh * b.ow >= kBackwardDirectMinPositions;
  if (!winograd && !direct) return false;
  // The filter [m, c, kh, kw] as [c, m, kh, kw], each kh x kw turned 180 degrees.
  const int64_t taps = g.kh * g.kw;
  float* flipped = ctx.TempBuffer<float>(static_cast<size_t>(g.c * g.m * taps));
  tide::ParallelFor(ctx, g.c, g.m * taps, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t m = 0; m < g.m; ++m)
        for (int64_t t = 0; t < taps; ++t)
          flipped[(c * g.m + m) * taps + t] = fd[(m * g.c + c) * taps + taps - 1 - t];
  });
  if (winograd)
    k::ConvForwardWinograd(ctx, *isa, b, gd, k::WinogradFilterForRun(ctx, b, flipped), nullptr,
                           nullptr, false, dxd);
  else
    k::ConvForwardDirect(ctx, *isa, b, gd, k::PackConvFilterForRun(ctx, *isa, b, flipped), nullptr,
                         nullptr, false, dxd);
  return true;
}

template <typename T>
bool ConvInputGradByForward(const tide::KernelContext& ctx, const tide::ops::ConvGeom& g,
                            const T* fd, const T* gd, T* dxd) {
  if constexpr (std::is_same_v<T, float>)
    return ConvInputGradByForwardF32(ctx, g, fd, gd, dxd);
  else
    return false;
}

}  // namespace ops_nn
