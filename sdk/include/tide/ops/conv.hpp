// tide/ops/conv.hpp: conv2d / depthwise_conv2d geometry (NCHW Input, [M, C/groups, kh, kw]
// Filter, strides, paddings, dilations, groups, padding_algorithm) and its checks, for every conv
// implementation. Paddings are [h, w] or, as in Fluid 1.7+, [top, bottom, left, right].
#ifndef TIDE_OPS_CONV_HPP_
#define TIDE_OPS_CONV_HPP_

#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <type_traits>
#include <utility>
#include <vector>

namespace tide {
namespace ops {

struct ConvGeom {
  int64_t n, c, h, w;                               // Input
  int64_t m, kh, kw;                                // Filter [m, c / groups, kh, kw]
  int64_t oh, ow;                                   // Output spatial dims
  int64_t sh, sw, ph, pw, dh, dw, groups;           // ph, pw: the top and left paddings
  int64_t ph_end, pw_end;                           // the bottom and right paddings
  Dims out_dims() const { return {n, m, oh, ow}; }  // Output
  bool symmetric() const { return ph == ph_end && pw == pw_end; }
};

// One spatial output size; -1 when the input size is unknown (compile time).
inline int64_t ConvOutSize(int64_t in, int64_t k, int64_t pad_begin, int64_t pad_end,
                           int64_t stride, int64_t dil) {
  if (in < 0 || k < 0) return -1;
  const int64_t extent = dil * (k - 1) + 1;
  return (in + pad_begin + pad_end - extent) / stride + 1;
}
inline int64_t ConvOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  return ConvOutSize(in, k, pad, pad, stride, dil);
}

// Fluid's paddings for one spatial dim: explicit (begin, end); "VALID": none; "SAME": the output
// is ceil(in / stride) and the padding it needs is split, the extra cell at the end. An unknown
// (-1) input size leaves them as they are.
inline void ApplyPaddingAlgorithm(const std::string& algo, int64_t in, int64_t k, int64_t stride,
                                  int64_t* begin, int64_t* end) {
  if (algo == "VALID") {
    *begin = *end = 0;
  } else if (algo == "SAME" && in >= 0) {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + k - in, 0);
    *begin = total / 2;
    *end = total - *begin;
  }
}

// paddings of 2 ([h, w]) or 4 ([top, bottom, left, right]) values as (top, bottom, left, right).
inline std::vector<int64_t> FourPaddings(const char* op, const std::vector<int32_t>& p) {
  TIDE_CHECK(p.size() == 2 || p.size() == 4, "op '", op,
             "': attribute 'paddings' needs 2 values "
             "(h, w) or 4 (top, bottom, left, right), got ",
             p.size());
  if (p.size() == 2) return {p[0], p[0], p[1], p[1]};
  return {p[0], p[1], p[2], p[3]};
}

// Whether a context type can say if an attribute exists (kernel and shape-inference contexts).
template <typename Ctx, typename = void>
struct CanAskForAttr : std::false_type {};
template <typename Ctx>
struct CanAskForAttr<Ctx, std::void_t<decltype(std::declval<const Ctx&>().HasAttr(""))>>
    : std::true_type {};

// The padding_algorithm attribute when the op declares it, else "EXPLICIT".
template <typename Ctx>
std::string PaddingAlgorithm(const Ctx& ctx, const char* op) {
  if constexpr (!CanAskForAttr<Ctx>::value) {
    return "EXPLICIT";
  } else {
    if (!ctx.HasAttr("padding_algorithm")) return "EXPLICIT";
    const std::string a = ctx.template Attr<std::string>("padding_algorithm");
    TIDE_CHECK(a == "EXPLICIT" || a == "SAME" || a == "VALID", "op '", op,
               "': padding_algorithm must be EXPLICIT, SAME or VALID, got '", a, "'");
    return a;
  }
}

// The filter window of a conv (or of conv2d_transpose, conv_transpose.hpp) from `ctx`: kh / kw
// from the Filter dims, strides, paddings (2 or 4 values), dilations (1 under SAME, as Fluid's),
// checked, and groups. Returns padding_algorithm, which the caller applies to the size it pads.
template <typename Ctx>
std::string ReadConvWindow(const Ctx& ctx, const char* op, const Dims& f, ConvGeom* g) {
  auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.template Attr<std::vector<int32_t>>("paddings");
  auto dils = ctx.template Attr<std::vector<int32_t>>("dilations");
  CheckPair(op, "strides", strides);
  CheckPair(op, "dilations", dils);
  const std::vector<int64_t> p4 = FourPaddings(op, pads);
  g->groups = ctx.template Attr<int32_t>("groups");
  TIDE_CHECK(g->groups >= 1, "op '", op, "': groups must be >= 1, got ", g->groups);
  g->kh = f[2];
  g->kw = f[3];
  g->sh = strides[0];
  g->sw = strides[1];
  g->ph = p4[0];
  g->ph_end = p4[1];
  g->pw = p4[2];
  g->pw_end = p4[3];
  g->dh = dils[0];
  g->dw = dils[1];
  const std::string algo = PaddingAlgorithm(ctx, op);
  if (algo == "SAME") g->dh = g->dw = 1;  // Fluid's SAME convolution is never dilated
  TIDE_CHECK(g->sh > 0 && g->sw > 0, "op '", op, "': strides must be > 0, got [", g->sh, ", ",
             g->sw, "]");
  TIDE_CHECK(g->dh > 0 && g->dw > 0, "op '", op, "': dilations must be > 0, got [", g->dh, ", ",
             g->dw, "]");
  TIDE_CHECK(g->ph >= 0 && g->pw >= 0 && g->ph_end >= 0 && g->pw_end >= 0, "op '", op,
             "': paddings must be >= 0, got [", g->ph, ", ", g->ph_end, ", ", g->pw, ", ",
             g->pw_end, "] (top, bottom, left, right)");
  return algo;
}

// Reads and checks the attributes from `ctx` (any context with Attr<T>(): kernel or shape
// inference) and the Input/Filter dims (unknown dims allowed at compile time).
template <typename Ctx>
ConvGeom GetConvGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': Input must be 4-D [N, C, H, W], got ", ToString(x));
  TIDE_CHECK(f.size() == 4, "op '", op, "': Filter must be 4-D [M, C/groups, kh, kw], got ",
             ToString(f));
  ConvGeom g{};
  const std::string algo = ReadConvWindow(ctx, op, f, &g);
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.m = f[0];
  ApplyPaddingAlgorithm(algo, g.h, g.kh, g.sh, &g.ph, &g.ph_end);
  ApplyPaddingAlgorithm(algo, g.w, g.kw, g.sw, &g.pw, &g.pw_end);
  TIDE_CHECK(g.c < 0 || f[1] < 0 || g.c == f[1] * g.groups, "op '", op, "': Input ", ToString(x),
             " has ", g.c, " channels but Filter ", ToString(f), " expects C/groups = ", f[1],
             " with groups = ", g.groups, " (", f[1] * g.groups, " channels)");
  TIDE_CHECK(g.m < 0 || g.m % g.groups == 0, "op '", op, "': Filter ", ToString(f), " has ", g.m,
             " output channels, not divisible by groups = ", g.groups);
  g.oh = ConvOutSize(g.h, g.kh, g.ph, g.ph_end, g.sh, g.dh);
  g.ow = ConvOutSize(g.w, g.kw, g.pw, g.pw_end, g.sw, g.dw);
  TIDE_CHECK((g.h < 0 || g.oh > 0) && (g.w < 0 || g.ow > 0), "op '", op,
             "': the output would be empty: Input ", ToString(x), ", Filter ", ToString(f),
             ", strides [", g.sh, ", ", g.sw, "], paddings [", g.ph, ", ", g.ph_end, ", ", g.pw,
             ", ", g.pw_end, "], dilations [", g.dh, ", ", g.dw, "] give output size ", g.oh, " x ",
             g.ow);
  return g;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CONV_HPP_
