// solve_op.cc: Paddle's solve (paddle.linalg.solve: Out solves X Out = Y per matrix, X
// [..., M, M], Y [..., M, K] with the batch dims broadcast, or a vector right-hand side: Y [M],
// or Y [..., M] of X's dims but the last, Out then [batch..., M]; a partial-pivot LU in the input's
// type, a zero pivot refused as Paddle refuses it) and its grad: dY = X^-T dOut, dX = -dY Out^T,
// each summed over the batch dims it was repeated along.
#include "common.h"

namespace ops_linalg {
namespace {

// Y as a vector right-hand side, as Paddle reads it: Y [M], or Y [..., M] with X [..., M, M].
bool VectorRhs(const Dims& x, const Dims& y) {
  return y.size() == 1 || (y.size() + 1 == x.size() && std::equal(y.begin(), y.end(), x.begin()));
}

// Y's dims as matrices [..., M, K] (a vector: K = 1).
Dims RhsAsMatrices(const Dims& x, const Dims& y) {
  if (!VectorRhs(x, y)) return y;
  Dims d = y;
  d.push_back(1);
  return d;
}

Dims SolveDims(const char* op, const Dims& x, const Dims& y) {
  TIDE_CHECK(!y.empty(), "op '", op,
             "': Y must be a vector [M] or matrices [..., M, K], but it is 0-D");
  Dims od = SolveOutDims(op, "X", x, "Y", RhsAsMatrices(x, y));
  if (VectorRhs(x, y)) od.pop_back();
  return od;
}

template <typename T>
Eigen::PartialPivLU<Matrix<T>> Factor(const KernelContext& ctx, const T* a, int64_t m, int64_t b,
                                      int64_t batch) {
  Eigen::PartialPivLU<Matrix<T>> lu(ConstMatrixMap<T>(a, m, m));
  for (int64_t i = 0; i < m; ++i)
    TIDE_CHECK(lu.matrixLU()(i, i) != T(0), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
               "') matrix ", b, " of ", batch,
               " is not invertible (its LU factorization has a zero pivot)");
  return lu;
}

template <typename T>
void SolveKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const char* op = ctx.op_type();
  const Dims od = SolveDims(op, x.dims(), y.dims()), yd = RhsAsMatrices(x.dims(), y.dims());
  const BatchPairs p = PairBatches(op, BatchDims(x.dims()), BatchDims(yd), x.dims(), yd);
  const int64_t m = x.dims().back(), k = yd.back(), xn = DimsProduct(BatchDims(x.dims()));
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const auto lu = Factor<T>(ctx, x.data<T>() + p.xi[e] * m * m, m, p.xi[e], xn);
    MatrixMap<T>(out + e * m * k, m, k) =
        lu.solve(ConstMatrixMap<T>(y.data<T>() + p.yi[e] * m * k, m, k));
  }
}

template <typename T>
void SolveGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Dims yd = RhsAsMatrices(x.dims(), y.dims());
  const BatchPairs p = PairBatches(ctx.op_type(), BatchDims(x.dims()), BatchDims(yd), x.dims(), yd);
  const int64_t m = x.dims().back(), k = yd.back(), xn = DimsProduct(BatchDims(x.dims()));
  BatchGrad<T> dx(ctx, "X"), dy(ctx, "Y");
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const auto lu = Factor<T>(ctx, x.data<T>() + p.xi[e] * m * m, m, p.xi[e], xn);
    const Matrix<T> db = lu.transpose().solve(ConstMatrixMap<T>(dout.data<T>() + e * m * k, m, k));
    if (dy) MatrixMap<T>(dy.data + p.yi[e] * m * k, m, k) += db;
    if (dx)
      MatrixMap<T>(dx.data + p.xi[e] * m * m, m, m) -=
          db * ConstMatrixMap<T>(out.data<T>() + e * m * k, m, k).transpose();
  }
}

void SolveInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", SolveDims(ctx.op_type(), ctx.InputDims("X"), ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("solve")
                     .Comment("Out solves X Out = Y per matrix (paddle.linalg.solve); the batch "
                              "dims broadcast; Y a vector [M] (or X's dims but the last) gives "
                              "Out [batch..., M].")
                     .Input("X", "square matrices [..., M, M]")
                     .Input("Y", "right-hand sides [..., M, K], or vectors")
                     .Output("Out", "the solutions")
                     .InferShape(SolveInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("solve_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("solve_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape(XYGradInferShape));
TIDE_REGISTER_KERNEL("solve", "cpu", SolveKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("solve_grad", "cpu", SolveGradKernel, OPS_LINALG_FLOAT_TYPES);
