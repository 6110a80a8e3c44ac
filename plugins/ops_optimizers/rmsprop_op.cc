// rmsprop_op.cc: RMSProp (Hinton), plain or centered, with momentum.
#include "common.h"

namespace ops_optimizers {
namespace {

template <typename T>
void RmspropKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  // A SelectedRows Grad is 0 on the rows it does not list (Fluid's sparse RMSProp): their mean
  // square decays, their momentum carries them on.
  const DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  const T lr = ScalarInput<T>(ctx, "LearningRate");
  ForEach(ctx, param.numel(), tide::ops::GetRmspropUpdate<T>(ctx, param, lr, grad.data));
}

void RmspropShapes(tide::InferShapeContext& ctx) {
  static const tide::InferShapeFn rule = OptimizerShapes({"rmsprop",
                                                          {{"Param", "ParamOut"},
                                                           {"Grad", ""},
                                                           {"MeanSquare", "MeanSquareOut"},
                                                           {"Moment", "MomentOut"},
                                                           {"MeanGrad", "MeanGradOut"}},
                                                          {"LearningRate"}});
  if (ctx.Attr<bool>("centered"))
    TIDE_CHECK(ctx.HasInput("MeanGrad") && ctx.HasOutput("MeanGradOut"),
               "op 'rmsprop': centered = true needs input MeanGrad and output MeanGradOut");
  rule(ctx);
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("rmsprop")
        .Comment(
            "RMSProp: MeanSquareOut = decay * MeanSquare + (1 - decay) * Grad^2; centered: "
            "MeanGradOut = decay * MeanGrad + (1 - decay) * Grad and denom = MeanSquareOut - "
            "MeanGradOut^2, else denom = MeanSquareOut; MomentOut = momentum * Moment + "
            "LearningRate * Grad / sqrt(denom + epsilon); ParamOut = Param - MomentOut. Outputs "
            "are normally their inputs' variables (in place). A SelectedRows Grad counts as 0 on "
            "the rows it does not list.")
        .Input("Param", "(Tensor) the parameter to update")
        .Input("MeanSquare", "(Tensor of Param's dims) the moving average of squared gradients")
        .Input("Grad", "(Tensor of Param's dims, or SelectedRows) the gradient of the loss")
        .Input("Moment", "(Tensor of Param's dims) the momentum accumulator")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Input("MeanGrad",
               "(Tensor of Param's dims) the moving average of gradients; needed when centered")
        .AsDispensable()
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .Output("MomentOut", "(Tensor) the updated momentum; normally the same variable as Moment")
        .Output("MeanSquareOut",
                "(Tensor) the updated mean square; normally the same variable as MeanSquare")
        .Output("MeanGradOut",
                "(Tensor) the updated mean gradient; normally MeanGrad itself; needed when "
                "centered")
        .AsDispensable()
        .Attr("epsilon", 1.0e-10f, "(float) added to denom under the square root, for stability")
        .Attr("decay", 0.9f, "(float) the discount of the moving averages")
        .Attr("momentum", 0.0f, "(float) the momentum factor")
        .Attr("centered", false,
              "(bool) normalise by the gradient's estimated variance (MeanSquare - MeanGrad^2) "
              "instead of its second moment")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InPlace("Moment", "MomentOut")
        .InPlace("MeanSquare", "MeanSquareOut")
        .InPlace("MeanGrad", "MeanGradOut")
        .InferShape(RmspropShapes));
TIDE_REGISTER_KERNEL("rmsprop", "cpu", RmspropKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
