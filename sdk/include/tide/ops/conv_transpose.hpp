// tide/ops/conv_transpose.hpp: conv2d_transpose's geometry (Paddle's): Input [N, C, H, W],
// Filter [C, M / groups, kh, kw], Output [N, M, OH, OW] with per axis OH = (H - 1) * stride -
// pad_begin - pad_end + dilation * (k - 1) + 1, plus output_padding, or output_size when given
// (at most a stride above that). The op is the Input gradient of the conv2d that takes Output to
// Input, so that conv's ConvGeom (its Input: this Output; its Filter: this Filter, [C, M /
// groups, kh, kw] read as conv2d's [M', C' / groups, kh, kw]) describes both, for every
// implementation.
#ifndef TIDE_OPS_CONV_TRANSPOSE_HPP_
#define TIDE_OPS_CONV_TRANSPOSE_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/conv.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// The conv2d whose Input gradient conv2d_transpose computes, from the op's attributes and its
// NCHW Input / Filter dims (unknown dims -1 allowed at compile time: they give -1). Its g.c / g.h
// / g.w are the transpose's Output channels and size, g.m / g.oh / g.ow its Input's.
template <typename Ctx>
ConvGeom GetConvTransposeGeom(const Ctx& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': Input must be 4-D [N, C, H, W], got ", ToString(x));
  TIDE_CHECK(f.size() == 4, "op '", op, "': Filter must be 4-D [C, M/groups, kh, kw], got ",
             ToString(f));
  const auto out_pad = ctx.template Attr<std::vector<int32_t>>("output_padding");
  const auto out_size = ctx.template Attr<std::vector<int32_t>>("output_size");
  TIDE_CHECK(out_pad.empty() || out_pad.size() == 2, "op '", op,
             "': output_padding needs 0 or 2 values (h, w), got ", out_pad.size());
  TIDE_CHECK(out_size.empty() || out_size.size() == 2, "op '", op,
             "': output_size needs 0 or 2 values (h, w), got ", out_size.size());
  ConvGeom g{};
  // Paddle computes SAME / VALID paddings from the transpose's Input size (applied below).
  const std::string algo = ReadConvWindow(ctx, op, f, &g);
  TIDE_CHECK(x[1] < 0 || f[0] < 0 || x[1] == f[0], "op '", op, "': Input ", ToString(x), " has ",
             x[1], " channels but Filter ", ToString(f), " is for ", f[0]);
  TIDE_CHECK(f[0] < 0 || f[0] % g.groups == 0, "op '", op, "': Filter ", ToString(f), " has ", f[0],
             " input channels, not divisible by groups = ", g.groups);
  g.n = x[0];
  g.m = x[1];
  g.oh = x[2];
  g.ow = x[3];
  g.c = f[1] < 0 ? -1 : f[1] * g.groups;
  ApplyPaddingAlgorithm(algo, g.oh, g.kh, g.sh, &g.ph, &g.ph_end);
  ApplyPaddingAlgorithm(algo, g.ow, g.kw, g.sw, &g.pw, &g.pw_end);
  auto size = [&](int axis, int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe,
                  int64_t d) -> int64_t {
    if (in < 0 || k < 0) return -1;
    const int64_t base = (in - 1) * s - pb - pe + d * (k - 1) + 1;
    if (!out_size.empty()) {
      TIDE_CHECK(out_size[axis] >= base && out_size[axis] < base + s, "op '", op, "': output_size[",
                 axis, "] = ", out_size[axis], " must be in [", base, ", ", base + s,
                 ") for Input ", ToString(x), " and Filter ", ToString(f));
      return out_size[axis];
    }
    if (!out_pad.empty()) {
      TIDE_CHECK(out_pad[axis] >= 0 && out_pad[axis] < std::max(s, d), "op '", op,
                 "': output_padding[", axis, "] = ", out_pad[axis],
                 " must be >= 0 and below max(stride, dilation) = ", std::max(s, d));
      return base + out_pad[axis];
    }
    return base;
  };
  g.h = size(0, g.oh, g.kh, g.sh, g.ph, g.ph_end, g.dh);
  g.w = size(1, g.ow, g.kw, g.sw, g.pw, g.pw_end, g.dw);
  TIDE_CHECK((g.oh < 0 || g.h > 0) && (g.ow < 0 || g.w > 0), "op '", op,
             "': the output would be empty: Input ", ToString(x), ", Filter ", ToString(f),
             " give ", g.h, " x ", g.w);
  // The conv back from Output must land on Input's size (output_padding past a stride does not).
  TIDE_CHECK(g.h < 0 || ConvOutSize(g.h, g.kh, g.ph, g.ph_end, g.sh, g.dh) == g.oh, "op '", op,
             "': output height ", g.h, " does not convolve back to Input's ", g.oh);
  TIDE_CHECK(g.w < 0 || ConvOutSize(g.w, g.kw, g.pw, g.pw_end, g.sw, g.dw) == g.ow, "op '", op,
             "': output width ", g.w, " does not convolve back to Input's ", g.ow);
  return g;
}

// conv2d_transpose's Output dims (NCHW) from its ConvGeom.
inline Dims ConvTransposeOutDims(const ConvGeom& g) { return {g.n, g.c, g.h, g.w}; }

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CONV_TRANSPOSE_HPP_
