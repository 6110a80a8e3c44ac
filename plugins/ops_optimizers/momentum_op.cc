// momentum_op.cc: SGD with momentum, plain or Nesterov's; a complex Param as its real view
// (common.h).
#include "common.h"

namespace ops_optimizers {
namespace {

// A complex Param's update: momentum's on the real view of its buffers (mu and the learning rate
// are real, so it is the same update), its inputs read and checked as GetMomentumUpdate reads a
// real Param's.
template <typename T>
tide::ops::MomentumUpdate<RealType<T>, RealType<T>> RealViewMomentumUpdate(const KernelContext& ctx,
                                                                           const Tensor& param,
                                                                           RealType<T> lr,
                                                                           const T* grad) {
  using R = RealType<T>;
  tide::ops::MomentumUpdate<R, R> u;
  u.lr = lr;
  u.mu = static_cast<R>(ctx.Attr<float>("mu"));
  u.nesterov = ctx.Attr<bool>("use_nesterov");
  u.g = RealView(grad);
  u.v = RealView(OptimizerStateInput<T>(ctx, "Velocity", param));
  u.p = RealView(param.data<T>());
  u.v_out = RealView(OptimizerStateOutput<T>(ctx, "VelocityOut", param));
  u.p_out = RealView(OptimizerStateOutput<T>(ctx, "ParamOut", param));
  return u;
}

// A SelectedRows Grad is 0 on the rows it does not list: their velocity still decays and they
// still move, as in Fluid's sparse momentum.
template <typename T>
void MomentumKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  const RealType<T> lr = ScalarInput<RealType<T>>(ctx, "LearningRate");
  const DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  if constexpr (tide::ops::kIsComplex<T>)
    ForEach(ctx, RealCount<T>(param.numel()), RealViewMomentumUpdate<T>(ctx, param, lr, grad.data));
  else
    ForEach(ctx, param.numel(), tide::ops::GetMomentumUpdate<T>(ctx, param, lr, grad.data));
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("momentum")
        .Comment(
            "SGD with momentum: VelocityOut = mu * Velocity + Grad; ParamOut = Param - "
            "LearningRate * VelocityOut, or with use_nesterov ParamOut = Param - LearningRate * "
            "(Grad + mu * VelocityOut). Outputs are normally their inputs' variables (in place). "
            "A SelectedRows Grad counts as 0 on the rows it does not list.")
        .Input("Param",
               "(Tensor) the parameter to update; a complex one is updated as its real view "
               "(each real and imaginary part one element, PyTorch's rule)")
        .Input("Grad", "(Tensor of Param's dims, or SelectedRows) the gradient of the loss")
        .Input("Velocity", "(Tensor of Param's dims) the velocity, an accumulator of gradients")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .Output("VelocityOut",
                "(Tensor) the updated velocity; normally the same variable as Velocity")
        .RequiredAttr("mu", TIDE_ATTR_FLOAT, "(float) the momentum factor; no default")
        .Attr("use_nesterov", false, "(bool) use Nesterov's momentum")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InPlace("Velocity", "VelocityOut")
        .InferShape(
            OptimizerShapes({"momentum",
                             {{"Param", "ParamOut"}, {"Grad", ""}, {"Velocity", "VelocityOut"}},
                             {"LearningRate"},
                             /*complex_params=*/true})));
TIDE_REGISTER_KERNEL("momentum", "cpu", MomentumKernel, OPS_OPTIMIZERS_FLOAT_AND_COMPLEX_TYPES);
