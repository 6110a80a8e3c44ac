// tide/ops/maxout.hpp: the rules of Fluid's maxout (axis 1 for [N, C, H, W], -1 or 3 for
// [N, H, W, C], as in Fluid 1.7+): output channel c is the max of input channels
// [c * groups, (c + 1) * groups); the grad goes to the first of them holding the max. The index
// functions run on the host and on a device; maxout and its grad as every kernel reads their
// inputs (outputs allocated on the kernel's place).
#ifndef TIDE_OPS_MAXOUT_HPP_
#define TIDE_OPS_MAXOUT_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct MaxoutGeom {
  int64_t n, c, hw;  // batch, input channels, H * W (-1 where unknown at compile time)
  int64_t groups;
  bool channels_last;  // axis 3: X is [N, H, W, C]
  int64_t out_channels() const { return c < 0 ? -1 : c / groups; }
  // X's offset of input channel oc * groups + g at pixel p of image b.
  TIDE_OPS_HOST_DEVICE int64_t XAt(int64_t b, int64_t oc, int64_t g, int64_t p) const {
    const int64_t ch = oc * groups + g;
    return channels_last ? (b * hw + p) * c + ch : (b * c + ch) * hw + p;
  }
  // Out's offset of output channel oc at pixel p of image b.
  TIDE_OPS_HOST_DEVICE int64_t OutAt(int64_t b, int64_t oc, int64_t p) const {
    const int64_t ocs = c / groups;
    return channels_last ? (b * hw + p) * ocs + oc : (b * ocs + oc) * hw + p;
  }
};

// X 4-D; axis 1, 3 or -1 (= 3); groups > 0 dividing the channels.
inline MaxoutGeom GetMaxoutGeom(const char* op, const Dims& x, int64_t groups, int axis) {
  TIDE_CHECK(axis == 1 || axis == 3 || axis == -1, "op '", op,
             "': attribute 'axis' must be 1 (NCHW), 3 or -1 (NHWC), got ", axis);
  const bool last = axis != 1;
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D ", last ? "[N, H, W, C]" : "[N, C, H, W]",
             ", got ", ToString(x));
  const int64_t c = last ? x[3] : x[1];
  TIDE_CHECK(groups > 0 && (c < 0 || c % groups == 0), "op '", op, "': groups (", groups,
             ") must be positive and divide the channels of X ", ToString(x), " (axis ", axis, ")");
  const int64_t h = last ? x[1] : x[2], w = last ? x[2] : x[3];
  return {x[0], c, h < 0 || w < 0 ? -1 : h * w, groups, last};
}

// Out's dims: X's with the channels divided by groups.
inline Dims MaxoutOutDims(const MaxoutGeom& g, const Dims& x) {
  Dims out = x;
  out[g.channels_last ? 3 : 1] = g.out_channels();
  return out;
}

// The op's geometry from its attributes (`ctx`: kernel or shape inference).
template <typename Ctx>
MaxoutGeom MaxoutGeomOf(const Ctx& ctx, const Dims& x) {
  return GetMaxoutGeom(ctx.op_type(), x, ctx.template Attr<int32_t>("groups"),
                       ctx.template Attr<int32_t>("axis"));
}

// maxout: X; Out allocated.
template <typename T>
struct MaxoutArgs {
  MaxoutGeom g;
  int64_t out_numel;
  const T* x;
  T* out;
};

template <typename T>
MaxoutArgs<T> GetMaxoutArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  MaxoutArgs<T> a;
  a.g = MaxoutGeomOf(ctx, x.dims());
  const Dims od = MaxoutOutDims(a.g, x.dims());
  a.out_numel = DimsProduct(od);
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

// maxout_grad: X, Out and Out@GRAD (Out's dims); X@GRAD allocated.
template <typename T>
struct MaxoutGradArgs {
  MaxoutGeom g;
  int64_t x_numel, out_numel;
  const T* x;
  const T* out;
  const T* dout;
  T* dx;
};

template <typename T>
MaxoutGradArgs<T> GetMaxoutGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  MaxoutGradArgs<T> a;
  a.g = MaxoutGeomOf(ctx, x.dims());
  const Dims od = MaxoutOutDims(a.g, x.dims());
  CheckGradDims(op, "Out", out.dims(), od);
  CheckGradDims(op, "Out@GRAD", dout.dims(), od);
  a.x_numel = x.numel();
  a.out_numel = DimsProduct(od);
  a.x = x.data<T>();
  a.out = out.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_MAXOUT_HPP_
