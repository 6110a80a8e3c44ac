// momentum_op.cc: SGD with momentum, plain or Nesterov's.
#include "common.h"

namespace ops_optimizers {
namespace {

// A SelectedRows Grad is 0 on the rows it does not list: their velocity still decays and they
// still move, as in Fluid's sparse momentum.
template <typename T>
void MomentumKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  const T lr = ScalarInput<T>(ctx, "LearningRate");
  const DenseGrad<T> grad = ReadGrad<T>(ctx, param);
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
        .Input("Param", "(Tensor) the parameter to update")
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
                             {"LearningRate"}})));
TIDE_REGISTER_KERNEL("momentum", "cpu", MomentumKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
