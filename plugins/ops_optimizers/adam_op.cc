// adam_op.cc: Adam (Kingma & Ba), with a dense or a SelectedRows Grad, lazy or not; a complex
// Param as its real view (common.h): the second moment per real and imaginary part.
#include <cmath>

#include "common.h"

namespace ops_optimizers {
namespace {

// One real element's update; reads all of element i before writing any of it (outputs may alias).
template <typename T>
struct AdamUpdate {
  T beta1, beta2, epsilon_t, lr_t;
  const T *g, *m1, *m2, *p;
  T *m1_out, *m2_out, *p_out;
  void operator()(int64_t i) const {
    const T gi = g[i];
    const T m1i = beta1 * m1[i] + (T(1) - beta1) * gi;
    const T m2i = beta2 * m2[i] + (T(1) - beta2) * gi * gi;
    const T pi = p[i] - lr_t * (m1i / (std::sqrt(m2i) + epsilon_t));
    m1_out[i] = m1i;
    m2_out[i] = m2i;
    p_out[i] = pi;
  }
};

// T: Param's storage type; the update runs on its real view, in R (T itself when real).
template <typename T>
void AdamKernel(KernelContext &ctx) {
  using R = RealType<T>;
  Tensor param = ctx.Input("Param");
  const R lr = ScalarInput<R>(ctx, "LearningRate");
  const R beta1_pow = ScalarInput<R>(ctx, "Beta1Pow");
  const R beta2_pow = ScalarInput<R>(ctx, "Beta2Pow");
  tide::ops::CheckBeta1Pow(ctx, beta1_pow);
  DenseGrad<T> grad = ReadGrad<T>(ctx, param);
  AdamUpdate<R> u;
  u.beta1 = static_cast<R>(ctx.Attr<double>("beta1"));  // float64 attributes: exact for double
  u.beta2 = static_cast<R>(ctx.Attr<double>("beta2"));
  // epsilon joins the bias-corrected second moment, as in Paddle 2+ and PyTorch:
  // lr_t * m1 / (sqrt(m2) + epsilon * sqrt(1 - beta2^t)) = lr * m1_hat / (sqrt(m2_hat) + epsilon).
  u.epsilon_t = static_cast<R>(ctx.Attr<double>("epsilon")) * std::sqrt(R(1) - beta2_pow);
  u.lr_t = lr * std::sqrt(R(1) - beta2_pow) / (R(1) - beta1_pow);
  u.g = RealView(grad.data);
  const T *m1 = OptimizerStateInput<T>(ctx, "Moment1", param);
  const T *m2 = OptimizerStateInput<T>(ctx, "Moment2", param);
  const T *p = param.data<T>();
  u.m1 = RealView(m1);
  u.m2 = RealView(m2);
  u.p = RealView(p);
  if (grad.sparse && ctx.Attr<bool>("lazy_mode")) {
    // Lazy (Fluid): only the rows the gradient lists are written; an output that is a variable
    // of its own keeps its other rows (one holding no Param-shaped data yet starts as its input).
    u.m1_out = RealView(RowStateOutput<T>(ctx, "Moment1Out", m1, param));
    u.m2_out = RealView(RowStateOutput<T>(ctx, "Moment2Out", m2, param));
    u.p_out = RealView(RowStateOutput<T>(ctx, "ParamOut", p, param));
    ForEachInRows(ctx, grad.rows, RealCount<T>(grad.row_size), u);
    return;
  }
  u.m1_out = RealView(OptimizerStateOutput<T>(ctx, "Moment1Out", param));
  u.m2_out = RealView(OptimizerStateOutput<T>(ctx, "Moment2Out", param));
  u.p_out = RealView(OptimizerStateOutput<T>(ctx, "ParamOut", param));
  const int64_t n = RealCount<T>(param.numel());
  // Dense, or sparse with the rows it does not list at gradient 0 (their moments still decay).
  ForEach(ctx, n, u);
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("adam")
        .Comment(
            "Adam: Moment1Out = beta1 * Moment1 + (1 - beta1) * Grad; Moment2Out = beta2 * "
            "Moment2 + (1 - beta2) * Grad^2; lr_t = LearningRate * sqrt(1 - Beta2Pow) / (1 - "
            "Beta1Pow); ParamOut = Param - lr_t * Moment1Out / (sqrt(Moment2Out) + epsilon * "
            "sqrt(1 - "
            "Beta2Pow)), i.e. Param - LearningRate * m1_hat / (sqrt(m2_hat) + epsilon) with the "
            "bias-corrected moments (Paddle 2+ and PyTorch; Fluid 1.x added epsilon unscaled). "
            "As in Fluid 1.x, this op does not advance Beta1Pow and Beta2Pow: the Python "
            "optimizer appends a scale op for each (Beta1Pow *= beta1, Beta2Pow *= beta2) after "
            "the updates. Outputs are normally their inputs' variables (in place). A "
            "SelectedRows Grad counts as 0 on the rows it does not list (their moments decay and "
            "they move), unless lazy_mode, where only the listed rows of the outputs are written "
            "(an output that is not its input keeps its other rows). A complex Param is updated "
            "as its real view (PyTorch's rule): each real and imaginary part is one element, so "
            "Moment2's real part tracks re(Grad)^2 and its imaginary part im(Grad)^2, not "
            "|Grad|^2.")
        .Input("Param",
               "(Tensor) the parameter to update; float32, float64, complex64 or complex128")
        .Input("Grad", "(Tensor of Param's dims, or SelectedRows) the gradient of the loss")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Input("Moment1", "(Tensor of Param's dims) the first moment estimate")
        .Input("Moment2", "(Tensor of Param's dims) the second (uncentered) moment estimate")
        .Input("Beta1Pow", "(Tensor, one element, float32 or float64) beta1^t at step t")
        .Input("Beta2Pow", "(Tensor, one element, float32 or float64) beta2^t at step t")
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .Output("Moment1Out", "(Tensor) the updated first moment; normally Moment1 itself")
        .Output("Moment2Out", "(Tensor) the updated second moment; normally Moment2 itself")
        .Attr("beta1", 0.9, "(float64) the exponential decay rate of the first moment")
        .Attr("beta2", 0.999, "(float64) the exponential decay rate of the second moment")
        .Attr("epsilon", 1.0e-8,
              "(float64) added to the bias-corrected sqrt(m2_hat) for numerical stability")
        .Attr("lazy_mode", false,
              "(bool) with a SelectedRows Grad, update only the rows it lists (Fluid's lazy "
              "Adam); no effect on a dense Grad")
        .Attr("min_row_size_to_use_multithread", int64_t{1000},
              "(int64) accepted for Fluid's Python optimizer, which sets it; unused: the kernel "
              "goes parallel by element count")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InPlace("Moment1", "Moment1Out")
        .InPlace("Moment2", "Moment2Out")
        .InferShape(OptimizerShapes({"adam",
                                     {{"Param", "ParamOut"},
                                      {"Grad", ""},
                                      {"Moment1", "Moment1Out"},
                                      {"Moment2", "Moment2Out"}},
                                     {"LearningRate", "Beta1Pow", "Beta2Pow"},
                                     /*complex_params=*/true})));
TIDE_REGISTER_KERNEL("adam", "cpu", AdamKernel, OPS_OPTIMIZERS_FLOAT_AND_COMPLEX_TYPES);
