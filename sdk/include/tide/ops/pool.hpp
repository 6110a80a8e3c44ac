// tide/ops/pool.hpp: pool2d's geometry (Fluid 1.x): attribute checks, output size (global,
// adaptive, ceil_mode, paddings) and each output's input window, for every pool2d implementation.
#ifndef TIDE_OPS_POOL_HPP_
#define TIDE_OPS_POOL_HPP_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tide/ops/conv.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// X [n, c, h, w] pooled by kh x kw windows to [n, c, oh, ow]. Plain data, so a CUDA kernel can
// take it by value.
struct PoolGeom {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow;  // ph, pw: the top and left paddings
  bool max, exclusive, adaptive;
  int64_t ph_end, pw_end;  // the bottom and right paddings
  Dims out_dims() const { return {n, c, oh, ow}; }
};

// One spatial output size; -1 when the input size is unknown (compile time).
inline int64_t PoolOutSize(int64_t in, int64_t k, int64_t pad_begin, int64_t pad_end,
                           int64_t stride, bool ceil_mode) {
  if (in < 0) return -1;
  const int64_t span = in - k + pad_begin + pad_end;
  return ceil_mode ? (span + stride - 1) / stride + 1 : span / stride + 1;
}
inline int64_t PoolOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  return PoolOutSize(in, k, pad, pad, stride, ceil_mode);
}

// Reads and checks pool2d's attributes from `ctx` (any context with Attr<T>(): kernel or shape
// inference) for X's dims (unknown dims allowed at compile time).
template <typename Ctx>
PoolGeom GetPoolGeom(const Ctx& ctx, const char* op, const Dims& x) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", ToString(x));
  auto ksize = ctx.template Attr<std::vector<int32_t>>("ksize");
  auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.template Attr<std::vector<int32_t>>("paddings");
  CheckPair(op, "ksize", ksize);
  CheckPair(op, "strides", strides);
  const std::vector<int64_t> p4 = FourPaddings(op, pads);
  PoolGeom g{};
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.max = ctx.template Attr<std::string>("pooling_type") == "max";
  g.exclusive = ctx.template Attr<bool>("exclusive");
  g.adaptive = ctx.template Attr<bool>("adaptive");
  const bool global = ctx.template Attr<bool>("global_pooling");
  const bool ceil_mode = ctx.template Attr<bool>("ceil_mode");
  g.kh = ksize[0];
  g.kw = ksize[1];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = p4[0];
  g.ph_end = p4[1];
  g.pw = p4[2];
  g.pw_end = p4[3];
  if (global) {  // one window over the whole image
    g.kh = g.h;
    g.kw = g.w;
    g.ph = g.pw = g.ph_end = g.pw_end = 0;
    g.sh = g.sw = 1;
    g.adaptive = false;
    g.oh = g.ow = 1;
    return g;
  }
  TIDE_CHECK(g.kh > 0 && g.kw > 0, "op '", op, "': ksize must be > 0, got [", g.kh, ", ", g.kw,
             "]");
  if (g.adaptive) {  // ksize is the output size; windows split the image evenly
    g.oh = g.kh;
    g.ow = g.kw;
    return g;
  }
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0 && g.ph_end >= 0 && g.pw_end >= 0, "op '", op,
             "': paddings must be >= 0, got [", g.ph, ", ", g.ph_end, ", ", g.pw, ", ", g.pw_end,
             "] (top, bottom, left, right)");
  const std::string algo = PaddingAlgorithm(ctx, op);
  ApplyPaddingAlgorithm(algo, g.h, g.kh, g.sh, &g.ph, &g.ph_end);
  ApplyPaddingAlgorithm(algo, g.w, g.kw, g.sw, &g.pw, &g.pw_end);
  g.oh = PoolOutSize(g.h, g.kh, g.ph, g.ph_end, g.sh, ceil_mode);
  g.ow = PoolOutSize(g.w, g.kw, g.pw, g.pw_end, g.sw, ceil_mode);
  TIDE_CHECK((g.h < 0 || g.oh > 0) && (g.w < 0 || g.ow > 0), "op '", op,
             "': the output would be empty: X ", ToString(x), ", ksize [", g.kh, ", ", g.kw,
             "], strides [", g.sh, ", ", g.sw, "], paddings [", g.ph, ", ", g.ph_end, ", ", g.pw,
             ", ", g.pw_end, "] give ", g.oh, " x ", g.ow);
  return g;
}

// The input window [y0, y1) x [x0, x1) of output (oy, ox), clipped to the image (padding never
// wins a max), and the divisor of an avg pool: the clipped window's cells when exclusive, else
// kh * kw; 0 for a window wholly in the padding (output 0, no gradient). Adaptive windows span
// [floor(i * H / oh), ceil((i + 1) * H / oh)).
struct PoolWindow {
  int64_t y0, y1, x0, x1, size;
};
TIDE_OPS_HOST_DEVICE inline PoolWindow GetPoolWindow(const PoolGeom& g, int64_t oy, int64_t ox) {
  PoolWindow win{};
  if (g.adaptive) {
    win.y0 = oy * g.h / g.oh;
    win.y1 = ((oy + 1) * g.h + g.oh - 1) / g.oh;
    win.x0 = ox * g.w / g.ow;
    win.x1 = ((ox + 1) * g.w + g.ow - 1) / g.ow;
    win.size = (win.y1 - win.y0) * (win.x1 - win.x0);
    return win;
  }
  win.y0 = oy * g.sh - g.ph;
  win.x0 = ox * g.sw - g.pw;
  win.y1 = win.y0 + g.kh < g.h ? win.y0 + g.kh : g.h;
  win.x1 = win.x0 + g.kw < g.w ? win.x0 + g.kw : g.w;
  win.y0 = win.y0 > 0 ? win.y0 : 0;
  win.x0 = win.x0 > 0 ? win.x0 : 0;
  const int64_t rows = win.y1 > win.y0 ? win.y1 - win.y0 : 0;
  const int64_t cols = win.x1 > win.x0 ? win.x1 - win.x0 : 0;
  const int64_t clipped = rows * cols;
  win.size = clipped == 0 ? 0 : g.exclusive ? clipped : g.kh * g.kw;
  return win;
}

// The reference computation on the host, one [H, W] plane of one (n, c): Fluid's windows over
// plain data. Out (oh x ow) = each window's max, or its sum / the window's divisor; 0 for a window
// wholly in the padding.
template <typename T>
void PoolPlane(const PoolGeom& g, const T* x, T* out) {
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const PoolWindow win = GetPoolWindow(g, oy, ox);
      T r = T(0);
      if (win.size > 0 && g.max) {
        r = std::numeric_limits<T>::lowest();
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) r = std::max(r, x[y * g.w + xx]);
      } else if (win.size > 0) {
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) r += x[y * g.w + xx];
        r /= static_cast<T>(win.size);
      }
      out[oy * g.ow + ox] = r;
    }
}

// The gradient of PoolPlane: dx (H x W, overwritten) from dout (oh x ow). max: to the first maximum
// of the window in scan order, as Fluid's; avg: spread evenly over the window's divisor.
template <typename T>
void PoolGradPlane(const PoolGeom& g, const T* x, const T* dout, T* dx) {
  std::fill(dx, dx + g.h * g.w, T(0));
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const PoolWindow win = GetPoolWindow(g, oy, ox);
      if (win.size == 0) continue;
      const T go = dout[oy * g.ow + ox];
      if (g.max) {
        int64_t arg = win.y0 * g.w + win.x0;
        T best = x[arg];  // kept in a register: no load through arg per cell
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) {
            const T v = x[y * g.w + xx];
            if (v > best) {
              best = v;
              arg = y * g.w + xx;
            }
          }
        dx[arg] += go;
      } else {
        const T share = go / static_cast<T>(win.size);
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) dx[y * g.w + xx] += share;
      }
    }
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_POOL_HPP_
