// cholesky_solve_op.cc: Paddle's cholesky_solve (paddle.linalg.cholesky_solve(x, y, upper): Out
// solves A Out = X per matrix with A = Y Y^T, Y the lower Cholesky factor, or A = Y^T Y with
// upper; only that triangle of Y is read; X [..., M, K], Y [..., M, M], the batch dims broadcast)
// and its grad: dX = A^-1 dOut, dY = -(dX Out^T + Out dX^T) Y (upper: -Y (...)) on Y's triangle,
// each summed over the batch dims it was repeated along.
#include "common.h"

namespace ops_linalg {
namespace {

// A^-1 B with A = L L^T from the triangle of `f` (U^T U with upper): two triangular solves.
template <typename T, typename B>
Matrix<T> CholeskySolve(const Matrix<T>& f, const B& b, bool upper) {
  if (upper) {
    const auto u = f.template triangularView<Eigen::Upper>();
    return u.solve(Matrix<T>(u.transpose().solve(b)));
  }
  const auto l = f.template triangularView<Eigen::Lower>();
  return l.transpose().solve(Matrix<T>(l.solve(b)));
}

template <typename T>
void CholeskySolveKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const char* op = ctx.op_type();
  const Dims od = SolveOutDims(op, "Y", y.dims(), "X", x.dims());
  const BatchPairs p =
      PairBatches(op, BatchDims(x.dims()), BatchDims(y.dims()), x.dims(), y.dims());
  const bool upper = ctx.Attr<bool>("upper");
  const int64_t m = od[od.size() - 2], k = od.back();
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const Matrix<T> f = ConstMatrixMap<T>(y.data<T>() + p.yi[e] * m * m, m, m);
    MatrixMap<T>(out + e * m * k, m, k) =
        CholeskySolve<T>(f, ConstMatrixMap<T>(x.data<T>() + p.xi[e] * m * k, m, k), upper);
  }
}

template <typename T>
void CholeskySolveGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const BatchPairs p =
      PairBatches(ctx.op_type(), BatchDims(x.dims()), BatchDims(y.dims()), x.dims(), y.dims());
  const bool upper = ctx.Attr<bool>("upper");
  const int64_t m = out.dims()[out.dims().size() - 2], k = out.dims().back();
  BatchGrad<T> dx(ctx, "X"), dy(ctx, "Y");
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const Matrix<T> f = ConstMatrixMap<T>(y.data<T>() + p.yi[e] * m * m, m, m);
    const Matrix<T> db =
        CholeskySolve<T>(f, ConstMatrixMap<T>(dout.data<T>() + e * m * k, m, k), upper);
    if (dx) MatrixMap<T>(dx.data + p.xi[e] * m * k, m, k) += db;
    if (!dy) continue;
    ConstMatrixMap<T> o(out.data<T>() + e * m * k, m, k);
    const Matrix<T> s = db * o.transpose() + o * db.transpose();
    MatrixMap<T> g(dy.data + p.yi[e] * m * m, m, m);
    if (upper)
      g -= Matrix<T>(f.template triangularView<Eigen::Upper>() * s)
               .template triangularView<Eigen::Upper>();
    else
      g -= Matrix<T>(s * f.template triangularView<Eigen::Lower>())
               .template triangularView<Eigen::Lower>();
  }
}

void CholeskySolveInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out",
                    SolveOutDims(ctx.op_type(), "Y", ctx.InputDims("Y"), "X", ctx.InputDims("X")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("cholesky_solve")
                     .Comment("Out solves (Y Y^T) Out = X per matrix, Y a lower Cholesky factor "
                              "(Y^T Y, upper, with upper) (paddle.linalg.cholesky_solve); the "
                              "batch dims broadcast.")
                     .Input("X", "right-hand sides [..., M, K]")
                     .Input("Y", "Cholesky factors [..., M, M] (only the triangle is read)")
                     .Output("Out", "the solutions [batch..., M, K]")
                     .Attr("upper", false, "Y upper triangular (A = Y^T Y) rather than lower")
                     .InferShape(CholeskySolveInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("cholesky_solve_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("cholesky_solve_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("upper", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(XYGradInferShape));
TIDE_REGISTER_KERNEL("cholesky_solve", "cpu", CholeskySolveKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cholesky_solve_grad", "cpu", CholeskySolveGradKernel, OPS_LINALG_FLOAT_TYPES);
