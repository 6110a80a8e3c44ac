// tide/kernels/pool.hpp: the plain CPU kernel of pool2d (max / avg over NCHW windows, or NHWC
// ones on transposed copies; global, ceil_mode, exclusive, adaptive, padding_algorithm), with
// Fluid 1.x window rules (tide/ops/pool.hpp): a window is clipped to the image (padding never wins
// a max); an exclusive avg divides by the clipped window's size, a non-exclusive one by kh * kw.
// Max over 2x2 windows at stride 2 (LeNet's, VGG's) takes its own loops, as straight loops over
// row pairs that the compiler vectorises, with the same results bit for bit (the same comparisons
// in the same order). Header-only: ops_nn registers it, and a compiled model (tide.aot.compile)
// calls it directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_POOL_HPP_
#define TIDE_KERNELS_POOL_HPP_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tide/eigen.hpp>
#include <tide/kernels/layout.hpp>
#include <tide/ops/pool.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Max pooling, 2x2 windows, stride 2, no padding, none clipped (an odd last row or column is
// outside every window).
inline bool IsMaxPool2x2(const ops::PoolGeom& g) {
  return g.max && !g.adaptive && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 &&
         g.pw == 0 && g.ph_end == 0 && g.pw_end == 0 && 2 * g.oh <= g.h && 2 * g.ow <= g.w;
}

// ops::PoolPlane for IsMaxPool2x2: the running max from lowest() over the window in scan
// order, as there.
template <typename T>
void MaxPool2x2Plane(const ops::PoolGeom& g, const T* x, T* out) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const T* r0 = x + 2 * oy * g.w;
    const T* r1 = r0 + g.w;
    T* o = out + oy * g.ow;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      T r = std::max(std::numeric_limits<T>::lowest(), r0[2 * ox]);
      r = std::max(r, r0[2 * ox + 1]);
      r = std::max(r, r1[2 * ox]);
      o[ox] = std::max(r, r1[2 * ox + 1]);
    }
  }
}

template <typename T>
void Pool2d(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const bool nhwc = ChannelLast(ctx);
  ops::PoolGeom g = ops::GetPoolGeom(ctx, op, nhwc ? NhwcToNchwDims(x.dims()) : x.dims());
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  T* od = NchwOutput<T>(ctx, out, g.out_dims(), nhwc);
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  const bool max2x2 = IsMaxPool2x2(g);
  ParallelFor(ctx, g.n * g.c, plane + oplane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      if (max2x2)
        MaxPool2x2Plane(g, xd + p * plane, od + p * oplane);
      else
        ops::PoolPlane(g, xd + p * plane, od + p * oplane);
  });
  StoreNhwc(ctx, od, out, g.out_dims(), nhwc);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_POOL_HPP_
