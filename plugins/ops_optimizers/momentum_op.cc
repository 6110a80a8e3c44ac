// momentum_op.cc: SGD with momentum, plain or Nesterov's.
#include "common.h"

namespace ops_optimizers {
namespace {

template <typename T>
void MomentumKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  const T lr = ScalarInput<T>(ctx, "LearningRate");
  const T mu = static_cast<T>(ctx.Attr<float>("mu"));
  const bool nesterov = ctx.Attr<bool>("use_nesterov");
  // A SelectedRows Grad is 0 on the rows it does not list: their velocity still decays and they
  // still move, as in Fluid's sparse momentum.
  DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  const T* g = grad.data;
  const T* v = StateInput<T>(ctx, "Velocity", param);
  const T* p = param.data<T>();
  T* v_out = StateOutput<T>(ctx, "VelocityOut", param);
  T* p_out = StateOutput<T>(ctx, "ParamOut", param);
  ForEach(ctx, param.numel(), [=](int64_t i) {
    const T gi = g[i];
    const T vi = mu * v[i] + gi;
    const T pi = nesterov ? p[i] - lr * (gi + mu * vi) : p[i] - lr * vi;
    v_out[i] = vi;
    p_out[i] = pi;
  });
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
        .InferShape(
            OptimizerShapes({"momentum",
                             {{"Param", "ParamOut"}, {"Grad", ""}, {"Velocity", "VelocityOut"}},
                             {"LearningRate"}})));
TIDE_REGISTER_KERNEL("momentum", "cpu", MomentumKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
