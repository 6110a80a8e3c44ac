// multiplex_op.cc: Paddle's multiplex (paddle.multiplex): row i of Out is row i of candidate
// X[Ids[i]] (X: several tensors of the same dims, rank >= 2; Ids int32 [M, 1]); the grad sends
// each row of Out@GRAD to the candidate it came from, zeros elsewhere.
#include <cstring>

#include "common.h"

namespace ops_nn {
namespace {

void MultiplexShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const size_t n = ctx.InputCount("X");
  TIDE_CHECK(n >= 1, "op '", op, "': X needs at least one candidate tensor");
  const Dims x0 = ctx.InputDims("X", 0);
  TIDE_CHECK(x0.size() >= 2, "op '", op, "': the candidates X must be at least 2-D, X[0] ('",
             ctx.InputName("X", 0), "') is ", tide::ToString(x0));
  for (size_t i = 1; i < n; ++i) {
    const Dims xi = ctx.InputDims("X", i);
    bool ok = xi.size() == x0.size();
    for (size_t d = 0; ok && d < xi.size(); ++d) ok = DimsCompatible(xi[d], x0[d]);
    TIDE_CHECK(ok, "op '", op, "': every candidate must have X[0]'s dims ", tide::ToString(x0),
               ", X[", i, "] ('", ctx.InputName("X", i), "') has ", tide::ToString(xi));
  }
  const Dims ids = ctx.InputDims("Ids");
  TIDE_CHECK(ids.size() == 2 && DimsCompatible(ids[1], 1) && DimsCompatible(ids[0], x0[0]), "op '",
             op, "': Ids ('", ctx.InputName("Ids"), "') must be [", x0[0],
             ", 1] (one candidate per row of X), got ", tide::ToString(ids));
  const TideDataType it = ctx.InputDataType("Ids");
  TIDE_CHECK(it == TIDE_UNDEFINED || it == TIDE_INT32, "op '", op, "': Ids ('",
             ctx.InputName("Ids"), "') must be int32, got ", tide::DataTypeName(it));
  ctx.SetOutputDims("Out", x0);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X", 0));
}

// The candidate index of each row, checked against the number of candidates.
std::vector<int32_t> RowChoices(const KernelContext& ctx, size_t candidates, int64_t rows) {
  Tensor ids = ctx.Input("Ids");
  TIDE_CHECK(ids.dtype() == TIDE_INT32 && ids.numel() == rows, "op '", ctx.op_type(), "': Ids ('",
             ctx.InputName("Ids"), "') must be int32 [", rows, ", 1], got ",
             tide::DataTypeName(ids.dtype()), " ", tide::ToString(ids.dims()));
  std::vector<int32_t> k(ids.data<int32_t>(), ids.data<int32_t>() + rows);
  for (int64_t i = 0; i < rows; ++i)
    TIDE_CHECK(k[i] >= 0 && static_cast<size_t>(k[i]) < candidates, "op '", ctx.op_type(),
               "': Ids ('", ctx.InputName("Ids"), "') holds ", k[i], " at row ", i,
               ", outside [0, ", candidates, ") (the candidates in X)");
  return k;
}

template <typename T>
void MultiplexKernel(KernelContext& ctx) {
  const size_t n = ctx.InputCount("X");
  Tensor x0 = ctx.Input("X", 0);
  for (size_t i = 1; i < n; ++i)
    TIDE_CHECK(ctx.Input("X", i).dims() == x0.dims(), "op '", ctx.op_type(),
               "': every candidate must have X[0]'s dims ", tide::ToString(x0.dims()), ", X[", i,
               "] ('", ctx.InputName("X", i), "') has ", tide::ToString(ctx.Input("X", i).dims()));
  const int64_t rows = x0.dim(0), cols = rows ? x0.numel() / rows : 0;
  const std::vector<int32_t> k = RowChoices(ctx, n, rows);
  T* out = ctx.Output("Out").mutable_data<T>(x0.dims(), ctx.place());
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(out + i * cols, ctx.Input("X", k[i]).data<T>() + i * cols, cols * sizeof(T));
}

template <typename T>
void MultiplexGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const std::string dx = GradVarName("X");
  const size_t n = ctx.OutputCount(dx.c_str());
  const int64_t rows = dout.rank() ? dout.dim(0) : 0, cols = rows ? dout.numel() / rows : 0;
  const std::vector<int32_t> k = RowChoices(ctx, n, rows);
  std::vector<T*> d(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.HasOutput(dx.c_str(), i)) continue;
    d[i] = ctx.Output(dx.c_str(), i).mutable_data<T>(dout.dims(), ctx.place());
    std::fill(d[i], d[i] + dout.numel(), T(0));
  }
  const T* g = dout.data<T>();
  for (int64_t i = 0; i < rows; ++i)
    if (d[k[i]]) std::memcpy(d[k[i]] + i * cols, g + i * cols, cols * sizeof(T));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("multiplex")
                     .Comment("Out[i] = X[Ids[i]][i]: each row from the candidate Ids names.")
                     .Input("X", "the candidates, of the same dims [M, ...] (rank >= 2)")
                     .AsDuplicable()
                     .Input("Ids", "int32 [M, 1]: the candidate of each row")
                     .Output("Out", "[M, ...]")
                     .KernelDataTypeFrom("X")
                     .InferShape(MultiplexShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("multiplex_grad")
                           .Input("Ids", g.Input("Ids"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("multiplex_grad")
                     .Input("Ids")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape([](tide::InferShapeContext& c) {
                       const std::string g = GradVarName("X"), go = GradVarName("Out");
                       for (size_t i = 0; i < c.OutputCount(g.c_str()); ++i) {
                         c.SetOutputDims(g.c_str(), c.InputDims(go.c_str()), i);
                         c.SetOutputDataType(g.c_str(), c.InputDataType(go.c_str()), i);
                       }
                     }));
TIDE_REGISTER_KERNEL("multiplex", "cpu", MultiplexKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("multiplex_grad", "cpu", MultiplexGradKernel, OPS_NN_FLOAT_TYPES);
