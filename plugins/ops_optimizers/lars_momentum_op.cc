// lars_momentum_op.cc: momentum with LARS's layer-wise learning rate (Fluid 1.x):
//   local_lr = lr * lars_coeff * |Param| / (|Grad| + lars_weight_decay * |Param|)
//   (lr itself when either norm is 0), VelocityOut = mu * Velocity + local_lr * (Grad +
//   lars_weight_decay * Param), ParamOut = Param - VelocityOut.
#include <cmath>

#include "common.h"

namespace ops_optimizers {
namespace {

template <typename T>
void LarsMomentumKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  tide::ops::CheckDenseGrad(ctx, ctx.InputVar("Grad").IsSelectedRows());
  const T lr = ScalarInput<T>(ctx, "LearningRate");
  const T mu = static_cast<T>(ctx.Attr<float>("mu"));
  const T coeff = static_cast<T>(ctx.Attr<float>("lars_coeff"));
  const T decay = static_cast<T>(ctx.Attr<float>("lars_weight_decay"));
  DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  const T* g = grad.data;
  const T* v = OptimizerStateInput<T>(ctx, "Velocity", param);
  const T* p = param.data<T>();
  const int64_t n = param.numel();
  double p2 = 0, g2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    p2 += static_cast<double>(p[i]) * p[i];
    g2 += static_cast<double>(g[i]) * g[i];
  }
  const double pn = std::sqrt(p2), gn = std::sqrt(g2);
  const T local_lr = (pn > 0 && gn > 0) ? static_cast<T>(lr * coeff * pn / (gn + decay * pn)) : lr;
  T* v_out = OptimizerStateOutput<T>(ctx, "VelocityOut", param);
  T* p_out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  ForEach(ctx, n, [=](int64_t i) {
    const T vi = mu * v[i] + local_lr * (g[i] + decay * p[i]);
    v_out[i] = vi;
    p_out[i] = p[i] - vi;
  });
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("lars_momentum")
        .Comment("Momentum with LARS's layer-wise rate: local_lr = LearningRate * lars_coeff * "
                 "|Param| / (|Grad| + lars_weight_decay * |Param|) (LearningRate when a norm is "
                 "0); VelocityOut = mu * Velocity + local_lr * (Grad + lars_weight_decay * Param); "
                 "ParamOut = Param - VelocityOut.")
        .Input("Param", "(Tensor) the parameter to update")
        .Input("Grad", "(Tensor of Param's dims) the gradient of the loss")
        .Input("Velocity", "(Tensor of Param's dims) the velocity")
        .Input("LearningRate", "(Tensor, one element) the learning rate")
        .Output("ParamOut", "(Tensor) the updated parameter; normally Param's variable")
        .Output("VelocityOut", "(Tensor) the updated velocity; normally Velocity's variable")
        .RequiredAttr("mu", TIDE_ATTR_FLOAT, "(float) the momentum factor")
        .Attr("lars_coeff", 0.001f, "(float) LARS's trust coefficient")
        .Attr("lars_weight_decay", 0.0005f, "(float) the weight decay inside LARS")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InPlace("Velocity", "VelocityOut")
        .InferShape([](tide::InferShapeContext& ctx) {
          tide::ops::CheckDenseGrad(ctx, ctx.InputVarType("Grad") == TIDE_VAR_SELECTED_ROWS);
          static const tide::InferShapeFn shapes =
              OptimizerShapes({"lars_momentum",
                               {{"Param", "ParamOut"}, {"Grad", ""}, {"Velocity", "VelocityOut"}},
                               {"LearningRate"}});
          shapes(ctx);
        }));
TIDE_REGISTER_KERNEL("lars_momentum", "cpu", LarsMomentumKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
