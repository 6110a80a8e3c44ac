// tide/ops/prelu.hpp: the Alpha rule of Fluid's prelu, with its errors, for every implementation:
// Alpha shared by all of X (mode "all", 1 value), per channel (dim 1, C values) or per element of
// a sample (X's dims after the batch); the Alpha index of each element of X (host and device);
// prelu and its grad as every kernel reads their inputs (outputs allocated on the kernel's place).
#ifndef TIDE_OPS_PRELU_HPP_
#define TIDE_OPS_PRELU_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct PreluAlphaIndex {
  enum Mode { kAll, kChannel, kElement } mode = kAll;
  int64_t inner = 1, channels = 1, sample = 1;
  // The Alpha index of element e of X.
  TIDE_OPS_HOST_DEVICE int64_t operator()(int64_t e) const {
    if (mode == kAll) return 0;
    if (mode == kChannel) return (e / inner) % channels;
    return e % sample;
  }
  int64_t count() const { return mode == kAll ? 1 : (mode == kChannel ? channels : sample); }
};

// The rule for `mode` on X, checked against Alpha's element count (`alpha` names the variable).
// channel_last (Paddle's data_format NHWC): mode 'channel' takes X's last dim as the channels.
inline PreluAlphaIndex GetPreluAlphaIndex(const char* op, const std::string& mode, const Dims& x,
                                          int64_t alpha_numel, const std::string& alpha,
                                          bool channel_last = false) {
  PreluAlphaIndex a;
  if (mode == "channel") {
    TIDE_CHECK(x.size() >= 2, "op '", op,
               "': mode 'channel' needs X of rank >= 2 ([N, C, ...]), got ", ToString(x));
    a.mode = PreluAlphaIndex::kChannel;
    a.channels = channel_last ? x.back() : x[1];
    a.inner = channel_last ? 1 : DimsProduct(x, 2, x.size());
  } else if (mode == "element") {
    TIDE_CHECK(x.size() >= 1, "op '", op, "': mode 'element' needs X of rank >= 1");
    a.mode = PreluAlphaIndex::kElement;
    a.sample = DimsProduct(x, 1, x.size());
  } else {
    TIDE_CHECK(mode == "all", "op '", op, "': mode must be 'all', 'channel' or 'element', got '",
               mode, "'");
  }
  TIDE_CHECK(alpha_numel == a.count(), "op '", op, "': Alpha ('", alpha, "') has ", alpha_numel,
             " values; mode '", mode, "' on X ", ToString(x), " needs ", a.count());
  return a;
}

// The op's Alpha index for X and an Alpha of `alpha_numel` values (`ctx`: kernel or shape
// inference).
template <typename Ctx>
PreluAlphaIndex PreluAlphaIndexOf(const Ctx& ctx, const Dims& x, int64_t alpha_numel) {
  // data_format: Paddle 2.x's attribute; an op schema without it is NCHW.
  const bool channel_last =
      ctx.HasAttr("data_format") && ctx.template Attr<std::string>("data_format") == "NHWC";
  return GetPreluAlphaIndex(ctx.op_type(), ctx.template Attr<std::string>("mode"), x, alpha_numel,
                            ctx.InputName("Alpha"), channel_last);
}

// prelu: X, Alpha; Out allocated with X's dims.
template <typename T>
struct PreluArgs {
  PreluAlphaIndex ai;
  int64_t n;
  const T* x;
  const T* alpha;
  T* out;
};

template <typename T>
PreluArgs<T> GetPreluArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  PreluArgs<T> a;
  a.ai = PreluAlphaIndexOf(ctx, x.dims(), alpha.numel());
  a.n = x.numel();
  a.x = x.data<T>();
  a.alpha = alpha.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  return a;
}

// prelu_grad: X, Alpha, Out@GRAD (X's dims); X@GRAD / Alpha@GRAD where wanted.
template <typename T>
struct PreluGradArgs {
  PreluAlphaIndex ai;
  int64_t n, alpha_numel;
  const T* x;
  const T* alpha;
  const T* dout;
  T* dx;
  T* dalpha;
};

template <typename T>
PreluGradArgs<T> GetPreluGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  PreluGradArgs<T> a;
  a.ai = PreluAlphaIndexOf(ctx, x.dims(), alpha.numel());
  a.n = x.numel();
  a.alpha_numel = alpha.numel();
  a.x = x.data<T>();
  a.alpha = alpha.data<T>();
  a.dout = dout.data<T>();
  a.dx = OptionalGrad<T>(ctx, "X", x.dims());
  a.dalpha = OptionalGrad<T>(ctx, "Alpha", alpha.dims());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_PRELU_HPP_
