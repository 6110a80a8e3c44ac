// index_select_op.cc: Paddle 2.x's index_select (paddle.index_select): Out = X's slices at Index
// along `dim` (Out's dims: X's with Index's length at dim), and its grad (Out@GRAD's slices summed
// back into X@GRAD at Index, repeats adding up).
#include "common.h"

namespace ops_nn {
namespace {

void CheckIndexType(const char* op, const std::string& name, TideDataType t) {
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", op, "': Index ('",
             name, "') must be int32 or int64, got ", tide::DataTypeName(t));
}

Dims IndexSelectDims(const char* op, const Dims& x, const Dims& index, int dim) {
  const int a = NormAxis(op, dim, x.size());
  TIDE_CHECK(index.size() == 1 || (index.size() == 2 && DimsCompatible(index[1], 1)), "op '", op,
             "': Index must be 1-D (or [N, 1]), got ", tide::ToString(index));
  Dims out = x;
  out[a] = index[0];
  return out;
}

void IndexSelectInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckIndexType(op, ctx.InputName("Index"), ctx.InputDataType("Index"));
  ctx.SetOutputDims("Out", IndexSelectDims(op, ctx.InputDims("X"), ctx.InputDims("Index"),
                                           ctx.Attr<int32_t>("dim")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// X as [pre, n, post] around dim, and the checked indices.
struct IndexSelectGeom {
  int64_t pre, n, post;
  std::vector<int64_t> index;
};

IndexSelectGeom GetIndexSelectGeom(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  Tensor index = ctx.Input("Index");
  CheckIndexType(op, ctx.InputName("Index"), index.dtype());
  IndexSelectDims(op, x, index.dims(), ctx.Attr<int32_t>("dim"));
  const auto s = tide::ops::SplitAt(op, x, ctx.Attr<int32_t>("dim"));
  IndexSelectGeom g{s.pre, s.n, s.post, IntValues(ctx, "Index")};
  for (size_t i = 0; i < g.index.size(); ++i)
    TIDE_CHECK(g.index[i] >= 0 && g.index[i] < g.n, "op '", op, "': Index ('",
               ctx.InputName("Index"), "')[", i, "] = ", g.index[i], " is out of range [0, ", g.n,
               ") of X ", tide::ToString(x), " at dim ", s.axis);
  return g;
}

template <typename T>
void IndexSelectKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const IndexSelectGeom g = GetIndexSelectGeom(ctx, x.dims());
  Dims od = x.dims();
  const int64_t m = static_cast<int64_t>(g.index.size());
  od[tide::ops::NormAxis(ctx.op_type(), ctx.Attr<int32_t>("dim"), od.size())] = m;
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  for (int64_t p = 0; p < g.pre; ++p)
    for (int64_t j = 0; j < m; ++j)
      std::copy(xd + (p * g.n + g.index[j]) * g.post, xd + (p * g.n + g.index[j] + 1) * g.post,
                o + (p * m + j) * g.post);
}

template <typename T>
void IndexSelectGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const IndexSelectGeom g = GetIndexSelectGeom(ctx, x.dims());
  const int64_t m = static_cast<int64_t>(g.index.size());
  TIDE_CHECK(dout.numel() == g.pre * m * g.post, "op '", ctx.op_type(), "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not match X ", tide::ToString(x.dims()), " with ",
             m, " indices");
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t p = 0; p < g.pre; ++p)
    for (int64_t j = 0; j < m; ++j) {
      T* d = dx + (p * g.n + g.index[j]) * g.post;
      const T* s = gd + (p * m + j) * g.post;
      for (int64_t q = 0; q < g.post; ++q) d[q] += s[q];
    }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("index_select")
                     .Comment("Out = X's slices at Index along dim (paddle.index_select).")
                     .Input("X", "the input")
                     .Input("Index", "int32/int64 positions along dim, 1-D")
                     .Output("Out", "X's dims with Index's length at dim")
                     .Attr("dim", int32_t(0), "the axis selected along (negative: from the end)")
                     .KernelDataTypeFrom("X")
                     .InferShape(IndexSelectInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("index_select_grad")
                           .Input("X", g.Input("X"))
                           .Input("Index", g.Input("Index"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("index_select_grad")
                     .Comment("X@GRAD of index_select: Out@GRAD's slices summed back at Index.")
                     .Input("X")
                     .Input("Index")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("dim", int32_t(0))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("index_select", "cpu", IndexSelectKernel, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, bool);
TIDE_REGISTER_KERNEL("index_select_grad", "cpu", IndexSelectGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
