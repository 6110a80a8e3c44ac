// tide/ops/label_smooth.hpp: label_smooth as every kernel reads its inputs: X [..., K] (rank >= 1),
// epsilon, PriorDist (K values) when given, Out allocated on the kernel's place:
// Out = (1 - epsilon) * X + epsilon * (PriorDist, or 1 / K).
#ifndef TIDE_OPS_LABEL_SMOOTH_HPP_
#define TIDE_OPS_LABEL_SMOOTH_HPP_

#include <cstdint>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

template <typename T>
struct LabelSmoothArgs {
  int64_t n, k;  // X's elements, its last dim
  T eps;
  const T* x;
  const T* prior;  // null: uniform
  T* out;
};

template <typename T>
LabelSmoothArgs<T> GetLabelSmoothArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  TIDE_CHECK(!x.dims().empty(), "op '", op, "': X must have rank >= 1");
  LabelSmoothArgs<T> a;
  a.n = x.numel();
  a.k = x.dims().back();
  a.eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  a.prior = nullptr;
  if (ctx.HasInput("PriorDist")) {
    Tensor p = ctx.Input("PriorDist");
    TIDE_CHECK(p.numel() == a.k, "op '", op, "': PriorDist ('", ctx.InputName("PriorDist"),
               "') has ", p.numel(), " elements, X's last dim is ", a.k);
    a.prior = p.data<T>();
  }
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LABEL_SMOOTH_HPP_
