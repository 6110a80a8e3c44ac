// tril_triu_op.cc: tril_triu (paddle.tril / paddle.triu: the lower or upper triangle of X's last
// two dims from `diagonal`, the rest 0) and its grad (Out@GRAD masked the same way), by the rule
// of tide/ops/tril_triu.hpp.
#include <algorithm>
#include <tide/ops/tril_triu.hpp>

#include "common.h"

namespace ops_nn {
namespace {

void TrilTriuInferShape(tide::InferShapeContext& ctx) {
  tide::ops::CheckTrilTriuDims(ctx.op_type(), ctx.InputDims("X"));
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Out = in where the triangle keeps the element, else 0: row by row, the kept columns of row i
// ([0, i + diagonal] for tril, [i + diagonal, cols) for triu: TrilTriuShape::Keeps) copied and the
// others zeroed (Keeps per element, a division and a modulo each, took 1.3 ms for a causal mask
// [1, 16, 128, 128]).
template <typename T>
void MaskTriangle(KernelContext& ctx, const char* in_param, const char* out_param) {
  Tensor in = ctx.Input(in_param);
  const auto shape = tide::ops::GetTrilTriuShape(ctx, in.dims());
  const T* x = in.data<T>();
  T* o = ctx.Output(out_param).mutable_data<T>(in.dims(), ctx.place());
  const int64_t cols = shape.cols, n = in.numel();
  for (int64_t r = 0, rows_all = cols ? n / cols : 0; r < rows_all; ++r) {
    const int64_t i = r % shape.rows;
    // Columns [begin, end) keep X's values.
    const int64_t edge = i + shape.diagonal;
    const int64_t begin = shape.lower ? 0 : std::clamp<int64_t>(edge, 0, cols);
    const int64_t end = shape.lower ? std::clamp<int64_t>(edge + 1, 0, cols) : cols;
    const T* xr = x + r * cols;
    T* orow = o + r * cols;
    std::fill(orow, orow + begin, T(0));
    std::copy(xr + begin, xr + end, orow + begin);
    std::fill(orow + end, orow + cols, T(0));
  }
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
