// matmul_ops.cc: mul (Fluid's flatten-to-2D product, the fc layer's core) and matmul (batched,
// with transposes and 1-D operands), and their grads. mul's forward CPU kernel is the SDK's
// header-only tide/kernels/mul.hpp.
#include <tide/kernels/mul.hpp>
#include <tide/ops/matmul.hpp>

#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetMatmulShape;
using tide::ops::MatmulShape;
using tide::ops::MulOutDims;

void MulShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims(
      "Out", MulOutDims("mul", ctx.InputDims("X"), ctx.InputDims("Y"),
                        ctx.Attr<int32_t>("x_num_col_dims"), ctx.Attr<int32_t>("y_num_col_dims")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void MulGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMulGradArgs<T>(ctx);
  if (a.dx) Gemm<T>(ctx, false, true, a.m, a.k, a.n, T(1), a.dout, a.y, T(0), a.dx);  // dOut Y^T
  if (a.dy) Gemm<T>(ctx, true, false, a.k, a.n, a.m, T(1), a.x, a.dout, T(0), a.dy);  // X^T dOut
}

void MatmulInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims(
      "Out", GetMatmulShape(ctx.InputDims("X"), ctx.InputDims("Y"), ctx.Attr<bool>("transpose_X"),
                            ctx.Attr<bool>("transpose_Y"))
                 .out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");  // as Fluid's: X's rows are Out's (attention scores of sequences)
}

template <typename T>
void MatmulKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMatmulArgs<T>(ctx);
  const MatmulShape& s = a.s;
  for (int64_t b = 0; b < s.batch; ++b)
    Gemm<T>(ctx, a.tx, a.ty, s.m, s.n, s.k, a.alpha, a.x + (s.x_batched ? b * s.m * s.k : 0),
            a.y + (s.y_batched ? b * s.k * s.n : 0), T(0), a.out + b * s.m * s.n);
}

// dX_b = alpha * dOut_b op(Y_b)^T (or its transpose when transpose_X), dY likewise; a broadcast
// (unbatched) side sums over the batch.
template <typename T>
void MatmulGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMatmulGradArgs<T>(ctx);
  const MatmulShape& s = a.s;
  const bool tx = a.tx, ty = a.ty;
  const int64_t xs = s.m * s.k, ys = s.k * s.n, gs = s.m * s.n;
  for (int64_t b = 0; a.dx && b < s.batch; ++b) {
    const T* yb = a.y + (s.y_batched ? b * ys : 0);
    const T* gb = a.dout + b * gs;
    T* db = a.dx + (s.x_batched ? b * xs : 0);
    T beta = (!s.x_batched && b > 0) ? T(1) : T(0);
    if (!tx)
      Gemm<T>(ctx, false, !ty, s.m, s.k, s.n, a.alpha, gb, yb, beta, db);
    else
      Gemm<T>(ctx, ty, true, s.k, s.m, s.n, a.alpha, yb, gb, beta, db);
  }
  for (int64_t b = 0; a.dy && b < s.batch; ++b) {
    const T* xb = a.x + (s.x_batched ? b * xs : 0);
    const T* gb = a.dout + b * gs;
    T* db = a.dy + (s.y_batched ? b * ys : 0);
    T beta = (!s.y_batched && b > 0) ? T(1) : T(0);
    if (!ty)
      Gemm<T>(ctx, !tx, false, s.k, s.n, s.m, a.alpha, xb, gb, beta, db);
    else
      Gemm<T>(ctx, true, tx, s.n, s.k, s.m, a.alpha, gb, xb, beta, db);
  }
}

void GradShapeLikeInputs(tide::InferShapeContext& ctx) {
  for (const char* p : {"X", "Y"}) {
    std::string g = GradVarName(p);
    if (ctx.HasOutput(g.c_str())) {
      ctx.SetOutputDims(g.c_str(), ctx.InputDims(p));
      ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(p));
    }
  }
}

void BinaryGrad(tide::GradMaker& g, const std::string& grad_type) {
  g.NewOp(grad_type)
      .Input("X", g.Input("X"))
      .Input("Y", g.Input("Y"))
      .Input(GradVarName("Out"), g.OutputGrad("Out"))
      .Output(GradVarName("X"), g.InputGrad("X"))
      .Output(GradVarName("Y"), g.InputGrad("Y"))
      .CopyAttrs();
}

tide::OpSchema BinaryGradSchema(const char* type) {
  return tide::OpSchema(type)
      .Input("X")
      .Input("Y")
      .Input(GradVarName("Out"))
      .Output(GradVarName("X"))
      .AsDispensable()
      .Output(GradVarName("Y"))
      .AsDispensable()
      .InferShape(GradShapeLikeInputs);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("mul")
                     .Comment("Out = flatten(X, x_num_col_dims) * flatten(Y, y_num_col_dims), "
                              "reshaped to X.dims[:x_num_col_dims] + Y.dims[y_num_col_dims:].")
                     .Input("X", "left operand")
                     .Input("Y", "right operand")
                     .Output("Out", "the product")
                     .Attr("x_num_col_dims", int32_t(1), "X dims before this index become rows")
                     .GreaterThan(0)
                     .Attr("y_num_col_dims", int32_t(1), "Y dims before this index become rows")
                     .GreaterThan(0)
                     .InferShape(MulShape)
                     .Grad([](tide::GradMaker& g) { BinaryGrad(g, "mul_grad"); }));
TIDE_REGISTER_OP(BinaryGradSchema("mul_grad")
                     .Attr("x_num_col_dims", int32_t(1))
                     .Attr("y_num_col_dims", int32_t(1)));
TIDE_REGISTER_KERNEL("mul", "cpu", tide::kernels::Mul, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mul_grad", "cpu", MulGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("matmul")
                     .Comment("Out = alpha * op(X) * op(Y), batched over leading dims (a rank-2 "
                              "operand is broadcast); a 1-D operand is a row (X) or column (Y).")
                     .Input("X", "left operand")
                     .Input("Y", "right operand")
                     .Output("Out", "the product")
                     .Attr("transpose_X", false, "use X^T")
                     .Attr("transpose_Y", false, "use Y^T")
                     .Attr("alpha", 1.0f, "scale of the product")
                     .InferShape(MatmulInferShape)
                     .Grad([](tide::GradMaker& g) { BinaryGrad(g, "matmul_grad"); }));
TIDE_REGISTER_OP(BinaryGradSchema("matmul_grad")
                     .Attr("transpose_X", false)
                     .Attr("transpose_Y", false)
                     .Attr("alpha", 1.0f));
TIDE_REGISTER_KERNEL("matmul", "cpu", MatmulKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("matmul_grad", "cpu", MatmulGradKernel, OPS_MATH_FLOAT_TYPES);
