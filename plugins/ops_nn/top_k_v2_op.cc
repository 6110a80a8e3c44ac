// top_k_v2_op.cc: Paddle 2.x's top_k_v2 (paddle.topk): the k largest (or smallest) entries along
// any axis, sorted or in X's order, with int64 positions (the selection is top_k.h's), and its
// grad (Out@GRAD scattered back to the positions).
#include <tide/ops/axis.hpp>

#include "common.h"
#include "top_k.h"

namespace ops_nn {
namespace {

// Out's dims: X's with k along the axis (-1 when the K tensor gives k at run time).
Dims TopKV2Dims(const char* op, const Dims& x, int axis, const int64_t* k) {
  if (x.empty()) {  // a 0-D X: k must be 1, Out is 0-D (Paddle's rule)
    if (k) TIDE_CHECK(*k == 1, "op '", op, "': k = ", *k, " must be 1 for a 0-D X");
    return x;
  }
  const int a = NormAxis(op, axis, x.size());
  Dims out = x;
  if (k)
    TIDE_CHECK(*k >= 1 && (x[a] < 0 || *k <= x[a]), "op '", op, "': k = ", *k,
               " must be in [1, dim ", a, " of X ", tide::ToString(x), "]");
  out[a] = k ? *k : -1;
  return out;
}

void TopKV2InferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  const bool k_tensor = ctx.HasInput("K");
  if (!k_tensor || !ctx.IsRuntime()) {  // at run time the kernel reads K
    const int64_t k = ctx.Attr<int32_t>("k");
    const Dims out = TopKV2Dims(op, x, ctx.Attr<int32_t>("axis"), k_tensor ? nullptr : &k);
    ctx.SetOutputDims("Out", out);
    ctx.SetOutputDims("Indices", out);
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDataType("Indices", TIDE_INT64);
}

// X as [pre, n, post] around the axis (a 0-D X as one value).
tide::ops::AxisSplit TopKV2Split(const char* op, const Dims& x, int axis) {
  if (x.empty()) return {1, 1, 1, 0};
  return tide::ops::SplitAt(op, x, axis);
}

template <typename T>
void TopKV2Kernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  const int axis = ctx.Attr<int32_t>("axis");
  const int64_t k = ctx.HasInput("K") ? IntScalar(ctx, "K") : ctx.Attr<int32_t>("k");
  const Dims od = TopKV2Dims(op, x.dims(), axis, &k);
  const auto s = TopKV2Split(op, x.dims(), axis);
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  int64_t* ind = ctx.Output("Indices").mutable_data<int64_t>(od, ctx.place());
  TopKLines(ctx, x.data<T>(), s.pre, s.n, s.post, k, ctx.Attr<bool>("largest"),
            ctx.Attr<bool>("sorted"), out, ind);
}

// X@GRAD[.., Indices[.., j, ..], ..] += Out@GRAD[.., j, ..], 0 elsewhere.
template <typename T>
void TopKV2GradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), ind = ctx.Input("Indices");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const auto s = TopKV2Split(op, x.dims(), ctx.Attr<int32_t>("axis"));
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), ind.dims());
  const int64_t k = s.pre * s.post ? ind.numel() / (s.pre * s.post) : 0;
  TIDE_CHECK(k * s.pre * s.post == ind.numel(), "op '", op, "': Indices ",
             tide::ToString(ind.dims()), " do not fit X ", tide::ToString(x.dims()));
  const int64_t* id = ind.data<int64_t>();
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t p = 0; p < s.pre; ++p)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t q = 0; q < s.post; ++q) {
        const int64_t o = (p * k + j) * s.post + q;
        const int64_t c = id[o];
        TIDE_CHECK(c >= 0 && c < s.n, "op '", op, "': Indices[", o, "] = ", c,
                   " is out of range [0, ", s.n, ")");
        dx[(p * s.n + c) * s.post + q] += g[o];
      }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("top_k_v2")
        .Comment("The k largest (largest) or smallest entries of X along `axis` and their "
                 "positions; in order of value (sorted) or in X's order. NaN counts as the "
                 "largest value; equal values keep the lower index first.")
        .Input("X", "the input")
        .Input("K", "k as an int32/int64 tensor of one value (optional; over the attribute)")
        .AsDispensable()
        .Output("Out", "the values: X's dims with k along the axis")
        .Output("Indices", "int64 positions along the axis, Out's dims")
        .Attr("k", int32_t(1), "how many entries per line")
        .Attr("axis", int32_t(-1), "the axis chosen along (negative: from the end)")
        .Attr("largest", true, "the largest entries, else the smallest")
        .Attr("sorted", true, "in order of value, else in X's order")
        .KernelDataTypeFrom("X")
        .InferShape(TopKV2InferShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("top_k_v2_grad")
              .Input("X", g.Input("X"))
              .Input("Indices", g.Output("Indices"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("top_k_v2_grad")
                     .Comment("X@GRAD of top_k_v2: Out@GRAD scattered to Indices, 0 elsewhere.")
                     .Input("X", "the forward input (for its dims)")
                     .Input("Indices", "the forward indices")
                     .Input(GradVarName("Out"), "gradient of Out")
                     .Output(GradVarName("X"), "gradient of X")
                     .Attr("k", int32_t(1))
                     .Attr("axis", int32_t(-1))
                     .Attr("largest", true)
                     .Attr("sorted", true)
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("top_k_v2", "cpu", TopKV2Kernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("top_k_v2_grad", "cpu", TopKV2GradKernel, OPS_NN_FLOAT_TYPES);
