// matmul_v2_op.cc: Paddle 2.x's matmul_v2 (numpy's matmul: trans_x / trans_y, batch dims
// broadcast numpy-style, a 1-D operand is a vector whose unit dim is dropped from Out; no alpha)
// and its grad (each input's gradient summed over the batch dims it was broadcast along; of
// complex values, dX = dOut conj(Y)^T and dY = conj(X)^T dOut, common.h's convention); the
// forward CPU kernel is the SDK's header-only tide/kernels/matmul_v2.hpp (for float / double
// with one GEMM for a batch of X over one Y: MatmulV2Kernel).
#include <algorithm>
#include <cstring>
#include <string>
#include <tide/kernels/matmul_v2.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/matmul_v2.hpp>
#include <vector>

#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetMatmulV2Shape;
using tide::ops::MatmulV2Shape;

// The float32 / float64 forward: the SDK's kernel (one GEMM per batch matrix), except that a
// batch of X's matrices over one Y matrix, untransposed X (a linear layer on [B, S, K]: B
// matrices of S rows), is one GEMM of B * S rows, so Y is read once: a LLaMA decode step at
// batch 4 (S = 1) ran 4 GEMVs per projection, each reading the weights again (its LM head's
// 131 MB four times).
template <typename T>
void MatmulV2Kernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMatmulV2Args<T>(ctx);
  const MatmulV2Shape& s = a.s;
  bool rows = s.batch > 1 && !s.tx && s.k > 0;
  for (int64_t b = 0; rows && b < s.batch; ++b) rows = s.x_off[b] == b && s.y_off[b] == 0;
  if (!rows) return tide::kernels::MatmulV2<T>(ctx);
  Gemm<T>(ctx, false, s.ty, s.batch * s.m, s.n, s.k, T(1), a.x, a.y, T(0), a.out);
}

void MatmulV2InferShape(tide::InferShapeContext& ctx) {
  TideDataType xt = ctx.InputDataType("X"), yt = ctx.InputDataType("Y");
  TIDE_CHECK(xt == TIDE_UNDEFINED || yt == TIDE_UNDEFINED || xt == yt, "op 'matmul_v2': X is ",
             tide::DataTypeName(xt), " but Y is ", tide::DataTypeName(yt));
  ctx.SetOutputDims("Out",
                    GetMatmulV2Shape("matmul_v2", ctx.InputDims("X"), ctx.InputDims("Y"),
                                     ctx.Attr<bool>("trans_x"), ctx.Attr<bool>("trans_y"), false)
                        .out);
  ctx.SetOutputDataType("Out", xt);
}

// dX_b += dOut_b op(Y_b)^T (or its transpose when trans_x), dY_b += op(X_b)^T dOut_b (likewise);
// a broadcast operand's matrices collect the sum over the batches that share them. Complex X and
// Y enter conjugated (a copy each).
template <typename T>
void MatmulV2GradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMatmulV2GradArgs<T>(ctx);
  const MatmulV2Shape& s = a.s;
  const int64_t xs = s.m * s.k, ys = s.k * s.n, gs = s.m * s.n;
  const bool tx = s.tx, ty = s.ty;
  if (a.dx) {
    const T* y = ConjugatedIfComplex(ctx, a.y, a.y_numel);
    std::fill(a.dx, a.dx + a.x_numel, T(0));
    for (int64_t b = 0; gs > 0 && b < s.batch; ++b) {
      const T* yb = y + s.y_off[b] * ys;
      const T* g = a.dout + b * gs;
      T* db = a.dx + s.x_off[b] * xs;
      if (!tx)
        Gemm<T>(ctx, false, !ty, s.m, s.k, s.n, T(1), g, yb, T(1), db);
      else
        Gemm<T>(ctx, ty, true, s.k, s.m, s.n, T(1), yb, g, T(1), db);
    }
  }
  if (a.dy) {
    const T* x = ConjugatedIfComplex(ctx, a.x, a.x_numel);
    std::fill(a.dy, a.dy + a.y_numel, T(0));
    for (int64_t b = 0; gs > 0 && b < s.batch; ++b) {
      const T* xb = x + s.x_off[b] * xs;
      const T* g = a.dout + b * gs;
      T* db = a.dy + s.y_off[b] * ys;
      if (!ty)
        Gemm<T>(ctx, !tx, false, s.k, s.n, s.m, T(1), xb, g, T(1), db);
      else
        Gemm<T>(ctx, true, tx, s.n, s.k, s.m, T(1), g, xb, T(1), db);
    }
  }
}

// An ints attribute that must stay empty: Paddle's oneDNN fusion passes set fused_* on
// matmul_v2 in an optimised program; a saved model has them empty.
tide::AttrCheckFn MustBeEmpty(std::string name) {
  return [name](const TideAttrValue& v) {
    TIDE_CHECK(v.count == 0, "attribute '", name,
               "' (a Paddle oneDNN fusion) is not supported; "
               "export the model without Paddle's inference optimisations");
  };
}

// Paddle's attributes, and the backend hints its programs carry on matmul_v2.
tide::OpSchema MatmulV2Attrs(tide::OpSchema s) {
  s.Attr("trans_x", false, "use X^T (ignored for a 1-D X)")
      .Attr("trans_y", false, "use Y^T (ignored for a 1-D Y)")
      .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)")
      .Attr("force_fp32_output", false, "int8 hint of Paddle's oneDNN kernel (ignored)");
  for (const char* f : {"fused_reshape_Out", "fused_transpose_Out", "fused_reshape_X",
                        "fused_reshape_Y", "fused_transpose_X", "fused_transpose_Y"})
    s.Attr(f, std::vector<int32_t>{}, "Paddle oneDNN fusion; must be empty").Check(MustBeEmpty(f));
  return s;
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(MatmulV2Attrs(
    tide::OpSchema("matmul_v2")
        .Comment("Out = op(X) @ op(Y) as numpy.matmul: the last two dims are matrices, the "
                 "leading (batch) dims broadcast; a 1-D X is a row and a 1-D Y a column "
                 "whose unit dim Out drops. op() transposes when trans_x / trans_y.")
        .Input("X", "left operand, rank >= 1")
        .Input("Y", "right operand, rank >= 1")
        .Output("Out", "the product")
        .InferShape(MatmulV2InferShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("matmul_v2_grad")
              .Input("X", g.Input("X"))
              .Input("Y", g.Input("Y"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .Output(GradVarName("Y"), g.InputGrad("Y"))
              .CopyAttrs();
        })));
TIDE_REGISTER_OP(MatmulV2Attrs(tide::OpSchema("matmul_v2_grad")
                                   .Comment("X@GRAD and Y@GRAD of matmul_v2.")
                                   .Input("X", "the forward left operand")
                                   .Input("Y", "the forward right operand")
                                   .Input(GradVarName("Out"), "gradient of Out")
                                   .Output(GradVarName("X"), "gradient of X")
                                   .AsDispensable()
                                   .Output(GradVarName("Y"), "gradient of Y")
                                   .AsDispensable()
                                   .InferShape(GradsLikeXY)));
// complex64 / complex128: Eigen's product; trans_x / trans_y transpose without conjugating, as
// Paddle's (the grad conjugates, by the gradient convention).
TIDE_REGISTER_KERNEL("matmul_v2", "cpu", MatmulV2Kernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("matmul_v2", "cpu", tide::kernels::MatmulV2, OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("matmul_v2_grad", "cpu", MatmulV2GradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
