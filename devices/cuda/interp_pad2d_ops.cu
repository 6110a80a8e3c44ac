// interp_pad2d_ops.cu: bilinear_interp / nearest_interp and pad2d (constant, reflect, edge), NCHW
// or NHWC, with grads, on the GPU. The rules (output size, each output index's source
// taps and weights, pad2d's source index) are tide/ops/interp_pad2d.hpp's, run per element on
// the device; the grads add into zeroed X@GRAD with atomics (several outputs read one input).
#include <cstring>
#include <string>
#include <tide/ops/interp_pad2d.hpp>
#include <vector>

#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

using tide::ops::InterpTap;
using tide::ops::Pad2dGeom;
using tide::ops::Pad2dMode;

// A small int32 input (Paddings), a host input of the kernel (host_ints.h).
std::vector<int32_t> HostInts(const KernelContext& ctx, const Gpu& g, const char* param,
                              int64_t count, const char* what) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == count && t.dtype() == TIDE_INT32, "op '", ctx.op_type(), "': ", param,
             " must be int32 [", count, "] ", what);
  std::vector<int32_t> v(static_cast<size_t>(count));
  ReadBack{g, param}(t, v.data(), sizeof(int32_t) * v.size());
  return v;
}

// ---------------------------------------------------------------------------------------------
struct InterpView {
  tide::ops::InterpGeom g;  // X's and Out's layout (NCHW or NHWC) and sizes
  bool bilinear, align_corners;
  int align_mode;
  __device__ InterpTap Row(int64_t i) const {
    return bilinear ? tide::ops::BilinearTapByRatio(i, g.ih, g.rh, align_corners, align_mode)
                    : tide::ops::NearestTapByRatio(i, g.ih, g.rh, align_corners);
  }
  __device__ InterpTap Col(int64_t j) const {
    return bilinear ? tide::ops::BilinearTapByRatio(j, g.iw, g.rw, align_corners, align_mode)
                    : tide::ops::NearestTapByRatio(j, g.iw, g.rw, align_corners);
  }
};

// Weights in double, as the CPU kernel computes them.
template <typename T>
__global__ void InterpKernel(const T* x, InterpView v, T* out, int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    int64_t b, ch, i, j;
    v.g.OutCoords(e, &b, &ch, &i, &j);
    const InterpTap r = v.Row(i), c = v.Col(j);
    const tide::ops::InterpGeom& g = v.g;
    out[e] = static_cast<T>(
        r.wlo * (c.wlo * x[g.XAt(b, ch, r.lo, c.lo)] + c.whi * x[g.XAt(b, ch, r.lo, c.hi)]) +
        r.whi * (c.wlo * x[g.XAt(b, ch, r.hi, c.lo)] + c.whi * x[g.XAt(b, ch, r.hi, c.hi)]));
  }
}

template <typename T>
__global__ void InterpGradKernel(const T* dout, InterpView v, T* dx, int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    int64_t b, ch, i, j;
    v.g.OutCoords(e, &b, &ch, &i, &j);
    const InterpTap r = v.Row(i), c = v.Col(j);
    const tide::ops::InterpGeom& g = v.g;
    const double gv = dout[e];
    AtomicAdd(dx + g.XAt(b, ch, r.lo, c.lo), static_cast<T>(gv * r.wlo * c.wlo));
    AtomicAdd(dx + g.XAt(b, ch, r.lo, c.hi), static_cast<T>(gv * r.wlo * c.whi));
    AtomicAdd(dx + g.XAt(b, ch, r.hi, c.lo), static_cast<T>(gv * r.whi * c.wlo));
    AtomicAdd(dx + g.XAt(b, ch, r.hi, c.hi), static_cast<T>(gv * r.whi * c.whi));
  }
}

InterpView InterpOf(const KernelContext& ctx, const Gpu& g, const Dims& xd) {
  // A 5-D X (nearest_interp_v2's volumes, plugins/ops_nn/interp3d.h) runs on the CPU.
  if (xd.size() == 5)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(), "' (CUDA kernel): a 5-D X ",
               tide::ToString(xd), " (only the CPU kernel resizes volumes)");
  // Out's size from SizeTensor / OutSize / Scale (read back to the host) or the attributes.
  InterpView v;
  v.g = tide::ops::InterpGeomFromInputs(
      ctx, xd, [&](const char* p) { return HostIntValues(ctx, g, p); },
      [&](const char* p) { return HostIntScalars(ctx, g, p); },
      [&](const char* p) { return HostFloatScalar(ctx, g, p); });
  v.bilinear = std::string(ctx.op_type()).rfind("bilinear", 0) == 0;
  v.align_corners = ctx.Attr<bool>("align_corners");
  v.align_mode = ctx.Attr<int32_t>("align_mode");
  return v;
}

template <typename T>
void Interp(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const InterpView v = InterpOf(ctx, g, x.dims());
  const T* in = x.data<T>();
  const Dims od = v.g.OutDims();
  T* o = ctx.Output("Out").mutable_data<T>(od, g.place());
  const int64_t n = DimsProduct(od);
  Launch(g, "InterpKernel", n, InterpKernel<T>, in, v, o, n);
}

template <typename T>
void InterpGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const InterpView v = InterpOf(ctx, g, x.dims());
  const Dims od = v.g.OutDims();
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  const int64_t n = DimsProduct(od);
  Launch(g, "InterpGradKernel", n, InterpGradKernel<T>, gd, v, dx, n);
}

// ---------------------------------------------------------------------------------------------
// pad2d: each output element reads its source (or pad_value); the grad adds each output's
// gradient into its source (reflect and edge share sources).
struct Pad2dView {
  Pad2dGeom g;
  // (n, c, h, w) of output element e, and the flat index of X's (n, c, sh, sw).
  __device__ void OutIndex(int64_t e, int64_t* n, int64_t* c, int64_t* h, int64_t* w) const {
    if (g.nhwc) {
      *c = e % g.c;
      e /= g.c;
      *w = e % g.ow;
      e /= g.ow;
      *h = e % g.oh;
      *n = e / g.oh;
    } else {
      *w = e % g.ow;
      e /= g.ow;
      *h = e % g.oh;
      e /= g.oh;
      *c = e % g.c;
      *n = e / g.c;
    }
  }
  __device__ int64_t XAt(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return g.nhwc ? ((n * g.h + h) * g.w + w) * g.c + c : ((n * g.c + c) * g.h + h) * g.w + w;
  }
  // X's flat index for output element e; -1 for a constant pad.
  __device__ int64_t Source(int64_t e) const {
    int64_t n, c, h, w;
    OutIndex(e, &n, &c, &h, &w);
    const int64_t sh = tide::ops::Pad2dSource(g.mode, h - g.top, g.h);
    const int64_t sw = tide::ops::Pad2dSource(g.mode, w - g.left, g.w);
    return sh >= 0 && sw >= 0 ? XAt(n, c, sh, sw) : -1;
  }
};

template <typename T>
__global__ void Pad2dKernel(const T* x, Pad2dView v, T pad, T* out, int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    const int64_t s = v.Source(e);
    out[e] = s >= 0 ? x[s] : pad;
  }
}

template <typename T>
__global__ void Pad2dGradKernel(const T* dout, Pad2dView v, T* dx, int64_t n) {
  TIDE_CUDA_LOOP(e, n) {
    const int64_t s = v.Source(e);
    if (s >= 0) AtomicAdd(dx + s, dout[e]);
  }
}

Pad2dView Pad2dOf(const KernelContext& ctx, const Gpu& g, const Dims& x) {
  const std::vector<int32_t> p = ctx.HasInput("Paddings")
                                     ? HostInts(ctx, g, "Paddings", 4, "(top, bottom, left, right)")
                                     : ctx.Attr<std::vector<int32_t>>("paddings");
  return Pad2dView{tide::ops::GetPad2dGeom(ctx.op_type(), x, p, ctx.Attr<std::string>("mode"),
                                           ctx.Attr<std::string>("data_format"))};
}

template <typename T>
void Pad2d(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  const Pad2dView v = Pad2dOf(ctx, g, x.dims());
  const Dims od = tide::ops::Pad2dOutDims(v.g);
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, g.place());
  const int64_t n = DimsProduct(od);
  Launch(g, "Pad2dKernel", n, Pad2dKernel<T>, xd, v, static_cast<T>(ctx.Attr<float>("pad_value")),
         o, n);
}

template <typename T>
void Pad2dGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const Pad2dView v = Pad2dOf(ctx, g, x.dims());
  const Dims od = tide::ops::Pad2dOutDims(v.g);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), g.place());
  g.Zero(dx, sizeof(T) * size_t(x.numel()));
  const int64_t n = DimsProduct(od);
  Launch(g, "Pad2dGradKernel", n, Pad2dGradKernel<T>, gd, v, dx, n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

// The output size's inputs the interps read on the host (tide/ops/interp_pad2d.hpp).
const tide::HostInputs kInterpSize{"OutSize", "SizeTensor", "Scale"};

TIDE_REGISTER_KERNEL_HOST_INPUTS("bilinear_interp", "gpu", kInterpSize, Interp,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("bilinear_interp_grad", "gpu", kInterpSize, InterpGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("nearest_interp", "gpu", kInterpSize, Interp,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("nearest_interp_grad", "gpu", kInterpSize, InterpGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("bilinear_interp_v2", "gpu", kInterpSize, Interp,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("bilinear_interp_v2_grad", "gpu", kInterpSize, InterpGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("nearest_interp_v2", "gpu", kInterpSize, Interp,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("nearest_interp_v2_grad", "gpu", kInterpSize, InterpGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("pad2d", "gpu", TIDE_HOST_INPUTS("Paddings"), Pad2d,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("pad2d_grad", "gpu", TIDE_HOST_INPUTS("Paddings"), Pad2dGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
