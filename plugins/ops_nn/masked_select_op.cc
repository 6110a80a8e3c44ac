// masked_select_op.cc: Paddle 2.x's masked_select (paddle.masked_select): Y = the elements of X
// where Mask (bool) holds, in row-major order, X and Mask broadcast numpy-style; Y is 1-D, its
// length known at run time. The grad puts Y@GRAD back at those elements (0 elsewhere), summed
// over the dims X was broadcast along.
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_nn {
namespace {

void MaskedSelectInferShape(tide::InferShapeContext& ctx) {
  const TideDataType t = ctx.InputDataType("Mask");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_BOOL, "op '", ctx.op_type(), "': Mask ('",
             ctx.InputName("Mask"), "') must be bool, got ", tide::DataTypeName(t));
  if (ctx.IsRuntime()) return;  // the kernel sets Y's length
  ctx.SetOutputDims("Y", {-1});
  ctx.SetOutputDataType("Y", ctx.InputDataType("X"));
}

// fn(k, xi) for the k-th selected element, X's element xi.
template <typename F>
void ForEachSelected(const KernelContext& ctx, const Tensor& x, const Tensor& mask, F&& fn) {
  TIDE_CHECK(mask.dtype() == TIDE_BOOL, "op '", ctx.op_type(), "': Mask ('", ctx.InputName("Mask"),
             "') must be bool, got ", tide::DataTypeName(mask.dtype()));
  const bool* m = mask.data<bool>();
  if (x.dims() == mask.dims()) {
    int64_t k = 0;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (m[i]) fn(k++, i);
    return;
  }
  const auto b = tide::ops::GetNumpyBroadcast(ctx.op_type(), x.dims(), mask.dims());
  int64_t k = 0, xi, mi;
  for (int64_t e = 0; e < b.numel; ++e) {
    b.Index(e, &xi, &mi);
    if (m[mi]) fn(k++, xi);
  }
}

template <typename T>
void MaskedSelectKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), mask = ctx.Input("Mask");
  std::vector<int64_t> picked;
  ForEachSelected(ctx, x, mask, [&](int64_t, int64_t xi) { picked.push_back(xi); });
  const T* xd = x.data<T>();
  T* y = ctx.Output("Y").mutable_data<T>({static_cast<int64_t>(picked.size())}, ctx.place());
  for (size_t k = 0; k < picked.size(); ++k) y[k] = xd[picked[k]];
}

template <typename T>
void MaskedSelectGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), mask = ctx.Input("Mask");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const T* g = dy.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  const int64_t n = dy.numel();
  ForEachSelected(ctx, x, mask, [&](int64_t k, int64_t xi) {
    TIDE_CHECK(k < n, "op '", ctx.op_type(), "': Y@GRAD holds ", n,
               " values, fewer than Mask selects");
    dx[xi] += g[k];
  });
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("masked_select")
                     .Comment("Y = X's elements where Mask holds, 1-D (paddle.masked_select); X "
                              "and Mask broadcast numpy-style.")
                     .Input("X", "the input")
                     .Input("Mask", "bool")
                     .Output("Y", "the selected elements, 1-D")
                     .KernelDataTypeFrom("X")
                     .InferShape(MaskedSelectInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("masked_select_grad")
                           .Input("X", g.Input("X"))
                           .Input("Mask", g.Input("Mask"))
                           .Input(GradVarName("Y"), g.OutputGrad("Y"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("masked_select_grad")
                     .Input("X")
                     .Input("Mask")
                     .Input(GradVarName("Y"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("masked_select", "cpu", MaskedSelectKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("masked_select_grad", "cpu", MaskedSelectGradKernel, OPS_NN_FLOAT_TYPES);
