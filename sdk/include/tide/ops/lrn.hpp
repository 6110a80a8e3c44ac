// tide/ops/lrn.hpp: lrn's parameters (Fluid 1.x local response normalisation across channels,
// X in NCHW or NHWC), its per-element forward and grad, and lrn and lrn_grad as every lrn
// implementation reads their inputs (checked). The per-element functions run on the host and on a
// device.
#ifndef TIDE_OPS_LRN_HPP_
#define TIDE_OPS_LRN_HPP_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tide/ops/activation.hpp>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// MidOut = k + alpha * sum of X^2 over the channels [c + start, c + start + size) inside
// [0, C); Out = X * MidOut^-beta. Fluid's alpha is not divided by the window size.
struct LrnParams {
  int64_t n, c, hw;  // batch, channels, H * W
  int size;          // the window: attribute n
  int start;         // -(size - 1) / 2
  double k, alpha, beta;
  bool nhwc;  // data_format NHWC: X is [N, H, W, C]

  // X's offset of pixel i (of H * W) of channel ch in image img.
  TIDE_OPS_HOST_DEVICE int64_t Offset(int64_t img, int64_t ch, int64_t i) const {
    return nhwc ? (img * hw + i) * c + ch : (img * c + ch) * hw + i;
  }
  // The (image, channel, pixel) of X's element e.
  TIDE_OPS_HOST_DEVICE void Coords(int64_t e, int64_t* img, int64_t* ch, int64_t* i) const {
    const int64_t inner = nhwc ? c : hw;
    const int64_t r = e / inner;
    *ch = nhwc ? e % c : r % c;
    *i = nhwc ? r % hw : e % hw;
    *img = r / (nhwc ? hw : c);
  }
};

// X is 4-D: [N, C, H, W], or [N, H, W, C] with NHWC.
inline void CheckLrnX(const char* op, const Dims& x, bool nhwc = false) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D ", nhwc ? "[N, H, W, C]" : "[N, C, H, W]",
             ", got ", ToString(x));
}

// Reads lrn's attributes from `ctx` (any context with Attr<T>()) and checks X's dims.
template <typename Ctx>
LrnParams GetLrnParams(const Ctx& ctx, const Dims& x) {
  LrnParams p{};
  p.nhwc =
      ChannelsLast(ctx.op_type(), "data_format", ctx.template Attr<std::string>("data_format"));
  CheckLrnX(ctx.op_type(), x, p.nhwc);
  p.n = x[0];
  p.c = p.nhwc ? x[3] : x[1];
  p.hw = p.nhwc ? x[1] * x[2] : x[2] * x[3];
  p.size = ctx.template Attr<int32_t>("n");
  p.start = -(p.size - 1) / 2;
  p.k = ctx.template Attr<float>("k");
  p.alpha = ctx.template Attr<float>("alpha");
  p.beta = ctx.template Attr<float>("beta");
  return p;
}

// MidOut at X's element e: k + alpha * the sum of X^2 over its channel's window.
template <typename T>
TIDE_OPS_HOST_DEVICE T LrnMidAt(const LrnParams& p, const T* x, int64_t e) {
  int64_t img, ch, i;
  p.Coords(e, &img, &ch, &i);
  const T alpha = static_cast<T>(p.alpha);
  T m = static_cast<T>(p.k);
  const int64_t hi = act_math::Min<int64_t>(ch + p.start + p.size, p.c);
  for (int64_t cc = act_math::Max<int64_t>(ch + p.start, 0); cc < hi; ++cc) {
    const T v = x[p.Offset(img, cc, i)];
    m += alpha * v * v;
  }
  return m;
}

// MidOut and Out at X's element e.
template <typename T>
TIDE_OPS_HOST_DEVICE void LrnAt(const LrnParams& p, const T* x, int64_t e, T* out, T* mid) {
  const T m = LrnMidAt(p, x, e);
  mid[e] = m;
  out[e] = x[e] * act_math::Pow(m, -static_cast<T>(p.beta));
}

// X@GRAD at element e (channel c): dOut[c] * Mid[c]^-beta - 2 alpha beta X[c] * the sum over
// the channels c' whose window holds c (c' + start <= c < c' + start + size) of
// dOut[c'] * Out[c'] / Mid[c'].
template <typename T>
TIDE_OPS_HOST_DEVICE T LrnGradAt(const LrnParams& p, const T* x, const T* out, const T* mid,
                                 const T* dout, int64_t e) {
  int64_t img, ch, i;
  p.Coords(e, &img, &ch, &i);
  const T ratio = static_cast<T>(2 * p.alpha * p.beta);
  T d = dout[e] * act_math::Pow(mid[e], -static_cast<T>(p.beta));
  const int64_t hi = act_math::Min<int64_t>(ch - p.start, p.c - 1);
  for (int64_t cc = act_math::Max<int64_t>(ch - p.start - p.size + 1, 0); cc <= hi; ++cc) {
    const int64_t o = p.Offset(img, cc, i);
    d -= ratio * x[e] * dout[o] * out[o] / mid[o];
  }
  return d;
}

// lrn_grad: Out, MidOut and Out@GRAD have X's dims.
inline void CheckLrnGradDims(const char* op, const Dims& x, const Dims& out, const Dims& mid,
                             const Dims& dout) {
  for (const Dims* d : {&out, &mid, &dout})
    TIDE_CHECK(*d == x, "op '", op, "': Out, MidOut and Out@GRAD must have X's dims ", ToString(x),
               ", got ", ToString(*d));
}

// lrn: X; Out, and MidOut (scratch when the op has none), allocated with X's dims.
template <typename T>
struct LrnArgs {
  LrnParams p;
  int64_t n;
  const T* x;
  T* out;
  T* mid;
};

template <typename T>
LrnArgs<T> GetLrnArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  LrnArgs<T> a;
  a.p = GetLrnParams(ctx, x.dims());
  a.n = x.numel();
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  Tensor mid = ctx.OptionalOutput("MidOut");
  a.mid = mid ? mid.mutable_data<T>(x.dims(), ctx.place())
              : ctx.TempBuffer<T>(static_cast<size_t>(a.n > 0 ? a.n : 1));
  return a;
}

// lrn_grad: X, Out, MidOut and Out@GRAD (X's dims); X@GRAD allocated.
template <typename T>
struct LrnGradArgs {
  LrnParams p;
  int64_t n;
  const T* x;
  const T* out;
  const T* mid;
  const T* dout;
  T* dx;
};

template <typename T>
LrnGradArgs<T> GetLrnGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out"), mid = ctx.Input("MidOut");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  LrnGradArgs<T> a;
  a.p = GetLrnParams(ctx, x.dims());
  CheckLrnGradDims(ctx.op_type(), x.dims(), out.dims(), mid.dims(), dout.dims());
  a.n = x.numel();
  a.x = x.data<T>();
  a.out = out.data<T>();
  a.mid = mid.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LRN_HPP_
