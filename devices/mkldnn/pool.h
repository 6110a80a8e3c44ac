// pool.h: what pool_kernels.cc (float32 / bfloat16 pool2d) and int8_pool_kernel.cc (u8 / s8
// pool2d) share: Fluid's pooling geometry (tide/ops/pool.hpp) in oneDNN's terms.
#pragma once

#include <tide/ops/pool.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {

// The geometry of tide/ops/pool.hpp, and how oneDNN runs it.
struct PoolParams : tide::ops::PoolGeom {
  int64_t pr_h = 0, pr_w = 0;  // oneDNN's right paddings
  bool onednn = true;          // false: beyond oneDNN's rules (pool_kernels.cc's loop fallback)
  bool nhwc = false;           // X/Out are [N, H, W, C] (the geometry is in NCHW terms)
};

// The op's geometry for X of dims `x_dims`: oneDNN's right paddings that give Fluid's window
// count (ceil_mode), even adaptive windows as a plain pooling; `onednn` false for uneven adaptive
// windows or a window wholly in the padding.
PoolParams GetPoolParams(const KernelContext& ctx, const Dims& x_dims);
// max, or avg excluding / including the padding (Fluid's `exclusive`).
dnnl::algorithm PoolAlgo(const PoolParams& p);
// A primitive cache key: `what`, X's dims, format and type, the geometry.
Key PoolKey(const char* what, const Tensor& x, const PoolParams& p);
dnnl::pooling_forward::desc PoolFwdDesc(dnnl::prop_kind pk, const PoolParams& p,
                                        const memory::desc& src, const memory::desc& dst);

}  // namespace tide_mkldnn
