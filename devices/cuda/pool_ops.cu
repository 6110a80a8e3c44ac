// pool_ops.cu: pool2d (max / avg over NCHW windows; global, ceil_mode, exclusive, adaptive) and
// its grad on the GPU, with ops_nn's window rules exactly (cuDNN's differ: ceil_mode, adaptive
// windows, a window wholly in the padding). The grads gather per input pixel, visiting the windows
// in the CPU's order, so they are deterministic and add up as the CPU's do; only big max windows
// (global or adaptive) scatter with atomics.
#include <cfloat>

#include "gpu.h"

namespace tide_cuda {
namespace {

struct PoolGeom {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow;
  bool max, exclusive, adaptive;
};

int64_t PoolOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  return ceil_mode ? (in - k + 2 * pad + stride - 1) / stride + 1 : (in - k + 2 * pad) / stride + 1;
}

void CheckPair(const char* op, const char* name, const std::vector<int32_t>& v) {
  TIDE_CHECK(v.size() == 2, "op '", op, "': attribute '", name, "' needs 2 values (h, w), got ",
             v.size());
}

PoolGeom GetGeom(const KernelContext& ctx, const char* op, const Dims& x) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x));
  auto ksize = ctx.Attr<std::vector<int32_t>>("ksize");
  auto strides = ctx.Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  CheckPair(op, "ksize", ksize);
  CheckPair(op, "strides", strides);
  CheckPair(op, "paddings", pads);
  PoolGeom g{};
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.max = ctx.Attr<std::string>("pooling_type") == "max";
  g.exclusive = ctx.Attr<bool>("exclusive");
  g.adaptive = ctx.Attr<bool>("adaptive");
  const bool global = ctx.Attr<bool>("global_pooling");
  const bool ceil_mode = ctx.Attr<bool>("ceil_mode");
  g.kh = ksize[0];
  g.kw = ksize[1];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = pads[0];
  g.pw = pads[1];
  if (global) {  // one window over the whole image
    g.kh = g.h;
    g.kw = g.w;
    g.ph = g.pw = 0;
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
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0, got [", g.ph, ", ",
             g.pw, "]");
  g.oh = PoolOutSize(g.h, g.kh, g.ph, g.sh, ceil_mode);
  g.ow = PoolOutSize(g.w, g.kw, g.pw, g.sw, ceil_mode);
  TIDE_CHECK(g.oh > 0 && g.ow > 0, "op '", op, "': the output would be empty: X ",
             tide::ToString(x), ", ksize [", g.kh, ", ", g.kw, "], strides [", g.sh, ", ", g.sw,
             "], paddings [", g.ph, ", ", g.pw, "] give ", g.oh, " x ", g.ow);
  return g;
}

// The input window [y0, y1) x [x0, x1) of output (oy, ox), clipped to the image, and the
// divisor of an avg pool (0: a window wholly in the padding, output 0, no gradient).
struct Window {
  int64_t y0, y1, x0, x1, size;
};
__device__ Window GetWindow(const PoolGeom& g, int64_t oy, int64_t ox) {
  Window win;
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
  win.y1 = min(win.y0 + g.kh, g.h);
  win.x1 = min(win.x0 + g.kw, g.w);
  win.y0 = max(win.y0, int64_t(0));
  win.x0 = max(win.x0, int64_t(0));
  const int64_t clipped = max(win.y1 - win.y0, int64_t(0)) * max(win.x1 - win.x0, int64_t(0));
  win.size = g.exclusive ? clipped : g.kh * g.kw;
  if (clipped == 0) win.size = 0;
  return win;
}

template <typename T>
__device__ __forceinline__ T Lowest() {
  return sizeof(T) == 4 ? T(-FLT_MAX) : T(-DBL_MAX);
}

// The first maximum of the window in scan order (as the CPU kernel finds it).
template <typename T>
__device__ int64_t ArgMax(const T* xp, const PoolGeom& g, const Window& win) {
  int64_t arg = win.y0 * g.w + win.x0;
  for (int64_t y = win.y0; y < win.y1; ++y)
    for (int64_t xx = win.x0; xx < win.x1; ++xx)
      if (xp[y * g.w + xx] > xp[arg]) arg = y * g.w + xx;
  return arg;
}

template <typename T>
__global__ void PoolKernel(const T* x, T* out, PoolGeom g, int64_t total) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ox = i % g.ow, oy = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
    const T* xp = x + p * g.h * g.w;
    const Window win = GetWindow(g, oy, ox);
    T r;
    if (win.size == 0) {
      r = T(0);
    } else if (g.max) {
      r = Lowest<T>();
      for (int64_t y = win.y0; y < win.y1; ++y)
        for (int64_t xx = win.x0; xx < win.x1; ++xx) {
          const T v = xp[y * g.w + xx];
          r = r < v ? v : r;  // std::max(r, v)
        }
    } else {
      r = T(0);
      for (int64_t y = win.y0; y < win.y1; ++y)
        for (int64_t xx = win.x0; xx < win.x1; ++xx) r += xp[y * g.w + xx];
      r /= static_cast<T>(win.size);
    }
    out[i] = r;
  }
}

// The output windows that may contain input row y (column x): [lo, hi], in the CPU's order.
__device__ __forceinline__ void WindowRange(int64_t y, int64_t k, int64_t pad, int64_t stride,
                                            int64_t out, int64_t* lo, int64_t* hi) {
  const int64_t first = y + pad - k + 1;  // the first window whose span reaches y
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  *hi = min(out - 1, (y + pad) / stride);
}

// One thread per input pixel: the sum of the gradients of the windows that hold it (avg), or
// of the windows whose maximum it is (max, small windows).
template <typename T>
__global__ void PoolGradGatherKernel(const T* x, const T* dout, T* dx, PoolGeom g, int64_t total) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t xx = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
    const T* xp = x + p * g.h * g.w;
    const T* gp = dout + p * g.oh * g.ow;
    int64_t oy0 = 0, oy1 = g.oh - 1, ox0 = 0, ox1 = g.ow - 1;
    if (!g.adaptive) {
      WindowRange(y, g.kh, g.ph, g.sh, g.oh, &oy0, &oy1);
      WindowRange(xx, g.kw, g.pw, g.sw, g.ow, &ox0, &ox1);
    }
    T acc = T(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const Window win = GetWindow(g, oy, ox);
        if (win.size == 0 || y < win.y0 || y >= win.y1 || xx < win.x0 || xx >= win.x1) continue;
        const T go = gp[oy * g.ow + ox];
        if (g.max) {
          if (ArgMax(xp, g, win) == y * g.w + xx) acc += go;
        } else {
          acc += go / static_cast<T>(win.size);
        }
      }
    dx[i] = acc;
  }
}

// Max pooling over big windows: one thread per output adds its gradient to its maximum.
template <typename T>
__global__ void MaxPoolGradScatterKernel(const T* x, const T* dout, T* dx, PoolGeom g,
                                         int64_t total) {
  TIDE_CUDA_LOOP(i, total) {
    const int64_t ox = i % g.ow, oy = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
    const Window win = GetWindow(g, oy, ox);
    if (win.size == 0) continue;
    const int64_t plane = p * g.h * g.w;
    atomicAdd(dx + plane + ArgMax(x + plane, g, win), dout[i]);
  }
}

template <typename T>
void Pool(KernelContext& ctx) {
  Gpu gpu(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  PoolGeom g = GetGeom(ctx, op, x.dims());
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>({g.n, g.c, g.oh, g.ow}, gpu.place());
  Launch(gpu, "PoolKernel", out.numel(), PoolKernel<T>, xd, od, g, out.numel());
}

template <typename T>
void PoolGrad(KernelContext& ctx) {
  Gpu gpu(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  PoolGeom g = GetGeom(ctx, op, x.dims());
  Dims want{g.n, g.c, g.oh, g.ow};
  TIDE_CHECK(dout.dims() == want, "op '", op, "': Out@GRAD has dims ", tide::ToString(dout.dims()),
             ", expected ", tide::ToString(want));
  const T* xd = x.data<T>();
  const T* gd = dout.data<T>();
  T* dd = dx.mutable_data<T>(x.dims(), gpu.place());
  const bool scatter = g.max && (g.adaptive || g.kh * g.kw > 64);
  if (scatter) {
    gpu.Zero(dd, sizeof(T) * size_t(x.numel()));
    Launch(gpu, "MaxPoolGradScatterKernel", dout.numel(), MaxPoolGradScatterKernel<T>, xd, gd, dd,
           g, dout.numel());
    return;
  }
  Launch(gpu, "PoolGradGatherKernel", x.numel(), PoolGradGatherKernel<T>, xd, gd, dd, g,
         x.numel());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("pool2d", "gpu", Pool, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pool2d_grad", "gpu", PoolGrad, TIDE_CUDA_FLOAT_TYPES);
