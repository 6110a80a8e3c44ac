// metric_ops.cc: top_k (the k largest values of the last axis and their int64 indices, ties by
// lower index; the selection is top_k.h's, shared with top_k_v2) with its grad, and accuracy (top-k
// hits against int64 labels; no grad).
#include <algorithm>
#include <numeric>
#include <tide/ops/int_inputs.hpp>
#include <tide/ops/metric.hpp>

#include "common.h"
#include "top_k.h"

namespace ops_nn {
namespace {

// ---------------------------------------------------------------------------------------------
// top_k: Fluid's K input (an int tensor of one value) overrides the attribute k at run time; at
// compile time Out's last dim is then unknown.
void TopKInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  const bool k_tensor = ctx.HasInput("K");
  const int64_t k = ctx.Attr<int32_t>("k");
  if (!k_tensor || !ctx.IsRuntime()) {  // at run time the kernel reads K
    const Dims out = tide::ops::TopKOutDims(op, x, k_tensor ? nullptr : &k);
    ctx.SetOutputDims("Out", out);
    ctx.SetOutputDims("Indices", out);
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDataType("Indices", TIDE_INT64);
  ctx.ShareLoD("X", "Out");
  ctx.ShareLoD("X", "Indices");
}

template <typename T>
void TopKKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetTopKArgs<T>(ctx);
  TopKLines(ctx, a.x, a.rows, a.d, 1, a.k, true, true, a.out, a.indices);
}

// X@GRAD[Indices[r, j]] = Out@GRAD[r, j], 0 elsewhere.
template <typename T>
void TopKGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetTopKGradArgs<T>(ctx);
  const auto [rows, d, k] = a.v;
  std::fill(a.dx, a.dx + rows * d, T(0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t c = a.indices[r * k + j];
      TIDE_CHECK(c >= 0 && c < d, "op '", ctx.op_type(), "': Indices[", r * k + j, "] = ", c,
                 " is out of range [0, ", d, ")");
      a.dx[r * d + c] += a.dout[r * k + j];
    }
}

// ---------------------------------------------------------------------------------------------
// accuracy
void AccuracyInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims out = ctx.InputDims("Out"), ind = ctx.InputDims("Indices"), label = ctx.InputDims("Label");
  TIDE_CHECK(ind.size() == 2, "op '", op, "': Indices must be 2-D [N, k], got ",
             tide::ToString(ind));
  TIDE_CHECK(out.size() == 2 && DimsCompatible(out[0], ind[0]) && DimsCompatible(out[1], ind[1]),
             "op '", op, "': Out ", tide::ToString(out), " must have Indices' dims ",
             tide::ToString(ind));
  TIDE_CHECK(label.size() == 2 && DimsCompatible(label[1], 1) && DimsCompatible(label[0], ind[0]),
             "op '", op, "': Label must be [N, 1] with N = Indices' ", ind[0], ", got ",
             tide::ToString(label));
  for (const char* p : {"Indices", "Label"}) {
    TideDataType t = ctx.InputDataType(p);
    TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT64, "op '", op, "': ", p, " ('",
               ctx.InputName(p), "') must be int64, got ", tide::DataTypeName(t));
  }
  ctx.SetOutputDims("Accuracy", {1});
  ctx.SetOutputDataType("Accuracy", TIDE_FP32);
  ctx.SetOutputDims("Correct", {1});
  ctx.SetOutputDataType("Correct", TIDE_INT32);
  ctx.SetOutputDims("Total", {1});
  ctx.SetOutputDataType("Total", TIDE_INT32);
}

template <typename T>
void AccuracyKernel(KernelContext& ctx) {
  const tide::ops::AccuracyArgs a = tide::ops::GetAccuracyArgs(ctx);
  int64_t correct = 0;
  for (int64_t i = 0; i < a.n; ++i)
    for (int64_t j = 0; j < a.k; ++j)
      if (a.indices[i * a.k + j] == a.label[i]) {
        ++correct;
        break;
      }
  *a.accuracy = a.n ? static_cast<float>(correct) / static_cast<float>(a.n) : 0.0f;
  *a.correct = static_cast<int32_t>(correct);
  *a.total = static_cast<int32_t>(a.n);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("top_k")
        .Comment("The k largest entries of each row (last axis) of X in descending "
                 "order, and their positions; equal values keep the lower index first.")
        .Input("X", "the input, [..., D]")
        .Input("K", "k as an int32/int64 tensor of one value (optional; over the attribute)")
        .AsDispensable()
        .Output("Out", "the values, [..., k]")
        .Output("Indices", "int64 positions in the last axis, [..., k]")
        .Attr("k", int32_t(1), "how many entries per row")
        .GreaterThan(0)
        .InferShape(TopKInferShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("top_k_grad")
              .Input("X", g.Input("X"))
              .Input("Indices", g.Output("Indices"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("top_k_grad")
                     .Comment("X@GRAD of top_k: Out@GRAD scattered to Indices, 0 elsewhere.")
                     .Input("X", "the forward input (for its dims)")
                     .Input("Indices", "the forward indices")
                     .Input(GradVarName("Out"), "gradient of Out")
                     .Output(GradVarName("X"), "gradient of X")
                     .Attr("k", int32_t(1), "the forward k")
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("top_k", "cpu", TopKKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("top_k_grad", "cpu", TopKGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("accuracy")
                     .NoGradient()
                     .Comment("Top-k accuracy: a sample is correct when its label is among its k "
                              "Indices. Accuracy = Correct / Total.")
                     .Input("Out", "the top-k values (e.g. from top_k), [N, k]; picks the kernel")
                     .Input("Indices", "int64 top-k class ids, [N, k]")
                     .Input("Label", "int64 labels, [N, 1]")
                     .Output("Accuracy", "float32 [1]")
                     .Output("Correct", "int32 [1]: samples whose label is in the top k")
                     .Output("Total", "int32 [1]: N")
                     .KernelDataTypeFrom("Out")
                     .InferShape(AccuracyInferShape));
TIDE_REGISTER_KERNEL("accuracy", "cpu", AccuracyKernel, OPS_NN_FLOAT_TYPES);
