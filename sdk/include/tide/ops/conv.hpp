// tide/ops/conv.hpp: conv2d / depthwise_conv2d geometry (NCHW Input, [M, C/groups, kh, kw]
// Filter, strides, paddings, dilations, groups) and its checks, for every conv implementation.
#ifndef TIDE_OPS_CONV_HPP_
#define TIDE_OPS_CONV_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

struct ConvGeom {
  int64_t n, c, h, w;  // Input
  int64_t m, kh, kw;   // Filter [m, c / groups, kh, kw]
  int64_t oh, ow;      // Output spatial dims
  int64_t sh, sw, ph, pw, dh, dw, groups;
  Dims out_dims() const { return {n, m, oh, ow}; }  // Output
};

// One spatial output size; -1 when the input size is unknown (compile time).
inline int64_t ConvOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  if (in < 0 || k < 0) return -1;
  const int64_t extent = dil * (k - 1) + 1;
  return (in + 2 * pad - extent) / stride + 1;
}

// Reads and checks the attributes from `ctx` (any context with Attr<T>(): kernel or shape
// inference) and the Input/Filter dims (unknown dims allowed at compile time).
template <typename Ctx>
ConvGeom GetConvGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': Input must be 4-D [N, C, H, W], got ", ToString(x));
  TIDE_CHECK(f.size() == 4, "op '", op, "': Filter must be 4-D [M, C/groups, kh, kw], got ",
             ToString(f));
  auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.template Attr<std::vector<int32_t>>("paddings");
  auto dils = ctx.template Attr<std::vector<int32_t>>("dilations");
  CheckPair(op, "strides", strides);
  CheckPair(op, "paddings", pads);
  CheckPair(op, "dilations", dils);
  ConvGeom g{};
  g.groups = ctx.template Attr<int32_t>("groups");
  TIDE_CHECK(g.groups >= 1, "op '", op, "': groups must be >= 1, got ", g.groups);
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.m = f[0];
  g.kh = f[2];
  g.kw = f[3];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = pads[0];
  g.pw = pads[1];
  g.dh = dils[0];
  g.dw = dils[1];
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.dh > 0 && g.dw > 0, "op '", op, "': dilations must be > 0, got [", g.dh, ", ", g.dw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0, got [", g.ph, ", ",
             g.pw, "]");
  TIDE_CHECK(g.c < 0 || f[1] < 0 || g.c == f[1] * g.groups, "op '", op, "': Input ", ToString(x),
             " has ", g.c, " channels but Filter ", ToString(f), " expects C/groups = ", f[1],
             " with groups = ", g.groups, " (", f[1] * g.groups, " channels)");
  TIDE_CHECK(g.m < 0 || g.m % g.groups == 0, "op '", op, "': Filter ", ToString(f), " has ", g.m,
             " output channels, not divisible by groups = ", g.groups);
  g.oh = ConvOutSize(g.h, g.kh, g.ph, g.sh, g.dh);
  g.ow = ConvOutSize(g.w, g.kw, g.pw, g.sw, g.dw);
  TIDE_CHECK((g.h < 0 || g.oh > 0) && (g.w < 0 || g.ow > 0), "op '", op,
             "': the output would be empty: Input ", ToString(x), ", Filter ", ToString(f),
             ", strides [", g.sh, ", ", g.sw, "], paddings [", g.ph, ", ", g.pw, "], dilations [",
             g.dh, ", ", g.dw, "] give output size ", g.oh, " x ", g.ow);
  return g;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CONV_HPP_
