// tide/ops/batch_norm.hpp: batch_norm's view of X: [outer, C, inner], where NCHW is [N, C, H*W] and
// NHWC is [N*H*W, C, 1] (-1 where unknown at compile time); which statistics it uses, its momentum,
// and batch_norm and its grad as every kernel reads their inputs (checked).
#ifndef TIDE_OPS_BATCH_NORM_HPP_
#define TIDE_OPS_BATCH_NORM_HPP_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct BnView {
  int64_t outer, c, inner;
};

// X of rank 2 to 5 in `layout` ("NHWC", else channels second) as [outer, C, inner].
inline BnView GetBnView(const char* op, const Dims& x, const std::string& layout) {
  TIDE_CHECK(x.size() >= 2 && x.size() <= 5, "op '", op, "': X must have rank 2 to 5, got ",
             ToString(x));
  if (layout == "NHWC") return {DimsProductOrUnknown(x, 0, x.size() - 1), x.back(), 1};
  return {x[0], x[1], DimsProductOrUnknown(x, 2, x.size())};
}

// Uses the running statistics instead of the batch's. As in Paddle, trainable_statistics keeps
// the batch's statistics even when is_test.
template <typename Ctx>
bool BnUsesGlobalStats(const Ctx& ctx) {
  const bool test =
      ctx.template Attr<bool>("is_test") &&
      !(ctx.HasAttr("trainable_statistics") && ctx.template Attr<bool>("trainable_statistics"));
  return test || ctx.template Attr<bool>("use_global_stats");
}

// The momentum: Paddle's MomentumTensor input (one float32 / float64 element, read with `read`,
// see int_inputs.hpp) when given, else the attribute.
template <typename T, typename Read = ReadOnHost>
T BnMomentum(const KernelContext& ctx, Read read = {}) {
  if (!ctx.HasInput("MomentumTensor")) return static_cast<T>(ctx.Attr<float>("momentum"));
  Tensor m = ctx.Input("MomentumTensor");
  TIDE_CHECK(m.numel() == 1 && (m.dtype() == TIDE_FP32 || m.dtype() == TIDE_FP64), "op '",
             ctx.op_type(), "': MomentumTensor must hold one float32/float64, got ",
             DataTypeName(m.dtype()), " ", ToString(m.dims()));
  if (m.dtype() == TIDE_FP64) {
    double d;
    read(m, &d, sizeof d);
    return static_cast<T>(d);
  }
  float f;
  read(m, &f, sizeof f);
  return static_cast<T>(f);
}

// batch_norm: X as [outer, C, inner], Scale, Bias, Mean and Variance ([C] each), the attributes.
// The kernel allocates the outputs (MeanOut / VarianceOut are usually Mean / Variance: it reads
// them first). X is T; Scale, Bias and the statistics P: T, or float32 for a float16 / bfloat16 X
// (the op declares them AsFloat32Param, as Paddle's).
template <typename T, typename P = T>
struct BnArgs {
  BnView v;
  Dims x_dims;
  P eps, momentum;
  bool global;  // the running statistics (BnUsesGlobalStats)
  const T* x;
  const P* scale;
  const P* bias;
  const P* mean;
  const P* var;
};

template <typename T, typename Read = ReadOnHost, typename P = T>
BnArgs<T, P> GetBnArgs(const KernelContext& ctx, Read read = {}) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), scale = ctx.Input("Scale"), bias = ctx.Input("Bias");
  Tensor mean = ctx.Input("Mean"), var = ctx.Input("Variance");
  BnArgs<T, P> a;
  a.x_dims = x.dims();
  a.v = GetBnView(op, a.x_dims, ctx.Attr<std::string>("data_layout"));
  for (const Tensor* t : {&scale, &bias, &mean, &var})
    TIDE_CHECK(t->rank() == 1 && t->dim(0) == a.v.c, "op '", op,
               "': Scale, Bias, Mean and Variance must be [", a.v.c, "] for X ", ToString(a.x_dims),
               ", got ", ToString(t->dims()));
  a.eps = static_cast<P>(ctx.Attr<float>("epsilon"));
  a.momentum = BnMomentum<P>(ctx, read);
  a.global = BnUsesGlobalStats(ctx);
  TIDE_CHECK(a.global || a.v.outer * a.v.inner > 0, "op '", op, "': X ", ToString(a.x_dims),
             " holds no elements to take batch statistics of");
  a.x = x.data<T>();
  a.scale = scale.data<P>();
  a.bias = bias.data<P>();
  a.mean = mean.data<P>();
  a.var = var.data<P>();
  return a;
}

// batch_norm_grad: X, Scale ([C]), Y@GRAD (X's dims) and the statistics the forward used: Mean and
// Variance ([C]) with global statistics, else SavedMean and SavedVariance (the batch's mean and
// inverse std). The kernel allocates the gradients. X and Y@GRAD are T, Scale and the statistics P
// (as BnArgs).
template <typename T, typename P = T>
struct BnGradArgs {
  BnView v;
  Dims x_dims;
  P eps;
  bool global;
  const T* x;
  const P* scale;
  const T* dy;
  const P* mean;  // Mean, or SavedMean
  const P* var;   // Variance (global), or SavedVariance: the inverse std
};

template <typename T, typename P = T>
BnGradArgs<T, P> GetBnGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), scale = ctx.Input("Scale");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  BnGradArgs<T, P> a;
  a.x_dims = x.dims();
  a.v = GetBnView(op, a.x_dims, ctx.Attr<std::string>("data_layout"));
  TIDE_CHECK(dy.dims() == a.x_dims, "op '", op, "': Y@GRAD has dims ", ToString(dy.dims()),
             ", expected X's ", ToString(a.x_dims));
  TIDE_CHECK(scale.numel() == a.v.c, "op '", op, "': Scale must be [", a.v.c, "], got ",
             ToString(scale.dims()));
  a.eps = static_cast<P>(ctx.Attr<float>("epsilon"));
  a.global = BnUsesGlobalStats(ctx);
  const char* mean_param = a.global ? "Mean" : "SavedMean";
  const char* var_param = a.global ? "Variance" : "SavedVariance";
  Tensor mean = ctx.Input(mean_param), var = ctx.Input(var_param);
  TIDE_CHECK(mean.numel() == a.v.c && var.numel() == a.v.c, "op '", op, "': ", mean_param, " / ",
             var_param, " must hold C = ", a.v.c, " values, got ", mean.numel(), " / ",
             var.numel());
  a.x = x.data<T>();
  a.scale = scale.data<P>();
  a.dy = dy.data<T>();
  a.mean = mean.data<P>();
  a.var = var.data<P>();
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BATCH_NORM_HPP_
