// meshgrid_op.cc: Paddle's meshgrid (paddle.meshgrid, numpy's indexing='ij'): for N inputs of
// sizes s0..sN-1 (1-D, or 0-D as one element), N outputs of dims [s0, ..., sN-1], the i-th
// repeating X[i] along dim i. The grad sums each Out[i]@GRAD over every dim but i.
#include <string>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// The grid's dims: one per input, its element count.
Dims GridDims(const char* op, const std::vector<Dims>& xs) {
  TIDE_CHECK(!xs.empty(), "op '", op, "': X needs at least one tensor");
  Dims grid;
  for (size_t i = 0; i < xs.size(); ++i) {
    TIDE_CHECK(xs[i].size() <= 1, "op '", op, "': X[", i, "] must be 1-D or 0-D, got ",
               tide::ToString(xs[i]));
    grid.push_back(xs[i].empty() ? 1 : xs[i][0]);
  }
  return grid;
}

void MeshgridInferShape(tide::InferShapeContext& ctx) {
  const Dims grid = GridDims(ctx.op_type(), ctx.InputsDims("X"));
  TIDE_CHECK(ctx.OutputCount("Out") == grid.size(), "op '", ctx.op_type(), "': Out needs ",
             grid.size(), " tensors (one per X), got ", ctx.OutputCount("Out"));
  for (size_t i = 0; i < grid.size(); ++i) {
    ctx.SetOutputDims("Out", grid, i);
    ctx.SetOutputDataType("Out", ctx.InputDataType("X", i), i);
  }
}

template <typename T>
void MeshgridKernel(KernelContext& ctx) {
  const std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const Tensor& x : xs) dims.push_back(x.dims());
  const Dims grid = GridDims(ctx.op_type(), dims);
  TIDE_CHECK(ctx.OutputCount("Out") == grid.size(), "op '", ctx.op_type(), "': Out needs ",
             grid.size(), " tensors (one per X), got ", ctx.OutputCount("Out"));
  for (size_t i = 0; i < xs.size(); ++i) {
    const T* x = xs[i].data<T>();
    T* o = ctx.Output("Out", i).mutable_data<T>(grid, ctx.place());
    ForEachIndex(grid, [&](const std::vector<int64_t>& idx, int64_t e) { o[e] = x[idx[i]]; });
  }
}

// X[i]@GRAD[k] = the sum of Out[i]@GRAD over the elements whose index i is k.
template <typename T>
void MeshgridGradKernel(KernelContext& ctx) {
  const std::string dout = GradVarName("Out"), dx = GradVarName("X");
  const std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const Tensor& x : xs) dims.push_back(x.dims());
  const Dims grid = GridDims(ctx.op_type(), dims);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!ctx.HasOutput(dx.c_str(), i)) continue;
    T* g = ctx.Output(dx.c_str(), i).mutable_data<T>(xs[i].dims(), ctx.place());
    std::fill(g, g + grid[i], T(0));
    if (!ctx.HasInput(dout.c_str(), i)) continue;  // that output took no gradient
    const T* d = ctx.Input(dout.c_str(), i).data<T>();
    ForEachIndex(grid, [&](const std::vector<int64_t>& idx, int64_t e) { g[idx[i]] += d[e]; });
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("meshgrid")
                     .Comment("Out[i] = X[i] repeated over the grid of every X's sizes, along "
                              "dim i (paddle.meshgrid, 'ij' indexing).")
                     .Input("X", "1-D (or 0-D) tensors")
                     .AsDuplicable()
                     .Output("Out", "one grid per X")
                     .AsDuplicable()
                     .InferShape(MeshgridInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("meshgrid_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("meshgrid_grad")
                     .Input("X")
                     .AsDuplicable()
                     .Input(GradVarName("Out"))
                     .AsDuplicable()
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("meshgrid", "cpu", MeshgridKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("meshgrid_grad", "cpu", MeshgridGradKernel, OPS_NN_FLOAT_TYPES);
