// conv3d_geom.h: the geometry of conv3d and conv3d_transpose (Paddle's): Input [N, C, D, H, W],
// Filter [M, C / groups, kd, kh, kw] (conv3d) or [C, M / groups, kd, kh, kw] (the transpose),
// strides / dilations of 3 values, paddings of 3 (d, h, w) or 6 (front, back, top, bottom, left,
// right), padding_algorithm EXPLICIT / SAME / VALID (tide/ops/conv.hpp's rules per axis). As for
// conv2d_transpose, the transpose is the Input gradient of the conv3d that takes its Output back
// to its Input, so one Conv3dGeom, that conv's, describes both.
#pragma once

#include <string>
#include <tide/ops/conv.hpp>
#include <vector>

#include "common.h"

namespace ops_nn {

struct Conv3dGeom {
  int64_t n, c, m, groups;     // batch, Input channels, Output channels, channel groups
  int64_t in[3], out[3];       // spatial sizes (d, h, w) of Input and Output
  int64_t k[3], s[3], dil[3];  // filter window, strides, dilations
  int64_t pb[3], pe[3];        // paddings before and after
  int64_t in_vol() const { return in[0] * in[1] * in[2]; }
  int64_t out_vol() const { return out[0] * out[1] * out[2]; }
  int64_t k_vol() const { return k[0] * k[1] * k[2]; }
  Dims in_dims() const { return {n, c, in[0], in[1], in[2]}; }
  Dims out_dims() const { return {n, m, out[0], out[1], out[2]}; }
  // A 1x1x1 filter at stride 1 without padding: the columns are the input itself.
  bool pointwise() const {
    for (int a = 0; a < 3; ++a)
      if (k[a] != 1 || s[a] != 1 || pb[a] != 0 || pe[a] != 0) return false;
    return true;
  }
};

// paddings of 3 (d, h, w) or 6 (front, back, top, bottom, left, right) values as before / after.
inline void SixPaddings(const char* op, const std::vector<int32_t>& p, int64_t* pb, int64_t* pe) {
  TIDE_CHECK(p.size() == 3 || p.size() == 6, "op '", op,
             "': attribute 'paddings' needs 3 values (d, h, w) or 6 (front, back, top, bottom, "
             "left, right), got ",
             p.size());
  for (int a = 0; a < 3; ++a) {
    pb[a] = p.size() == 3 ? p[a] : p[2 * a];
    pe[a] = p.size() == 3 ? p[a] : p[2 * a + 1];
    TIDE_CHECK(pb[a] >= 0 && pe[a] >= 0, "op '", op, "': paddings must be >= 0, got ", pb[a],
               " and ", pe[a], " on spatial axis ", a);
  }
}

// The filter window from the attributes and the Filter dims [*, *, kd, kh, kw]; returns
// padding_algorithm, which the caller applies to the size it pads (SAME is never dilated).
template <typename Ctx>
std::string ReadConv3dWindow(const Ctx& ctx, const char* op, const Dims& f, Conv3dGeom* g) {
  const auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  const auto dils = ctx.template Attr<std::vector<int32_t>>("dilations");
  TIDE_CHECK(strides.size() == 3, "op '", op, "': strides needs 3 values (d, h, w), got ",
             strides.size());
  TIDE_CHECK(dils.size() == 3, "op '", op, "': dilations needs 3 values (d, h, w), got ",
             dils.size());
  SixPaddings(op, ctx.template Attr<std::vector<int32_t>>("paddings"), g->pb, g->pe);
  g->groups = ctx.template Attr<int32_t>("groups");
  TIDE_CHECK(g->groups >= 1, "op '", op, "': groups must be >= 1, got ", g->groups);
  const std::string algo = tide::ops::PaddingAlgorithm(ctx, op);
  for (int a = 0; a < 3; ++a) {
    g->k[a] = f[2 + a];
    g->s[a] = strides[a];
    g->dil[a] = algo == "SAME" ? 1 : dils[a];
    TIDE_CHECK(g->s[a] > 0 && g->dil[a] > 0, "op '", op,
               "': strides and dilations must be > 0, got ", g->s[a], " and ", g->dil[a],
               " on spatial axis ", a);
  }
  return algo;
}

// conv3d: Input x and Filter f in NCDHW (unknown dims -1 allowed at compile time).
template <typename Ctx>
Conv3dGeom GetConv3dGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 5, "op '", op, "': Input must be 5-D [N, C, D, H, W], got ",
             tide::ToString(x));
  TIDE_CHECK(f.size() == 5, "op '", op, "': Filter must be 5-D [M, C/groups, kd, kh, kw], got ",
             tide::ToString(f));
  Conv3dGeom g{};
  const std::string algo = ReadConv3dWindow(ctx, op, f, &g);
  g.n = x[0];
  g.c = x[1];
  g.m = f[0];
  TIDE_CHECK(g.c < 0 || f[1] < 0 || g.c == f[1] * g.groups, "op '", op, "': Input ",
             tide::ToString(x), " has ", g.c, " channels but Filter ", tide::ToString(f),
             " expects C/groups = ", f[1], " with groups = ", g.groups);
  TIDE_CHECK(g.m < 0 || g.m % g.groups == 0, "op '", op, "': Filter ", tide::ToString(f), " has ",
             g.m, " output channels, not divisible by groups = ", g.groups);
  for (int a = 0; a < 3; ++a) {
    g.in[a] = x[2 + a];
    tide::ops::ApplyPaddingAlgorithm(algo, g.in[a], g.k[a], g.s[a], &g.pb[a], &g.pe[a]);
    g.out[a] = tide::ops::ConvOutSize(g.in[a], g.k[a], g.pb[a], g.pe[a], g.s[a], g.dil[a]);
    TIDE_CHECK(g.in[a] < 0 || g.out[a] > 0, "op '", op, "': the output would be empty: Input ",
               tide::ToString(x), ", Filter ", tide::ToString(f), " give output size ", g.out[a],
               " on spatial axis ", a);
  }
  return g;
}

// conv3d_transpose: the conv3d whose Input gradient it is. Its c / in are the transpose's Output
// channels and size, its m / out the transpose's Input's.
template <typename Ctx>
Conv3dGeom GetConv3dTransposeGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 5, "op '", op, "': Input must be 5-D [N, C, D, H, W], got ",
             tide::ToString(x));
  TIDE_CHECK(f.size() == 5, "op '", op, "': Filter must be 5-D [C, M/groups, kd, kh, kw], got ",
             tide::ToString(f));
  const auto out_pad = ctx.template Attr<std::vector<int32_t>>("output_padding");
  const auto out_size = ctx.template Attr<std::vector<int32_t>>("output_size");
  TIDE_CHECK(out_pad.empty() || out_pad.size() == 3, "op '", op,
             "': output_padding needs 0 or 3 values (d, h, w), got ", out_pad.size());
  TIDE_CHECK(out_size.empty() || out_size.size() == 3, "op '", op,
             "': output_size needs 0 or 3 values (d, h, w), got ", out_size.size());
  Conv3dGeom g{};
  const std::string algo = ReadConv3dWindow(ctx, op, f, &g);
  TIDE_CHECK(x[1] < 0 || f[0] < 0 || x[1] == f[0], "op '", op, "': Input ", tide::ToString(x),
             " has ", x[1], " channels but Filter ", tide::ToString(f), " is for ", f[0]);
  TIDE_CHECK(f[0] < 0 || f[0] % g.groups == 0, "op '", op, "': Filter ", tide::ToString(f), " has ",
             f[0], " input channels, not divisible by groups = ", g.groups);
  g.n = x[0];
  g.m = x[1];
  g.c = f[1] < 0 ? -1 : f[1] * g.groups;
  for (int a = 0; a < 3; ++a) {
    g.out[a] = x[2 + a];
    // Paddle computes SAME / VALID paddings from the transpose's Input size.
    tide::ops::ApplyPaddingAlgorithm(algo, g.out[a], g.k[a], g.s[a], &g.pb[a], &g.pe[a]);
    if (g.out[a] < 0) {
      g.in[a] = -1;
      continue;
    }
    const int64_t base = (g.out[a] - 1) * g.s[a] - g.pb[a] - g.pe[a] + g.dil[a] * (g.k[a] - 1) + 1;
    g.in[a] = base;
    if (!out_size.empty()) {
      TIDE_CHECK(out_size[a] >= base && out_size[a] < base + g.s[a], "op '", op, "': output_size[",
                 a, "] = ", out_size[a], " must be in [", base, ", ", base + g.s[a], ") for Input ",
                 tide::ToString(x), " and Filter ", tide::ToString(f));
      g.in[a] = out_size[a];
    } else if (!out_pad.empty()) {
      TIDE_CHECK(out_pad[a] >= 0 && out_pad[a] < std::max(g.s[a], g.dil[a]), "op '", op,
                 "': output_padding[", a, "] = ", out_pad[a],
                 " must be >= 0 and below max(stride, dilation) = ", std::max(g.s[a], g.dil[a]));
      g.in[a] = base + out_pad[a];
    }
    TIDE_CHECK(g.in[a] > 0, "op '", op, "': the output would be empty: Input ", tide::ToString(x),
               ", Filter ", tide::ToString(f), " give size ", g.in[a], " on spatial axis ", a);
  }
  return g;
}

}  // namespace ops_nn
