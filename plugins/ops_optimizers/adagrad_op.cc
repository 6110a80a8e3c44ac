// adagrad_op.cc: Adagrad (Duchi et al.), with a dense or a SelectedRows Grad.
#include <cmath>

#include "common.h"

namespace ops_optimizers {
namespace {

template <typename T>
void AdagradKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  const auto u =
      tide::ops::GetAdagradUpdate<T>(ctx, param, ScalarInput<T>(ctx, "LearningRate"), grad.data);
  const int64_t n = param.numel();
  if (grad.sparse) {
    // As Fluid's sparse Adagrad: only the listed rows change (a zero gradient would leave the
    // others as they are too, but not with epsilon = 0 and a zero moment: 0 / 0).
    CopyThrough(u.m, u.m_out, n);
    CopyThrough(u.p, u.p_out, n);
    ForEachInRows(ctx, grad.rows, grad.row_size, u);
    return;
  }
  ForEach(ctx, n, u);
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("adagrad")
        .Comment(
            "Adagrad: MomentOut = Moment + Grad^2; ParamOut = Param - LearningRate * Grad / "
            "(sqrt(MomentOut) + epsilon). Outputs are normally their inputs' variables (in "
            "place). With a SelectedRows Grad only the rows it lists are updated (a repeated row "
            "with the sum of its gradients).")
        .Input("Param", "(Tensor) the parameter to update")
        .Input("Grad", "(Tensor of Param's dims, or SelectedRows) the gradient of the loss")
        .Input("Moment", "(Tensor of Param's dims) the sum of squared gradients so far")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .Output("MomentOut", "(Tensor) the updated moment; normally the same variable as Moment")
        .Attr("epsilon", 1.0e-6f, "(float) added to sqrt(MomentOut) for numerical stability")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InPlace("Moment", "MomentOut")
        .InferShape(OptimizerShapes({"adagrad",
                                     {{"Param", "ParamOut"}, {"Grad", ""}, {"Moment", "MomentOut"}},
                                     {"LearningRate"}})));
TIDE_REGISTER_KERNEL("adagrad", "cpu", AdagradKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
