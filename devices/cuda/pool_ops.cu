// pool_ops.cu: pool2d (max / avg over NCHW or NHWC windows; global, ceil_mode, exclusive,
// adaptive, 4-value paddings) and its grad on the GPU, with the window rules of tide/ops/pool.hpp
// exactly (cuDNN's differ: ceil_mode, adaptive windows, a window wholly in the padding). NHWC is
// read in place: a plane's pixels are C apart. The grads gather per input pixel, visiting the
// windows in the CPU's order, so they are deterministic and add up as the CPU's do; only big max
// windows (global or adaptive) scatter with atomics. __half and __nv_bfloat16 compute in float (the
// scatter into float32 scratch, rounded once).
#include <cfloat>
#include <tide/ops/pool.hpp>

#include "convert.h"
#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::GetPoolGeom;
using tide::ops::GetPoolWindow;
using tide::ops::PoolGeom;
using tide::ops::PoolWindow;

template <typename T>
__device__ __forceinline__ T Lowest() {
  return sizeof(T) == 4 ? T(-FLT_MAX) : T(-DBL_MAX);
}

// [n, c, h, w] images as n * c planes of h * w pixels: contiguous (NCHW), or with the channels
// interleaved (NHWC: neighbouring pixels of a plane are c elements apart).
struct Planes {
  int64_t c;
  bool nhwc;
  // Element i of images of hw pixels a plane: its plane p and pixel (y * w + x).
  __device__ void Split(int64_t i, int64_t hw, int64_t* p, int64_t* pixel) const {
    if (nhwc) {
      *p = i / (hw * c) * c + i % c;
      *pixel = i / c % hw;
    } else {
      *p = i / hw;
      *pixel = i % hw;
    }
  }
  // Where plane p starts, and how far apart its pixels lie.
  __device__ int64_t Base(int64_t p, int64_t hw) const {
    return nhwc ? p / c * hw * c + p % c : p * hw;
  }
  __device__ int64_t Step() const { return nhwc ? c : 1; }
};

// The first maximum of the window in scan order (as the CPU kernel finds it), as a pixel index;
// the plane's pixels are `step` apart from xp.
template <typename T>
__device__ int64_t ArgMax(const T* xp, int64_t step, const PoolGeom& g, const PoolWindow& win) {
  int64_t arg = win.y0 * g.w + win.x0;
  for (int64_t y = win.y0; y < win.y1; ++y)
    for (int64_t xx = win.x0; xx < win.x1; ++xx)
      if (Load(xp, (y * g.w + xx) * step) > Load(xp, arg * step)) arg = y * g.w + xx;
  return arg;
}

template <typename T>
__global__ void PoolKernel(const T* x, T* out, PoolGeom g, Planes pl, int64_t total) {
  const int64_t step = pl.Step();
  TIDE_CUDA_LOOP(i, total) {
    int64_t p, opix;
    pl.Split(i, g.oh * g.ow, &p, &opix);
    const T* xp = x + pl.Base(p, g.h * g.w);
    const PoolWindow win = GetPoolWindow(g, opix / g.ow, opix % g.ow);
    using A = Acc<T>;
    A r;
    if (win.size == 0) {
      r = A(0);
    } else if (g.max) {
      r = Lowest<A>();
      for (int64_t y = win.y0; y < win.y1; ++y)
        for (int64_t xx = win.x0; xx < win.x1; ++xx) {
          const A v = Load(xp, (y * g.w + xx) * step);
          r = r < v ? v : r;  // std::max(r, v)
        }
    } else {
      r = A(0);
      for (int64_t y = win.y0; y < win.y1; ++y)
        for (int64_t xx = win.x0; xx < win.x1; ++xx) r += Load(xp, (y * g.w + xx) * step);
      r /= static_cast<A>(win.size);
    }
    out[i] = static_cast<T>(r);
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
__global__ void PoolGradGatherKernel(const T* x, const T* dout, T* dx, PoolGeom g, Planes pl,
                                     int64_t total) {
  const int64_t step = pl.Step();
  TIDE_CUDA_LOOP(i, total) {
    int64_t p, pix;
    pl.Split(i, g.h * g.w, &p, &pix);
    const int64_t xx = pix % g.w, y = pix / g.w;
    const T* xp = x + pl.Base(p, g.h * g.w);
    const T* gp = dout + pl.Base(p, g.oh * g.ow);
    int64_t oy0 = 0, oy1 = g.oh - 1, ox0 = 0, ox1 = g.ow - 1;
    if (!g.adaptive) {
      WindowRange(y, g.kh, g.ph, g.sh, g.oh, &oy0, &oy1);
      WindowRange(xx, g.kw, g.pw, g.sw, g.ow, &ox0, &ox1);
    }
    using A = Acc<T>;
    A acc = A(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const PoolWindow win = GetPoolWindow(g, oy, ox);
        if (win.size == 0 || y < win.y0 || y >= win.y1 || xx < win.x0 || xx >= win.x1) continue;
        const A go = Load(gp, (oy * g.ow + ox) * step);
        if (g.max) {
          if (ArgMax(xp, step, g, win) == pix) acc += go;
        } else {
          acc += go / static_cast<A>(win.size);
        }
      }
    dx[i] = static_cast<T>(acc);
  }
}

// Max pooling over big windows: one thread per output adds its gradient to its maximum (in
// dx's type D: T, or float32 scratch for the 16-bit types).
template <typename T, typename D>
__global__ void MaxPoolGradScatterKernel(const T* x, const T* dout, D* dx, PoolGeom g, Planes pl,
                                         int64_t total) {
  const int64_t step = pl.Step();
  TIDE_CUDA_LOOP(i, total) {
    int64_t p, opix;
    pl.Split(i, g.oh * g.ow, &p, &opix);
    const PoolWindow win = GetPoolWindow(g, opix / g.ow, opix % g.ow);
    if (win.size == 0) continue;
    const int64_t base = pl.Base(p, g.h * g.w);
    AtomicAdd(dx + base + ArgMax(x + base, step, g, win) * step, static_cast<D>(Load(dout, i)));
  }
}

template <typename T>
void Pool(KernelContext& ctx) {
  Gpu gpu(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  PoolGeom g = GetPoolGeom(ctx, op, AsNchwDims(x.dims(), nhwc));
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>(InLayout(g.out_dims(), nhwc), gpu.place());
  Launch(gpu, "PoolKernel", out.numel(), PoolKernel<T>, xd, od, g, Planes{g.c, nhwc}, out.numel());
}

template <typename T>
void PoolGrad(KernelContext& ctx) {
  Gpu gpu(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  PoolGeom g = GetPoolGeom(ctx, op, AsNchwDims(x.dims(), nhwc));
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), InLayout(g.out_dims(), nhwc));
  const T* xd = x.data<T>();
  const T* gd = dout.data<T>();
  T* dd = dx.mutable_data<T>(x.dims(), gpu.place());
  const Planes pl{g.c, nhwc};
  const bool scatter = g.max && (g.adaptive || g.kh * g.kw > 64);
  if (scatter) {
    using D = Acc<T>;
    D* acc = kLowFloat<T> ? gpu.Temp<D>(x.numel()) : reinterpret_cast<D*>(dd);
    gpu.Zero(acc, sizeof(D) * size_t(x.numel()));
    Launch(gpu, "MaxPoolGradScatterKernel", dout.numel(), MaxPoolGradScatterKernel<T, D>, xd, gd,
           acc, g, pl, dout.numel());
    if constexpr (kLowFloat<T>) FloatToLow<T>(gpu, acc, dd, x.numel());
    return;
  }
  Launch(gpu, "PoolGradGatherKernel", x.numel(), PoolGradGatherKernel<T>, xd, gd, dd, g, pl,
         x.numel());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("pool2d", "gpu", Pool, TIDE_CUDA_FLOAT_TYPES, TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pool2d_grad", "gpu", PoolGrad, TIDE_CUDA_FLOAT_TYPES,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
