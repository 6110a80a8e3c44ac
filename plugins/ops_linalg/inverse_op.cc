// inverse_op.cc: Paddle's inverse (paddle.linalg.inv: Output = Input^-1 per matrix, from a
// partial-pivot LU in the input's type) and its grad (dInput = -Output^T dOutput Output^T). A
// matrix whose LU has a zero pivot is refused, as Paddle 3.3 refuses it ("Input is not
// invertible"), naming the matrix.
#include "common.h"

namespace ops_linalg {
namespace {

template <typename T>
void InverseKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Dims d = x.dims();
  CheckSquare(ctx.op_type(), "Input", d);
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* out = ctx.Output("Output").mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(x.data<T>() + b * n * n, n, n));
    for (int64_t i = 0; i < n; ++i)
      TIDE_CHECK(lu.matrixLU()(i, i) != T(0), "op '", ctx.op_type(), "': Input ('",
                 ctx.InputName("Input"), "') matrix ", b, " of ", batch,
                 " is not invertible (its LU factorization has a zero pivot)");
    MatrixMap<T>(out + b * n * n, n, n) = lu.inverse();
  }
}

template <typename T>
void InverseGradKernel(KernelContext& ctx) {
  Tensor inv = ctx.Input("Output"), dinv = ctx.Input(GradVarName("Output").c_str());
  const Dims d = inv.dims();
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    ConstMatrixMap<T> y(inv.data<T>() + b * n * n, n, n), dy(dinv.data<T>() + b * n * n, n, n);
    MatrixMap<T>(dx + b * n * n, n, n).noalias() = -(y.transpose() * dy * y.transpose());
  }
}

void InverseInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("Input");
  CheckSquare(ctx.op_type(), "Input", d);
  ctx.SetOutputDims("Output", d);
  ctx.SetOutputDataType("Output", ctx.InputDataType("Input"));
}

void InverseGradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("Input");
  if (!ctx.HasOutput(g.c_str())) return;
  ctx.SetOutputDims(g.c_str(), ctx.InputDims("Output"));
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Output"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("inverse")
                     .Comment("Output = Input^-1 per matrix (paddle.linalg.inv); a singular "
                              "matrix is an error.")
                     .Input("Input", "square matrices [..., M, M]")
                     .Output("Output", "their inverses, Input's dims")
                     .InferShape(InverseInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("inverse_grad")
                           .Input("Output", g.Output("Output"))
                           .Input(GradVarName("Output"), g.OutputGrad("Output"))
                           .Output(GradVarName("Input"), g.InputGrad("Input"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("inverse_grad")
                     .Input("Output")
                     .Input(GradVarName("Output"))
                     .Output(GradVarName("Input"))
                     .KernelDataTypeFrom("Output")
                     .InferShape(InverseGradInferShape));
TIDE_REGISTER_KERNEL("inverse", "cpu", InverseKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("inverse_grad", "cpu", InverseGradKernel, OPS_LINALG_FLOAT_TYPES);
