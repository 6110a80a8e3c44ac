// index_add_op.cc: Paddle's index_add (paddle.index_add): Out = X with AddValue's slices added at
// Index along `axis` (AddValue: X's dims with Index's length at axis; a negative index counts from
// the end, repeats add up). The grad: X@GRAD = Out@GRAD, AddValue@GRAD = Out@GRAD's slices at
// Index.
#include "common.h"

namespace ops_nn {
namespace {

// X as [pre, n, post] around axis, the checked (non-negative) indices, AddValue's dims.
struct IndexAddGeom {
  int64_t pre, n, post;
  std::vector<int64_t> index;
};

Dims AddValueDims(const char* op, const Dims& x, const Dims& index, int32_t axis) {
  const int a = NormAxis(op, axis, x.size());
  TIDE_CHECK(index.size() == 1, "op '", op, "': Index must be 1-D, got ", tide::ToString(index));
  Dims v = x;
  v[a] = index[0];
  return v;
}

void IndexAddInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType t = ctx.InputDataType("Index");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", op, "': Index ('",
             ctx.InputName("Index"), "') must be int32 or int64, got ", tide::DataTypeName(t));
  const Dims x = ctx.InputDims("X");
  const Dims want = AddValueDims(op, x, ctx.InputDims("Index"), ctx.Attr<int32_t>("axis"));
  const Dims v = ctx.InputDims("AddValue");
  bool ok = v.size() == want.size();
  for (size_t i = 0; ok && i < v.size(); ++i) ok = DimsCompatible(v[i], want[i]);
  TIDE_CHECK(ok, "op '", op, "': AddValue ('", ctx.InputName("AddValue"), "') must be ",
             tide::ToString(want), " (X's dims with Index's length at axis), got ",
             tide::ToString(v));
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

IndexAddGeom GetGeom(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const int32_t axis = ctx.Attr<int32_t>("axis");
  const Dims index = ctx.Input("Index").dims();
  AddValueDims(op, x, index, axis);
  const auto s = tide::ops::SplitAt(op, x, axis);
  IndexAddGeom g{s.pre, s.n, s.post, IntValues(ctx, "Index")};
  for (size_t i = 0; i < g.index.size(); ++i) {
    int64_t& k = g.index[i];
    TIDE_CHECK(k >= -g.n && k < g.n, "op '", op, "': Index ('", ctx.InputName("Index"), "')[", i,
               "] = ", k, " is out of range [", -g.n, ", ", g.n, ") of X ", tide::ToString(x),
               " at axis ", s.axis);
    if (k < 0) k += g.n;
  }
  return g;
}

template <typename T>
void IndexAddKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), value = ctx.Input("AddValue");
  const IndexAddGeom g = GetGeom(ctx, x.dims());
  const int64_t m = static_cast<int64_t>(g.index.size());
  TIDE_CHECK(value.numel() == g.pre * m * g.post, "op '", ctx.op_type(), "': AddValue ",
             tide::ToString(value.dims()), " does not match X ", tide::ToString(x.dims()), " with ",
             m, " indices");
  const T* xd = x.data<T>();
  const T* vd = value.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(xd, xd + x.numel(), o);
  for (int64_t p = 0; p < g.pre; ++p)
    for (int64_t j = 0; j < m; ++j) {
      T* d = o + (p * g.n + g.index[j]) * g.post;
      const T* s = vd + (p * m + j) * g.post;
      for (int64_t q = 0; q < g.post; ++q) d[q] += s[q];
    }
}

template <typename T>
void IndexAddGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const IndexAddGeom g = GetGeom(ctx, dout.dims());
  const T* gd = dout.data<T>();
  const std::string dx_name = GradVarName("X"), dv_name = GradVarName("AddValue");
  if (ctx.HasOutput(dx_name.c_str()))
    std::copy(gd, gd + dout.numel(),
              ctx.Output(dx_name.c_str()).mutable_data<T>(dout.dims(), ctx.place()));
  if (!ctx.HasOutput(dv_name.c_str())) return;
  const int64_t m = static_cast<int64_t>(g.index.size());
  T* dv = ctx.Output(dv_name.c_str()).mutable_data<T>(ctx.Input("AddValue").dims(), ctx.place());
  for (int64_t p = 0; p < g.pre; ++p)
    for (int64_t j = 0; j < m; ++j)
      std::copy(gd + (p * g.n + g.index[j]) * g.post, gd + (p * g.n + g.index[j] + 1) * g.post,
                dv + (p * m + j) * g.post);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("index_add")
                     .Comment("Out = X with AddValue's slices added at Index along axis "
                              "(paddle.index_add).")
                     .Input("X", "the input")
                     .Input("Index",
                            "int32/int64 positions along axis, 1-D (negative: from the "
                            "end)")
                     .Input("AddValue", "X's dims with Index's length at axis")
                     .Output("Out", "X's dims")
                     .Attr("axis", int32_t(0), "the axis added along (negative: from the end)")
                     .KernelDataTypeFrom("X")
                     .InferShape(IndexAddInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("index_add_grad")
                           .Input("Index", g.Input("Index"))
                           .Input("AddValue", g.Input("AddValue"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("AddValue"), g.InputGrad("AddValue"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("index_add_grad")
                     .Comment("X@GRAD = Out@GRAD; AddValue@GRAD = Out@GRAD's slices at Index.")
                     .Input("Index")
                     .Input("AddValue")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Output(GradVarName("AddValue"))
                     .Attr("axis", int32_t(0))
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape([](tide::InferShapeContext& ctx) {
                       const std::string dout = GradVarName("Out"), dx = GradVarName("X");
                       if (ctx.HasOutput(dx.c_str())) {
                         ctx.SetOutputDims(dx.c_str(), ctx.InputDims(dout.c_str()));
                         ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
                       }
                       GradsLikeInputs(ctx, {"AddValue"});
                     }));
TIDE_REGISTER_KERNEL("index_add", "cpu", IndexAddKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("index_add_grad", "cpu", IndexAddGradKernel, OPS_NN_FLOAT_TYPES);
