// sgd_op.cc: plain stochastic gradient descent, with a dense or a SelectedRows (sparse) Grad.
#include "common.h"

namespace ops_optimizers {
namespace {

template <typename T>
void SgdKernel(KernelContext& ctx) {
  Tensor param = ctx.Input("Param");
  const T lr = ScalarInput<T>(ctx, "LearningRate");
  const int64_t n = param.numel();
  tide::Variable grad = ctx.InputVar("Grad");
  if (grad && grad.IsSelectedRows()) {
    // Only the listed rows move, once per listing (so a repeated row takes the sum of its
    // gradients); the cost is that of the rows, not of Param.
    SparseGrad<T> g = ReadSparseGrad<T>(ctx, param);
    const T* p = param.data<T>();
    T* out = StateOutput<T>(ctx, "ParamOut", param);
    CopyThrough(p, out, n);
    for (size_t i = 0; i < g.rows.size(); ++i) {
      T* dst = out + g.rows[i] * g.row_size;
      const T* src = g.values + static_cast<int64_t>(i) * g.row_size;
      for (int64_t j = 0; j < g.row_size; ++j) dst[j] -= lr * src[j];
    }
    return;
  }
  const T* g = StateInput<T>(ctx, "Grad", param);
  const T* p = param.data<T>();
  T* out = StateOutput<T>(ctx, "ParamOut", param);
  ForEach(ctx, n, [=](int64_t i) { out[i] = p[i] - lr * g[i]; });
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sgd")
        .Comment(
            "Stochastic gradient descent: ParamOut = Param - LearningRate * Grad. Grad may be a "
            "SelectedRows (a sparse gradient, e.g. of an embedding): then only its rows are "
            "updated, a row listed twice twice. ParamOut is normally Param itself (in place).")
        .Input("Param", "(Tensor) the parameter to update")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Input("Grad",
               "(Tensor of Param's dims, or SelectedRows of height Param.dims[0]) the gradient "
               "of the loss with respect to Param")
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .KernelDataTypeFrom("Param")
        .InferShape(
            OptimizerShapes({"sgd", {{"Param", "ParamOut"}, {"Grad", ""}}, {"LearningRate"}})));
TIDE_REGISTER_KERNEL("sgd", "cpu", SgdKernel, OPS_OPTIMIZERS_FLOAT_TYPES);
