// rmsprop_op.cc: RMSProp (Hinton), plain or centered, with momentum.
#include <cmath>

#include "common.h"

namespace ops_optimizers {
namespace {

// One element's update; reads all of element i before writing any of it (outputs may alias).
template <typename T>
struct RmspropUpdate {
  bool centered;
  T lr, epsilon, decay, momentum;
  const T *g, *ms, *mg, *mom, *p;  // mg: centered only
  T *ms_out, *mg_out, *mom_out, *p_out;
  void operator()(int64_t i) const {
    const T gi = g[i];
    const T msi = decay * ms[i] + (T(1) - decay) * gi * gi;
    T denom = msi;
    T mgi = T(0);
    if (centered) {
      mgi = decay * mg[i] + (T(1) - decay) * gi;
      denom = msi - mgi * mgi;
    }
    const T momi = momentum * mom[i] + lr * gi / std::sqrt(denom + epsilon);
    const T pi = p[i] - momi;
    ms_out[i] = msi;
    if (centered) mg_out[i] = mgi;
    mom_out[i] = momi;
    p_out[i] = pi;
  }
};

template <typename T>
void RmspropKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  const bool centered = ctx.Attr<bool>("centered");
  // A SelectedRows Grad is 0 on the rows it does not list (Fluid's sparse RMSProp): their mean
  // square decays, their momentum carries them on.
  DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  RmspropUpdate<T> u;
  u.centered = centered;
  u.lr = ScalarInput<T>(ctx, "LearningRate");
  u.epsilon = static_cast<T>(ctx.Attr<float>("epsilon"));
  u.decay = static_cast<T>(ctx.Attr<float>("decay"));
  u.momentum = static_cast<T>(ctx.Attr<float>("momentum"));
  u.g = grad.data;
  u.ms = StateInput<T>(ctx, "MeanSquare", param);
  u.mom = StateInput<T>(ctx, "Moment", param);
  u.p = param.data<T>();
  u.mg = nullptr;
  u.mg_out = nullptr;
  if (centered) {
    tide::ops::CheckRmspropCentered(ctx);
    u.mg = StateInput<T>(ctx, "MeanGrad", param);
    u.mg_out = StateOutput<T>(ctx, "MeanGradOut", param);
  }
  u.ms_out = StateOutput<T>(ctx, "MeanSquareOut", param);
  u.mom_out = StateOutput<T>(ctx, "MomentOut", param);
  u.p_out = StateOutput<T>(ctx, "ParamOut", param);
  ForEach(ctx, param.numel(), u);
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
        .InferShape(RmspropShapes));
TIDE_REGISTER_KERNEL("rmsprop", "cpu", RmspropKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
