// matmul_ops.cc: mul (Fluid's flatten-to-2D product, the fc layer's core) and matmul (batched,
// with transposes and 1-D operands), and their grads.
#include <tide/ops/matmul.hpp>

#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetMatmulShape;
using tide::ops::MatmulShape;
using tide::ops::MulOutDims;

void MulShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", MulOutDims("mul", ctx.InputDims("X"), ctx.InputDims("Y"),
                                      ctx.Attr<int32_t>("x_num_col_dims"),
                                      ctx.Attr<int32_t>("y_num_col_dims")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void MulKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  out.Resize(MulOutDims("mul", x.dims(), y.dims(), xc, yc));
  auto [m, k] = Flatten2D(x.dims(), xc);
  int64_t n = DimsProduct(y.dims(), yc, y.dims().size());
  Gemm<T>(ctx, false, false, m, n, k, T(1), x.data<T>(), y.data<T>(), T(0),
          out.mutable_data<T>(ctx.place()));
}

template <typename T>
void MulGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  auto [m, k] = Flatten2D(x.dims(), xc);
  int64_t n = DimsProduct(y.dims(), yc, y.dims().size());
  if (Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str()))  // dX = dOut * Y^T
    Gemm<T>(ctx, false, true, m, k, n, T(1), dout.data<T>(), y.data<T>(), T(0),
            dx.mutable_data<T>(x.dims(), ctx.place()));
  if (Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str()))  // dY = X^T * dOut
    Gemm<T>(ctx, true, false, k, n, m, T(1), x.data<T>(), dout.data<T>(), T(0),
            dy.mutable_data<T>(y.dims(), ctx.place()));
}

void MatmulInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", GetMatmulShape(ctx.InputDims("X"), ctx.InputDims("Y"),
                                          ctx.Attr<bool>("transpose_X"),
                                          ctx.Attr<bool>("transpose_Y")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void MatmulKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  bool tx = ctx.Attr<bool>("transpose_X"), ty = ctx.Attr<bool>("transpose_Y");
  T alpha = static_cast<T>(ctx.Attr<float>("alpha"));
  MatmulShape s = GetMatmulShape(x.dims(), y.dims(), tx, ty);
  T* o = out.mutable_data<T>(s.out, ctx.place());
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  for (int64_t b = 0; b < s.batch; ++b)
    Gemm<T>(ctx, tx, ty, s.m, s.n, s.k, alpha, xd + (s.x_batched ? b * s.m * s.k : 0),
            yd + (s.y_batched ? b * s.k * s.n : 0), T(0), o + b * s.m * s.n);
}

// The b-th [m, n] matrix of the output gradient.
template <typename T>
const T* gb(const T* g, int64_t b, int64_t stride) {
  return g + b * stride;
}

template <typename T>
void MatmulGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  bool tx = ctx.Attr<bool>("transpose_X"), ty = ctx.Attr<bool>("transpose_Y");
  T alpha = static_cast<T>(ctx.Attr<float>("alpha"));
  MatmulShape s = GetMatmulShape(x.dims(), y.dims(), tx, ty);
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  const T* gd = dout.data<T>();
  const int64_t xs = s.m * s.k, ys = s.k * s.n, gs = s.m * s.n;
  if (Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str())) {
    T* d = dx.mutable_data<T>(x.dims(), ctx.place());
    for (int64_t b = 0; b < s.batch; ++b) {
      const T* yb = yd + (s.y_batched ? b * ys : 0);
      T* db = d + (s.x_batched ? b * xs : 0);
      T beta = (!s.x_batched && b > 0) ? T(1) : T(0);  // a broadcast X sums over the batch
      if (!tx) Gemm<T>(ctx, false, !ty, s.m, s.k, s.n, alpha, gb(gd, b, gs), yb, beta, db);
      else Gemm<T>(ctx, ty, true, s.k, s.m, s.n, alpha, yb, gb(gd, b, gs), beta, db);
    }
  }
  if (Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str())) {
    T* d = dy.mutable_data<T>(y.dims(), ctx.place());
    for (int64_t b = 0; b < s.batch; ++b) {
      const T* xb = xd + (s.x_batched ? b * xs : 0);
      T* db = d + (s.y_batched ? b * ys : 0);
      T beta = (!s.y_batched && b > 0) ? T(1) : T(0);
      if (!ty) Gemm<T>(ctx, !tx, false, s.k, s.n, s.m, alpha, xb, gb(gd, b, gs), beta, db);
      else Gemm<T>(ctx, true, tx, s.n, s.k, s.m, alpha, gb(gd, b, gs), xb, beta, db);
    }
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
      .Input("X").Input("Y").Input(GradVarName("Out"))
      .Output(GradVarName("X")).AsDispensable()
      .Output(GradVarName("Y")).AsDispensable()
      .InferShape(GradShapeLikeInputs);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("mul")
                     .Comment("Out = flatten(X, x_num_col_dims) * flatten(Y, y_num_col_dims), "
                              "reshaped to X.dims[:x_num_col_dims] + Y.dims[y_num_col_dims:].")
                     .Input("X", "left operand").Input("Y", "right operand")
                     .Output("Out", "the product")
                     .Attr("x_num_col_dims", int32_t(1), "X dims before this index become rows").GreaterThan(0)
                     .Attr("y_num_col_dims", int32_t(1), "Y dims before this index become rows").GreaterThan(0)
                     .InferShape(MulShape)
                     .Grad([](tide::GradMaker& g) { BinaryGrad(g, "mul_grad"); }));
TIDE_REGISTER_OP(BinaryGradSchema("mul_grad")
                     .Attr("x_num_col_dims", int32_t(1)).Attr("y_num_col_dims", int32_t(1)));
TIDE_REGISTER_KERNEL("mul", "cpu", MulKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mul_grad", "cpu", MulGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("matmul")
                     .Comment("Out = alpha * op(X) * op(Y), batched over leading dims (a rank-2 "
                              "operand is broadcast); a 1-D operand is a row (X) or column (Y).")
                     .Input("X", "left operand").Input("Y", "right operand")
                     .Output("Out", "the product")
                     .Attr("transpose_X", false, "use X^T").Attr("transpose_Y", false, "use Y^T")
                     .Attr("alpha", 1.0f, "scale of the product")
                     .InferShape(MatmulInferShape)
                     .Grad([](tide::GradMaker& g) { BinaryGrad(g, "matmul_grad"); }));
TIDE_REGISTER_OP(BinaryGradSchema("matmul_grad")
                     .Attr("transpose_X", false).Attr("transpose_Y", false).Attr("alpha", 1.0f));
TIDE_REGISTER_KERNEL("matmul", "cpu", MatmulKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("matmul_grad", "cpu", MatmulGradKernel, OPS_MATH_FLOAT_TYPES);
