// bmm_op.cc: Paddle 2.x's bmm (paddle.bmm): a batch of matrix products, X [B, M, K] @ Y [B, K, N]
// = Out [B, M, N] (no broadcasting), and its grad (dX = dOut Y^T, dY = X^T dOut per batch).
#include "common.h"
#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// {B, M, K, N}, with Paddle's errors.
struct BmmDims {
  int64_t b, m, k, n;
};
BmmDims GetBmmDims(const char* op, const Dims& x, const Dims& y) {
  TIDE_CHECK(x.size() == 3, "op '", op, "': X must be 3-D [B, M, K], got ", tide::ToString(x));
  TIDE_CHECK(y.size() == 3, "op '", op, "': Y must be 3-D [B, K, N], got ", tide::ToString(y));
  auto same = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  TIDE_CHECK(same(x[0], y[0]), "op '", op, "': X ", tide::ToString(x), " and Y ", tide::ToString(y),
             " must have one batch size");
  TIDE_CHECK(same(x[2], y[1]), "op '", op, "': X ", tide::ToString(x), " and Y ", tide::ToString(y),
             " do not multiply (X's last dim must be Y's second)");
  return {x[0] < 0 ? y[0] : x[0], x[1], x[2], y[2]};
}

void BmmInferShape(tide::InferShapeContext& ctx) {
  const BmmDims d = GetBmmDims(ctx.op_type(), ctx.InputDims("X"), ctx.InputDims("Y"));
  ctx.SetOutputDims("Out", {d.b, d.m, d.n});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void BmmKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const BmmDims d = GetBmmDims(ctx.op_type(), x.dims(), y.dims());
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>({d.b, d.m, d.n}, ctx.place());
  for (int64_t i = 0; i < d.b; ++i)
    Gemm<T>(ctx, false, false, d.m, d.n, d.k, T(1), xd + i * d.m * d.k, yd + i * d.k * d.n, T(0),
            o + i * d.m * d.n);
}

template <typename T>
void BmmGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  const BmmDims d = GetBmmDims(ctx.op_type(), x.dims(), y.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), {d.b, d.m, d.n});
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  const T* g = dout.data<T>();
  const std::string dxn = GradVarName("X"), dyn = GradVarName("Y");
  if (ctx.HasOutput(dxn.c_str())) {
    T* dx = ctx.Output(dxn.c_str()).mutable_data<T>(x.dims(), ctx.place());
    for (int64_t i = 0; i < d.b; ++i)  // [M, N] @ [K, N]^T
      Gemm<T>(ctx, false, true, d.m, d.k, d.n, T(1), g + i * d.m * d.n, yd + i * d.k * d.n, T(0),
              dx + i * d.m * d.k);
  }
  if (ctx.HasOutput(dyn.c_str())) {
    T* dy = ctx.Output(dyn.c_str()).mutable_data<T>(y.dims(), ctx.place());
    for (int64_t i = 0; i < d.b; ++i)  // [M, K]^T @ [M, N]
      Gemm<T>(ctx, true, false, d.k, d.n, d.m, T(1), xd + i * d.m * d.k, g + i * d.m * d.n, T(0),
              dy + i * d.k * d.n);
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("bmm")
                     .Comment("Out[b] = X[b] @ Y[b]: X [B, M, K], Y [B, K, N], Out [B, M, N].")
                     .Input("X", "[B, M, K]")
                     .Input("Y", "[B, K, N]")
                     .Output("Out", "[B, M, N]")
                     .InferShape(BmmInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("bmm_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("bmm_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .InferShape(GradsLikeXY));
TIDE_REGISTER_KERNEL("bmm", "cpu", BmmKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bmm_grad", "cpu", BmmGradKernel, OPS_MATH_FLOAT_TYPES);
