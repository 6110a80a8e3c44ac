// interp3d.h: the 5-D interpolations of Paddle's v2 interp family, trilinear_interp_v2 and
// nearest_interp_v2 on X [N, C, D, H, W] (data_layout NCDHW, or NCHW as PIR writes it for 5-D too)
// or [N, D, H, W, C] (NDHWC / NHWC), as Paddle's Interpolate3D kernels: Out's (d, h, w) from
// SizeTensor (3 one-element tensors) over OutSize (3 values) over X's size times Scale (a tensor
// of 1 or 3 values) or the scale attribute ([s] or [d, h, w]; each > 0) over out_d / out_h /
// out_w. Per axis the source step is 1 / scale where a scale is given, else in / out ((in - 1) /
// (out - 1) with align_corners); Out of X's size is X. The taps per axis are the 2-D interps'
// (tide/ops/interp_pad2d.hpp: linear with align_mode, nearest), applied along each of d, h, w.
#pragma once

#include <string>
#include <tide/ops/interp_pad2d.hpp>
#include <vector>

#include "common.h"

namespace ops_nn {

struct Interp3dGeom {
  int64_t n, c;
  int64_t in[3], out[3];
  double ratio[3];
  bool last;  // channel last
  int64_t XAt(int64_t b, int64_t ch, int64_t z, int64_t y, int64_t x) const {
    const int64_t cell = (z * in[1] + y) * in[2] + x, vol = in[0] * in[1] * in[2];
    return last ? (b * vol + cell) * c + ch : (b * c + ch) * vol + cell;
  }
  int64_t OutAt(int64_t b, int64_t ch, int64_t z, int64_t y, int64_t x) const {
    const int64_t cell = (z * out[1] + y) * out[2] + x, vol = out[0] * out[1] * out[2];
    return last ? (b * vol + cell) * c + ch : (b * c + ch) * vol + cell;
  }
  Dims OutDims() const {
    return last ? Dims{n, out[0], out[1], out[2], c} : Dims{n, c, out[0], out[1], out[2]};
  }
};

// data_layout of a 5-D interp: channel first (NCDHW, or NCHW as PIR writes it) or last.
template <typename Ctx>
bool Interp3dChannelLast(const Ctx& ctx) {
  const std::string f = ctx.template Attr<std::string>("data_layout");
  TIDE_CHECK(f == "NCDHW" || f == "NDHWC" || f == "NCHW" || f == "NHWC", "op '", ctx.op_type(),
             "': data_layout of a 5-D X must be NCDHW or NDHWC, got '", f, "'");
  return f == "NDHWC" || f == "NHWC";
}

// The scale attribute as (d, h, w) scales: [] none, [s] for all, [d, h, w]; none unless all > 0.
inline void Interp3dScaleList(const char* op, const std::vector<float>& v, float* scale) {
  TIDE_CHECK(v.empty() || v.size() == 1 || v.size() == 3, "op '", op,
             "': scale of a 5-D X needs 0, 1 or 3 values (d, h, w), got ", v.size());
  for (int a = 0; a < 3; ++a) scale[a] = v.empty() ? 0.f : v.size() == 1 ? v[0] : v[a];
  if (scale[0] <= 0 || scale[1] <= 0 || scale[2] <= 0) scale[0] = scale[1] = scale[2] = 0;
}

// X's geometry and Out's size. At build time (`ctx` an InferShapeContext: no tensors to read)
// a size input leaves the sizes unknown (-1); at run time `values` / `scalars` / `reals` read
// OutSize, SizeTensor and Scale (all of a tensor's values, one per variable, a float tensor's).
template <typename Ctx, typename Values, typename Scalars, typename Reals>
Interp3dGeom GetInterp3dGeom(const Ctx& ctx, const Dims& x, bool run_time, Values values,
                             Scalars scalars, Reals reals) {
  const char* op = ctx.op_type();
  TIDE_CHECK(x.size() == 5, "op '", op, "': X must be 5-D, got ", tide::ToString(x));
  Interp3dGeom g;
  g.last = Interp3dChannelLast(ctx);
  g.n = x[0];
  g.c = g.last ? x[4] : x[1];
  for (int a = 0; a < 3; ++a) g.in[a] = x[(g.last ? 1 : 2) + a];
  const char* attrs[3] = {"out_d", "out_h", "out_w"};
  for (int a = 0; a < 3; ++a) g.out[a] = ctx.template Attr<int32_t>(attrs[a]);
  float scale[3] = {0, 0, 0};
  const char* from = "out_d/out_h/out_w";
  const bool size_input = ctx.HasInput("SizeTensor") || ctx.HasInput("OutSize");
  if (ctx.HasInput("Scale")) {
    if (run_time) {
      const std::vector<double> v = reals("Scale");
      TIDE_CHECK(v.size() == 1 || v.size() == 3, "op '", op,
                 "': Scale must hold 1 or 3 values (d, h, w), got ", v.size());
      Interp3dScaleList(op, std::vector<float>(v.begin(), v.end()), scale);
    }
    from = "Scale";
  } else {
    Interp3dScaleList(op, ctx.template Attr<std::vector<float>>("scale"), scale);
    if (scale[0] > 0) from = "scale";
  }
  if (ctx.HasInput("Scale") && !run_time) {
    g.out[0] = g.out[1] = g.out[2] = -1;
  } else if (scale[0] > 0) {
    for (int a = 0; a < 3; ++a)
      g.out[a] = g.in[a] < 0 ? -1 : static_cast<int64_t>(static_cast<float>(g.in[a]) * scale[a]);
  }
  if (size_input) {
    from = ctx.HasInput("SizeTensor") ? "SizeTensor" : "OutSize";
    if (!run_time) {
      g.out[0] = g.out[1] = g.out[2] = -1;
    } else {
      const std::vector<int64_t> v =
          ctx.HasInput("SizeTensor") ? scalars("SizeTensor") : values("OutSize");
      TIDE_CHECK(v.size() == 3, "op '", op, "': ", from,
                 " must give 3 values (d, h, w) for a 5-D X, got ", v.size());
      for (int a = 0; a < 3; ++a) g.out[a] = v[a];
    }
  }
  for (int a = 0; a < 3; ++a)
    TIDE_CHECK(run_time ? g.out[a] > 0 : g.out[a] > 0 || g.out[a] == -1, "op '", op,
               "': the output size must be positive (from ", from, "), got ", g.out[0], " x ",
               g.out[1], " x ", g.out[2]);
  if (!run_time) return g;
  TIDE_CHECK(g.n * g.c == 0 || (g.in[0] > 0 && g.in[1] > 0 && g.in[2] > 0), "op '", op, "': X ",
             tide::ToString(x), " has no cells to interpolate");
  const bool ac = ctx.template Attr<bool>("align_corners");
  const bool same = g.out[0] == g.in[0] && g.out[1] == g.in[1] && g.out[2] == g.in[2];
  for (int a = 0; a < 3; ++a)
    g.ratio[a] = same ? 1.0 : tide::ops::InterpRatioV2(g.in[a], g.out[a], ac, scale[a]);
  return g;
}

// Out (or, kGrad, X@GRAD from Out@GRAD) of a 5-D interp whose taps along each axis are `taps[a]`
// (k source indices idx and weights w per output index).
template <typename T, bool kGrad, typename Taps>
void Interp3dLoop(const Interp3dGeom& g, const Taps* taps, const T* in, T* out) {
  const int kd = taps[0].k, kh = taps[1].k, kw = taps[2].k;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t i = 0; i < g.out[0]; ++i)
        for (int64_t j = 0; j < g.out[1]; ++j)
          for (int64_t l = 0; l < g.out[2]; ++l) {
            const int64_t oi = g.OutAt(b, c, i, j, l);
            const int64_t* zs = &taps[0].idx[i * kd];
            const int64_t* ys = &taps[1].idx[j * kh];
            const int64_t* xs = &taps[2].idx[l * kw];
            const double* wz = &taps[0].w[i * kd];
            const double* wy = &taps[1].w[j * kh];
            const double* wx = &taps[2].w[l * kw];
            double acc = 0;
            const double gv = kGrad ? double(in[oi]) : 0.0;
            for (int p = 0; p < kd; ++p)
              for (int q = 0; q < kh; ++q)
                for (int r = 0; r < kw; ++r) {
                  const int64_t xi = g.XAt(b, c, zs[p], ys[q], xs[r]);
                  const double wt = wz[p] * wy[q] * wx[r];
                  if constexpr (kGrad)
                    out[xi] += static_cast<T>(gv * wt);
                  else
                    acc += wt * in[xi];
                }
            if constexpr (!kGrad) out[oi] = static_cast<T>(acc);
          }
}

}  // namespace ops_nn
