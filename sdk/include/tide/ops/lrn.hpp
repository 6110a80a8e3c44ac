// tide/ops/lrn.hpp: lrn's parameters (Fluid 1.x local response normalisation across channels)
// and the checks of lrn and lrn_grad's inputs, for every lrn implementation.
#ifndef TIDE_OPS_LRN_HPP_
#define TIDE_OPS_LRN_HPP_

#include <tide/plugin.hpp>

#include <cstdint>
#include <initializer_list>

namespace tide {
namespace ops {

// MidOut = k + alpha * sum of X^2 over the channels [c + start, c + start + size) inside
// [0, C); Out = X * MidOut^-beta. Fluid's alpha is not divided by the window size.
struct LrnParams {
  int64_t n, c, hw;  // batch, channels, H * W
  int size;          // the window: attribute n
  int start;         // -(size - 1) / 2
  double k, alpha, beta;
};

// X is [N, C, H, W].
inline void CheckLrnX(const char* op, const Dims& x) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", ToString(x));
}

// Reads lrn's attributes from `ctx` (any context with Attr<T>()) and checks X's dims.
template <typename Ctx>
LrnParams GetLrnParams(const Ctx& ctx, const Dims& x) {
  CheckLrnX(ctx.op_type(), x);
  LrnParams p{};
  p.n = x[0];
  p.c = x[1];
  p.hw = x[2] * x[3];
  p.size = ctx.template Attr<int32_t>("n");
  p.start = -(p.size - 1) / 2;
  p.k = ctx.template Attr<float>("k");
  p.alpha = ctx.template Attr<float>("alpha");
  p.beta = ctx.template Attr<float>("beta");
  return p;
}

// lrn_grad: Out, MidOut and Out@GRAD have X's dims.
inline void CheckLrnGradDims(const char* op, const Dims& x, const Dims& out, const Dims& mid,
                             const Dims& dout) {
  for (const Dims* d : {&out, &mid, &dout})
    TIDE_CHECK(*d == x, "op '", op, "': Out, MidOut and Out@GRAD must have X's dims ", ToString(x),
               ", got ", ToString(*d));
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LRN_HPP_
