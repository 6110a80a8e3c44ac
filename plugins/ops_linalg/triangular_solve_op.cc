// triangular_solve_op.cc: Paddle's triangular_solve (paddle.linalg.triangular_solve: Out solves
// op(X) Out = Y per matrix, X [..., M, M] triangular (upper, else lower; only that triangle is
// read, and not the diagonal with unitriangular, taken as 1s), op(X) = X^T with transpose; Y
// [..., M, K]; the batch dims broadcast) and its grad: dY = op(X)^-T dOut, dX = -dY Out^T (or
// -Out dY^T with transpose) on X's triangle (its diagonal 0 with unitriangular), each summed
// over the batch dims it was repeated along.
#include "common.h"

namespace ops_linalg {
namespace {

struct TriangularAttrs {
  bool upper, transpose, unitriangular;
  explicit TriangularAttrs(const KernelContext& ctx)
      : upper(ctx.Attr<bool>("upper")),
        transpose(ctx.Attr<bool>("transpose")),
        unitriangular(ctx.Attr<bool>("unitriangular")) {}
};

// op(A)^-1 B, or op(A)^-T B with `flip`, for A triangular as `t` says.
template <typename T>
Matrix<T> Solve(const Matrix<T>& a, const Matrix<T>& b, const TriangularAttrs& t, bool flip) {
  const bool tr = t.transpose != flip;
  const Matrix<T> m = tr ? Matrix<T>(a.transpose()) : a;
  const bool upper = t.upper != tr;  // A^T's triangle is the other one
  if (upper)
    return t.unitriangular ? Matrix<T>(m.template triangularView<Eigen::UnitUpper>().solve(b))
                           : Matrix<T>(m.template triangularView<Eigen::Upper>().solve(b));
  return t.unitriangular ? Matrix<T>(m.template triangularView<Eigen::UnitLower>().solve(b))
                         : Matrix<T>(m.template triangularView<Eigen::Lower>().solve(b));
}

template <typename T>
void TriangularSolveKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const char* op = ctx.op_type();
  const Dims od = SolveOutDims(op, "X", x.dims(), "Y", y.dims());
  const BatchPairs p =
      PairBatches(op, BatchDims(x.dims()), BatchDims(y.dims()), x.dims(), y.dims());
  const TriangularAttrs t(ctx);
  const int64_t m = od[od.size() - 2], k = od.back();
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const Matrix<T> a = ConstMatrixMap<T>(x.data<T>() + p.xi[e] * m * m, m, m);
    const Matrix<T> b = ConstMatrixMap<T>(y.data<T>() + p.yi[e] * m * k, m, k);
    MatrixMap<T>(out + e * m * k, m, k) = Solve<T>(a, b, t, false);
  }
}

template <typename T>
void TriangularSolveGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const BatchPairs p =
      PairBatches(ctx.op_type(), BatchDims(x.dims()), BatchDims(y.dims()), x.dims(), y.dims());
  const TriangularAttrs t(ctx);
  const int64_t m = out.dims()[out.dims().size() - 2], k = out.dims().back();
  BatchGrad<T> dx(ctx, "X"), dy(ctx, "Y");
  for (size_t e = 0; e < p.xi.size(); ++e) {
    const Matrix<T> a = ConstMatrixMap<T>(x.data<T>() + p.xi[e] * m * m, m, m);
    const Matrix<T> g = ConstMatrixMap<T>(dout.data<T>() + e * m * k, m, k);
    const Matrix<T> db = Solve<T>(a, g, t, true);
    if (dy) MatrixMap<T>(dy.data + p.yi[e] * m * k, m, k) += db;
    if (!dx) continue;
    ConstMatrixMap<T> o(out.data<T>() + e * m * k, m, k);
    Matrix<T> da = t.transpose ? Matrix<T>(-o * db.transpose()) : Matrix<T>(-db * o.transpose());
    if (t.upper)
      da = da.template triangularView<Eigen::Upper>();
    else
      da = da.template triangularView<Eigen::Lower>();
    if (t.unitriangular) da.diagonal().setZero();
    MatrixMap<T>(dx.data + p.xi[e] * m * m, m, m) += da;
  }
}

void TriangularSolveInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out",
                    SolveOutDims(ctx.op_type(), "X", ctx.InputDims("X"), "Y", ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("triangular_solve")
                     .Comment("Out solves op(X) Out = Y per matrix, X triangular (paddle.linalg."
                              "triangular_solve); the batch dims broadcast.")
                     .Input("X", "triangular matrices [..., M, M]")
                     .Input("Y", "right-hand sides [..., M, K]")
                     .Output("Out", "the solutions [batch..., M, K]")
                     .Attr("upper", true,
                           "X upper triangular (else lower): only that triangle is read")
                     .Attr("transpose", false, "solve X^T Out = Y")
                     .Attr("unitriangular", false, "X's diagonal taken as 1s (not read)")
                     .InferShape(TriangularSolveInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("triangular_solve_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("triangular_solve_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("upper", true)
                     .Attr("transpose", false)
                     .Attr("unitriangular", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(XYGradInferShape));
TIDE_REGISTER_KERNEL("triangular_solve", "cpu", TriangularSolveKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("triangular_solve_grad", "cpu", TriangularSolveGradKernel,
                     OPS_LINALG_FLOAT_TYPES);
