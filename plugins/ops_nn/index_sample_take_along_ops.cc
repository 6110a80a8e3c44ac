// index_sample_take_along_ops.cc: Paddle 2.x's gathers by an index tensor of the output's shape:
// index_sample (paddle.index_sample: Out[i, j] = X[i, Index[i, j]], X [N, D], Index [N, K]) and
// take_along_axis (paddle.take_along_axis: Result = Input at Index along Axis, numpy's
// take_along_axis, Index of Input's rank and each other dim at most Input's); and their grads
// (Out@GRAD added back at the indices, repeats adding up). Indices out of range are errors
// naming the op, the input and the value.
#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

void CheckIntIndex(tide::InferShapeContext& ctx, const char* param) {
  const TideDataType t = ctx.InputDataType(param);
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': ", param, " ('", ctx.InputName(param), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
}

int64_t CheckedIndex(const KernelContext& ctx, const char* param, int64_t v, int64_t n,
                     int64_t at) {
  TIDE_CHECK(v >= -n && v < n, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "')[", at, "] = ", v, " is out of range [", -n, ", ", n, ")");
  return v < 0 ? v + n : v;  // Paddle counts a negative index from the end
}

// ---------------------------------------------------------------------------------------------
// index_sample
void IndexSampleDims(const char* op, const Dims& x, const Dims& index) {
  TIDE_CHECK(x.size() == 2 && index.size() == 2, "op '", op, "': X ", tide::ToString(x),
             " and Index ", tide::ToString(index), " must be 2-D");
  TIDE_CHECK(DimsCompatible(x[0], index[0]), "op '", op, "': X ", tide::ToString(x), " and Index ",
             tide::ToString(index), " must have one number of rows");
}

void IndexSampleInferShape(tide::InferShapeContext& ctx) {
  CheckIntIndex(ctx, "Index");
  const Dims x = ctx.InputDims("X"), index = ctx.InputDims("Index");
  IndexSampleDims(ctx.op_type(), x, index);
  ctx.SetOutputDims("Out", index);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T, bool kGrad>
void IndexSample(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), index = ctx.Input("Index");
  IndexSampleDims(ctx.op_type(), x.dims(), index.dims());
  const int64_t n = x.dims()[0], d = x.dims()[1], k = index.dims()[1];
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  if (!kGrad) {
    const T* xd = x.data<T>();
    T* o = ctx.Output("Out").mutable_data<T>(index.dims(), ctx.place());
    for (int64_t i = 0; i < n * k; ++i)
      o[i] = xd[(i / k) * d + CheckedIndex(ctx, "Index", idx[i], d, i)];
    return;
  }
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), index.dims());
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t i = 0; i < n * k; ++i)
    dx[(i / k) * d + CheckedIndex(ctx, "Index", idx[i], d, i)] += g[i];
}
template <typename T>
void IndexSampleKernel(KernelContext& ctx) {
  IndexSample<T, false>(ctx);
}
template <typename T>
void IndexSampleGradKernel(KernelContext& ctx) {
  IndexSample<T, true>(ctx);
}

// ---------------------------------------------------------------------------------------------
// take_along_axis
int TakeAlongAxis(const char* op, const Dims& input, const Dims& index, int axis) {
  TIDE_CHECK(input.size() == index.size(), "op '", op, "': Index ", tide::ToString(index),
             " must have Input's rank (", tide::ToString(input), ")");
  const int a = NormAxis(op, axis, input.size());
  for (size_t i = 0; i < input.size(); ++i)
    TIDE_CHECK(static_cast<int>(i) == a || input[i] < 0 || index[i] <= input[i], "op '", op,
               "': Index ", tide::ToString(index), " is larger than Input ", tide::ToString(input),
               " at dim ", i);
  return a;
}

void TakeAlongAxisInferShape(tide::InferShapeContext& ctx) {
  CheckIntIndex(ctx, "Index");
  const Dims index = ctx.InputDims("Index");
  TakeAlongAxis(ctx.op_type(), ctx.InputDims("Input"), index, ctx.Attr<int32_t>("Axis"));
  ctx.SetOutputDims("Result", index);
  ctx.SetOutputDataType("Result", ctx.InputDataType("Input"));
}

template <typename T, bool kGrad>
void TakeAlong(KernelContext& ctx) {
  Tensor input = ctx.Input("Input"), index = ctx.Input("Index");
  const Dims in = input.dims(), id = index.dims();
  const int a = TakeAlongAxis(ctx.op_type(), in, id, ctx.Attr<int32_t>("Axis"));
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  const std::vector<int64_t> st = Strides(in);
  // fn(i, off): Result element i reads Input element off.
  auto each = [&](auto fn) {
    ForEachIndex(id, [&](const std::vector<int64_t>& p, int64_t i) {
      int64_t off = 0;
      for (size_t k = 0; k < p.size(); ++k)
        off += (static_cast<int>(k) == a ? CheckedIndex(ctx, "Index", idx[i], in[a], i) : p[k]) *
               st[k];
      fn(i, off);
    });
  };
  if (!kGrad) {
    const T* xd = input.data<T>();
    T* o = ctx.Output("Result").mutable_data<T>(id, ctx.place());
    each([&](int64_t i, int64_t off) { o[i] = xd[off]; });
    return;
  }
  Tensor dout = ctx.Input(GradVarName("Result").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Result@GRAD", dout.dims(), id);
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(in, ctx.place());
  std::fill(dx, dx + input.numel(), T(0));
  each([&](int64_t i, int64_t off) { dx[off] += g[i]; });
}
template <typename T>
void TakeAlongAxisKernel(KernelContext& ctx) {
  TakeAlong<T, false>(ctx);
}
template <typename T>
void TakeAlongAxisGradKernel(KernelContext& ctx) {
  TakeAlong<T, true>(ctx);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("index_sample")
                     .Comment("Out[i, j] = X[i, Index[i, j]] (paddle.index_sample).")
                     .Input("X", "[N, D]")
                     .Input("Index", "int32/int64 [N, K], each in [-D, D)")
                     .Output("Out", "[N, K]")
                     .KernelDataTypeFrom("X")
                     .InferShape(IndexSampleInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("index_sample_grad")
                           .Input("X", g.Input("X"))
                           .Input("Index", g.Input("Index"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("index_sample_grad")
                     .Input("X")
                     .Input("Index")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_OP(tide::OpSchema("take_along_axis")
                     .Comment("Result = Input at Index along Axis (numpy's take_along_axis).")
                     .Input("Input", "the input")
                     .Input("Index", "int32/int64, Input's rank, each other dim at most Input's")
                     .Output("Result", "Index's dims")
                     .Attr("Axis", int32_t(0), "the axis taken along (negative: from the end)")
                     .KernelDataTypeFrom("Input")
                     .InferShape(TakeAlongAxisInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("take_along_axis_grad")
                           .Input("Input", g.Input("Input"))
                           .Input("Index", g.Input("Index"))
                           .Input(GradVarName("Result"), g.OutputGrad("Result"))
                           .Output(GradVarName("Input"), g.InputGrad("Input"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("take_along_axis_grad")
                     .Input("Input")
                     .Input("Index")
                     .Input(GradVarName("Result"))
                     .Output(GradVarName("Input"))
                     .Attr("Axis", int32_t(0))
                     .KernelDataTypeFrom("Input")
                     .InferShape(GradLike({"Input"})));
TIDE_REGISTER_KERNEL("index_sample", "cpu", IndexSampleKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("index_sample_grad", "cpu", IndexSampleGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("take_along_axis", "cpu", TakeAlongAxisKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("take_along_axis_grad", "cpu", TakeAlongAxisGradKernel, OPS_NN_FLOAT_TYPES);
