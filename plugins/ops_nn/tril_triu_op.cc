// tril_triu_op.cc: tril_triu (paddle.tril / paddle.triu: the lower or upper triangle of X's last
// two dims from `diagonal`, the rest 0) and its grad (Out@GRAD masked the same way), by the rule
// of tide/ops/tril_triu.hpp.
#include <tide/ops/tril_triu.hpp>

#include "common.h"

namespace ops_nn {
namespace {

void TrilTriuInferShape(tide::InferShapeContext& ctx) {
  tide::ops::CheckTrilTriuDims(ctx.op_type(), ctx.InputDims("X"));
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Out = in where the triangle keeps the element, else 0.
template <typename T>
void MaskTriangle(KernelContext& ctx, const char* in_param, const char* out_param) {
  Tensor in = ctx.Input(in_param);
  const auto shape = tide::ops::GetTrilTriuShape(ctx, in.dims());
  const T* x = in.data<T>();
  T* o = ctx.Output(out_param).mutable_data<T>(in.dims(), ctx.place());
  for (int64_t e = 0, n = in.numel(); e < n; ++e) o[e] = shape.Keeps(e) ? x[e] : T(0);
}

template <typename T>
void TrilTriuKernel(KernelContext& ctx) {
  MaskTriangle<T>(ctx, "X", "Out");
}

template <typename T>
void TrilTriuGradKernel(KernelContext& ctx) {
  MaskTriangle<T>(ctx, GradVarName("Out").c_str(), GradVarName("X").c_str());
}

tide::OpSchema TrilTriuAttrs(tide::OpSchema s) {
  return s.Attr("diagonal", int32_t(0), "the triangle's edge: 0 the main diagonal, > 0 above it")
      .Attr("lower", false, "true: tril (j - i <= diagonal kept), false: triu (j - i >= diagonal)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    TrilTriuAttrs(tide::OpSchema("tril_triu")
                      .Comment("Out = X's lower (lower) or upper triangle of its last two "
                               "dims from `diagonal`, other elements 0.")
                      .Input("X", "a tensor of rank >= 2")
                      .Output("Out", "X's dims")
                      .InferShape(TrilTriuInferShape)
                      .Grad([](tide::GradMaker& g) {
                        g.NewOp("tril_triu_grad")
                            .Input(GradVarName("Out"), g.OutputGrad("Out"))
                            .Output(GradVarName("X"), g.InputGrad("X"))
                            .CopyAttrs();
                      })));
TIDE_REGISTER_OP(TrilTriuAttrs(tide::OpSchema("tril_triu_grad")
                                   .Comment("X@GRAD = Out@GRAD in the triangle, 0 elsewhere.")
                                   .Input(GradVarName("Out"), "gradient of Out")
                                   .Output(GradVarName("X"), "gradient of X")
                                   .InferShape(tide::SameShapeAsInput(GradVarName("Out").c_str(),
                                                                      GradVarName("X").c_str()))));
TIDE_REGISTER_KERNEL("tril_triu", "cpu", TrilTriuKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("tril_triu_grad", "cpu", TrilTriuGradKernel, OPS_NN_FLOAT_TYPES);
