// determinant_ops.cc: Paddle's determinant (paddle.linalg.det: Out = det(Input), Input's batch
// dims) and slogdeterminant (paddle.linalg.slogdet: Out [2, batch...], Out[0] the determinant's
// sign, Out[1] log |det|; a singular matrix: sign 0, log |det| -inf), both from a partial-pivot
// LU in the input's type, and their grads (Giles' rule: d det = dOut det inv(Input)^T,
// d logabsdet = dOut[1] inv(Input)^T). A singular matrix's gradient is Paddle's: 0 for
// determinant, NaN for slogdeterminant (per matrix here; Paddle fills the whole batch when one is
// singular).
#include <cmath>
#include <limits>

#include "common.h"

namespace ops_linalg {
namespace {

// The sign and log |det| of a square matrix from its LU factors (sign 0 when singular).
template <typename T>
void SignLogAbsDet(const Eigen::PartialPivLU<Matrix<T>>& lu, T* sign, T* logabs) {
  const Matrix<T>& f = lu.matrixLU();
  T s = static_cast<T>(lu.permutationP().determinant());
  T l = T(0);
  for (int64_t i = 0; i < f.rows(); ++i) {
    const T d = f(i, i);
    if (d == T(0)) {
      *sign = T(0);
      *logabs = -std::numeric_limits<T>::infinity();
      return;
    }
    s *= d < T(0) ? T(-1) : T(1);
    l += std::log(std::abs(d));
  }
  *sign = s;
  *logabs = l;
}

template <typename T>
void DeterminantKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Dims d = x.dims();
  CheckSquare(ctx.op_type(), "Input", d);
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* out = ctx.Output("Out").mutable_data<T>(BatchDims(d), ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    if (n == 0) {
      out[b] = T(1);
      continue;
    }
    Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(x.data<T>() + b * n * n, n, n));
    out[b] = lu.determinant();
  }
}

template <typename T>
void SlogDeterminantKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Dims d = x.dims();
  CheckSquare(ctx.op_type(), "Input", d);
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  Dims od = BatchDims(d);
  od.insert(od.begin(), 2);
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    if (n == 0) {
      out[b] = T(1);
      out[batch + b] = T(0);
      continue;
    }
    Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(x.data<T>() + b * n * n, n, n));
    SignLogAbsDet(lu, &out[b], &out[batch + b]);
  }
}

// dInput = scale_b inv(Input_b)^T per matrix, scale_b from `scale` (det dOut, or dOut[1]);
// a singular matrix gets `singular` everywhere.
template <typename T, typename Scale>
void InverseTransposeGrad(KernelContext& ctx, Scale scale, T singular) {
  Tensor x = ctx.Input("Input");
  const Dims d = x.dims();
  const int64_t n = d.back(), batch = DimsProduct(d, 0, d.size() - 2);
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(d, ctx.place());
  for (int64_t b = 0; b < batch; ++b) {
    MatrixMap<T> g(dx + b * n * n, n, n);
    Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(x.data<T>() + b * n * n, n, n));
    bool invertible = true;
    for (int64_t i = 0; i < n; ++i) invertible = invertible && lu.matrixLU()(i, i) != T(0);
    if (!invertible) {
      g.setConstant(singular);
      continue;
    }
    g = scale(b) * lu.inverse().transpose();
  }
}

template <typename T>
void DeterminantGradKernel(KernelContext& ctx) {
  const T* det = ctx.Input("Out").data<T>();
  const T* dout = ctx.Input(GradVarName("Out").c_str()).data<T>();
  InverseTransposeGrad<T>(
      ctx, [&](int64_t b) { return dout[b] * det[b]; }, T(0));
}

template <typename T>
void SlogDeterminantGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const int64_t batch = dout.numel() / 2;
  const T* dlog = dout.data<T>() + batch;  // the sign has no gradient
  InverseTransposeGrad<T>(
      ctx, [&](int64_t b) { return dlog[b]; }, std::numeric_limits<T>::quiet_NaN());
}

void DeterminantInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("Input");
  CheckSquare(ctx.op_type(), "Input", d);
  ctx.SetOutputDims("Out", BatchDims(d));
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

void SlogDeterminantInferShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("Input");
  CheckSquare(ctx.op_type(), "Input", d);
  Dims od = BatchDims(d);
  od.insert(od.begin(), 2);
  ctx.SetOutputDims("Out", od);
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

void InputGradInferShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"Input"}); }

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

// The grad op reads Input, Out and Out@GRAD.
#define OPS_LINALG_DET_GRAD(grad_op)                        \
  [](tide::GradMaker& g) {                                  \
    g.NewOp(grad_op)                                        \
        .Input("Input", g.Input("Input"))                   \
        .Input("Out", g.Output("Out"))                      \
        .Input(GradVarName("Out"), g.OutputGrad("Out"))     \
        .Output(GradVarName("Input"), g.InputGrad("Input")) \
        .CopyAttrs();                                       \
  }

TIDE_REGISTER_OP(tide::OpSchema("determinant")
                     .Comment("Out = det(Input) per matrix (paddle.linalg.det): Input "
                              "[..., M, M], Out its batch dims.")
                     .Input("Input", "square matrices [..., M, M]")
                     .Output("Out", "the determinants, Input's batch dims")
                     .InferShape(DeterminantInferShape)
                     .Grad(OPS_LINALG_DET_GRAD("determinant_grad")));
TIDE_REGISTER_OP(tide::OpSchema("determinant_grad")
                     .Input("Input")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Input"))
                     .KernelDataTypeFrom("Input")
                     .InferShape(InputGradInferShape));
TIDE_REGISTER_OP(tide::OpSchema("slogdeterminant")
                     .Comment("Out[0] = sign(det(Input)), Out[1] = log |det(Input)| per matrix "
                              "(paddle.linalg.slogdet): Out [2, batch dims...].")
                     .Input("Input", "square matrices [..., M, M]")
                     .Output("Out", "[2, batch dims...]: the signs, then log |det|")
                     .InferShape(SlogDeterminantInferShape)
                     .Grad(OPS_LINALG_DET_GRAD("slogdeterminant_grad")));
TIDE_REGISTER_OP(tide::OpSchema("slogdeterminant_grad")
                     .Input("Input")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Input"))
                     .KernelDataTypeFrom("Input")
                     .InferShape(InputGradInferShape));
TIDE_REGISTER_KERNEL("determinant", "cpu", DeterminantKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("determinant_grad", "cpu", DeterminantGradKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("slogdeterminant", "cpu", SlogDeterminantKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("slogdeterminant_grad", "cpu", SlogDeterminantGradKernel,
                     OPS_LINALG_FLOAT_TYPES);
