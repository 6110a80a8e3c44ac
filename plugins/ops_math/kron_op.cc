// kron_op.cc: Paddle's kron (paddle.kron: the Kronecker product; the operand of lower rank gets
// leading 1s, Out[i] = X[i / Y.dims] * Y[i % Y.dims] per dim, Out.dims = X.dims * Y.dims) and
// its grad (each operand's gradient: Out@GRAD times the other operand, summed over its blocks).
#include <string>
#include <vector>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// X's and Y's dims, padded with leading 1s to one rank.
void PadToOneRank(Dims* x, Dims* y) {
  while (x->size() < y->size()) x->insert(x->begin(), 1);
  while (y->size() < x->size()) y->insert(y->begin(), 1);
}

Dims KronDims(Dims x, Dims y) {
  PadToOneRank(&x, &y);
  Dims out(x.size());
  for (size_t k = 0; k < x.size(); ++k) out[k] = x[k] < 0 || y[k] < 0 ? -1 : x[k] * y[k];
  return out;
}

// fn(o, i, j) for every element o of Out, with its X element i and Y element j.
template <typename F>
void ForEachKron(Dims x, Dims y, F&& fn) {
  PadToOneRank(&x, &y);
  const size_t rank = x.size();
  const int64_t nx = DimsProduct(x), ny = DimsProduct(y);
  if (nx == 0 || ny == 0) return;
  std::vector<int64_t> xst(rank, 1), yst(rank, 1);
  for (int k = static_cast<int>(rank) - 2; k >= 0; --k) {
    xst[k] = xst[k + 1] * x[k + 1];
    yst[k] = yst[k + 1] * y[k + 1];
  }
  // Walk X's and Y's indices together: Out's index is (ix * y + iy) per dim, row-major over the
  // interleaved dims (x0, y0, x1, y1, ...).
  std::vector<int64_t> ix(rank, 0), iy(rank, 0);
  const int64_t total = nx * ny;
  for (int64_t o = 0; o < total; ++o) {
    int64_t i = 0, j = 0;
    for (size_t k = 0; k < rank; ++k) {
      i += ix[k] * xst[k];
      j += iy[k] * yst[k];
    }
    fn(o, i, j);
    for (int k = static_cast<int>(rank) - 1; k >= 0; --k) {
      if (++iy[k] < y[k]) break;
      iy[k] = 0;
      if (++ix[k] < x[k]) break;
      ix[k] = 0;
    }
  }
}

void KronInferShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(ctx.InputDataType("X") == ctx.InputDataType("Y"), "op '", ctx.op_type(), "': X is ",
             tide::DataTypeName(ctx.InputDataType("X")), " but Y is ",
             tide::DataTypeName(ctx.InputDataType("Y")));
  ctx.SetOutputDims("Out", KronDims(ctx.InputDims("X"), ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void KronKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const T *xd = x.data<T>(), *yd = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(KronDims(x.dims(), y.dims()), ctx.place());
  ForEachKron(x.dims(), y.dims(), [&](int64_t e, int64_t i, int64_t j) { o[e] = xd[i] * yd[j]; });
}

template <typename T>
void KronGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const T *xd = x.data<T>(), *yd = y.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  const std::string dxn = GradVarName("X"), dyn = GradVarName("Y");
  T* dx = nullptr;
  T* dy = nullptr;
  if (ctx.HasOutput(dxn.c_str())) {
    dx = ctx.Output(dxn.c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  if (ctx.HasOutput(dyn.c_str())) {
    dy = ctx.Output(dyn.c_str()).mutable_data<T>(y.dims(), ctx.place());
    std::fill(dy, dy + y.numel(), T(0));
  }
  ForEachKron(x.dims(), y.dims(), [&](int64_t e, int64_t i, int64_t j) {
    if (dx) dx[i] += g[e] * yd[j];
    if (dy) dy[j] += g[e] * xd[i];
  });
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("kron")
                     .Comment("Out = the Kronecker product of X and Y (paddle.kron); the lower "
                              "rank gets leading 1s.")
                     .Input("X", "the left operand")
                     .Input("Y", "the right operand, X's type")
                     .Output("Out", "dims X.dims * Y.dims")
                     .InferShape(KronInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("kron_grad")
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("kron_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Output(GradVarName("Y"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradsLikeXY));
TIDE_REGISTER_KERNEL("kron", "cpu", KronKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("kron_grad", "cpu", KronGradKernel, OPS_MATH_FLOAT_TYPES);
