// fused_mul_weight_update_op.cc: a mul's weight gradient computed straight into its SGD or
// momentum update, so the gradient is never a tensor of its own. memory_optimize's
// fuse_weight_updates rewrites mul_grad's Y@GRAD + sgd / momentum into it: a training step then
// holds parameters, optimizer state and activations, not a second copy of every weight's size
// (the GEMM's beta does the accumulating, as Megatron's gradient-accumulation fusion does).
#include <algorithm>
#include <tide/ops/dims.hpp>
#include <tide/ops/optimizer.hpp>

#include "gemm.h"

namespace ops_math {
namespace {

using tide::ToString;
using tide::ops::Flatten2D;

// `out` (the variable of `in`, or another one given `in`'s values) for an update in place.
template <typename T>
T* InPlace(const KernelContext& ctx, const Tensor& in, Tensor out) {
  T* o = out.mutable_data<T>(in.dims(), ctx.place());
  const T* i = in.data<T>();
  if (o != i) std::copy(i, i + in.numel(), o);
  return o;
}

// G = flatten(X)^T OutGrad [k, n]; with Velocity: VelocityOut = mu Velocity + G and
// ParamOut = Param - lr VelocityOut (momentum); without: ParamOut = Param - lr G (sgd).
template <typename T>
void FusedMulWeightUpdateKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input("OutGrad"), param = ctx.Input("Param");
  const auto [m, k] = Flatten2D(x.dims(), ctx.Attr<int32_t>("x_num_col_dims"));
  const Dims pd = param.dims();
  TIDE_CHECK(pd.size() == 2 && pd[0] == k, "op '", op, "': Param ('", ctx.InputName("Param"),
             "') has dims ", ToString(pd), "; X ('", ctx.InputName("X"), "', dims ",
             ToString(x.dims()), ") flattened has ", k, " columns, so Param must be [", k, ", n]");
  const int64_t n = pd[1];
  TIDE_CHECK(dout.numel() == m * n, "op '", op, "': OutGrad ('", ctx.InputName("OutGrad"),
             "') has dims ", ToString(dout.dims()), ", not the ", m, " x ", n,
             " values of X's rows by Param's columns");
  const T lr = tide::ops::ScalarInput<T>(ctx, "LearningRate");
  T* p_out = InPlace<T>(ctx, param, ctx.Output("ParamOut"));
  if (!ctx.HasInput("Velocity")) {
    Gemm<T>(ctx, true, false, k, n, m, -lr, x.data<T>(), dout.data<T>(), T(1), p_out);
    return;
  }
  TIDE_CHECK(ctx.HasOutput("VelocityOut"), "op '", op, "': Velocity is given without VelocityOut");
  Tensor v = ctx.Input("Velocity");
  tide::ops::CheckStateInput<T>(ctx, "Velocity", v, param);
  T* v_out = InPlace<T>(ctx, v, ctx.Output("VelocityOut"));
  const T mu = static_cast<T>(ctx.Attr<float>("mu"));
  Gemm<T>(ctx, true, false, k, n, m, T(1), x.data<T>(), dout.data<T>(), mu, v_out);
  tide::ParallelFor(ctx, k * n, 2, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p_out[i] -= lr * v_out[i];
  });
}

void FusedMulWeightUpdateShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("ParamOut", ctx.InputDims("Param"));
  ctx.SetOutputDataType("ParamOut", ctx.InputDataType("Param"));
  if (ctx.HasInput("Velocity") && ctx.HasOutput("VelocityOut")) {
    ctx.SetOutputDims("VelocityOut", ctx.InputDims("Velocity"));
    ctx.SetOutputDataType("VelocityOut", ctx.InputDataType("Velocity"));
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("fused_mul_weight_update")
        .Comment("The weight gradient of mul (Out = flatten(X) Param) computed into its optimizer "
                 "update, never stored: G = flatten(X, x_num_col_dims)^T OutGrad; with Velocity, "
                 "momentum (VelocityOut = mu * Velocity + G; ParamOut = Param - LearningRate * "
                 "VelocityOut), without it, SGD (ParamOut = Param - LearningRate * G). Made by "
                 "memory_optimize(fuse_weight_updates=True) from mul_grad and sgd / momentum.")
        .Input("X", "(Tensor) mul's X, the layer's input")
        .Input("OutGrad", "(Tensor) the gradient of mul's Out")
        .Input("Param", "(Tensor [k, n]) the weight, mul's Y")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Input("Velocity", "(Tensor of Param's dims) momentum's velocity; none for SGD")
        .AsDispensable()
        .Output("ParamOut", "(Tensor) the updated weight; normally Param's variable (in place)")
        .Output("VelocityOut", "(Tensor) the updated velocity; normally Velocity's variable")
        .AsDispensable()
        .Attr("x_num_col_dims", int32_t(1), "mul's: X's leading dims that make the rows")
        .Attr("mu", 0.0f, "the momentum factor (read with Velocity)")
        .KernelDataTypeFrom("Param")
        .NoGradient()
        .InPlace("Param", "ParamOut")
        .InPlace("Velocity", "VelocityOut")
        .InferShape(FusedMulWeightUpdateShape));
TIDE_REGISTER_KERNEL("fused_mul_weight_update", "cpu", FusedMulWeightUpdateKernel,
                     OPS_MATH_FLOAT_TYPES);
