// scatter_nd_add_op.cc: Paddle's scatter_nd_add (paddle.scatter_nd_add): Out = X with each of
// Updates' slices added at the position Index's last dim names in X's first k dims (Index
// [..., k], k <= X's rank; Updates: Index's dims but the last, then X's dims from k on; a negative
// index counts from the end, repeats add up). The grad: X@GRAD = Out@GRAD, Updates@GRAD =
// Out@GRAD's slices at Index (gather_nd).
#include "common.h"

namespace ops_nn {
namespace {

Dims UpdatesDims(const char* op, const Dims& x, const Dims& index) {
  TIDE_CHECK(!index.empty(), "op '", op, "': Index must have at least 1 dim, got a 0-D Index");
  const int64_t k = index.back();
  TIDE_CHECK(k < 0 || k <= static_cast<int64_t>(x.size()), "op '", op, "': Index's last dim (", k,
             ") must be at most X's rank, X is ", tide::ToString(x));
  Dims u(index.begin(), index.end() - 1);
  if (k >= 0) u.insert(u.end(), x.begin() + k, x.end());
  return u;
}

void ScatterNdAddInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType t = ctx.InputDataType("Index");
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", op, "': Index ('",
             ctx.InputName("Index"), "') must be int32 or int64, got ", tide::DataTypeName(t));
  const Dims x = ctx.InputDims("X"), index = ctx.InputDims("Index");
  const Dims u = ctx.InputDims("Updates");
  if (index.empty() || index.back() >= 0) {
    const Dims want = UpdatesDims(op, x, index);
    bool ok = u.size() == want.size();
    for (size_t i = 0; ok && i < u.size(); ++i) ok = DimsCompatible(u[i], want[i]);
    TIDE_CHECK(ok, "op '", op, "': Updates ('", ctx.InputName("Updates"), "') must be ",
               tide::ToString(want), " (Index's dims but the last, then X's from dim ",
               index.back(), " on), got ", tide::ToString(u));
  }
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The flat offset in X of each index tuple (checked, negatives wrapped) and a slice's length.
struct NdSlices {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

NdSlices GetSlices(const KernelContext& ctx, const Dims& x, int64_t updates_numel) {
  const char* op = ctx.op_type();
  const Dims index = ctx.Input("Index").dims();
  const Dims want = UpdatesDims(op, x, index);
  TIDE_CHECK(DimsProduct(want) == updates_numel, "op '", op, "': Updates has ", updates_numel,
             " elements, expected ", tide::ToString(want));
  const size_t k = static_cast<size_t>(index.back());
  const std::vector<int64_t> idx = IntValues(ctx, "Index");
  NdSlices s;
  for (size_t d = k; d < x.size(); ++d) s.slice *= x[d];
  const std::vector<int64_t> strides = [&] {
    std::vector<int64_t> st(x.size(), 1);
    for (int d = static_cast<int>(x.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * x[d + 1];
    return st;
  }();
  const size_t n = static_cast<size_t>(DimsProduct(Dims(index.begin(), index.end() - 1)));
  s.offsets.resize(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t d = 0; d < k; ++d) {
      int64_t v = idx[i * k + d];
      TIDE_CHECK(v >= -x[d] && v < x[d], "op '", op, "': Index ('", ctx.InputName("Index"),
                 "') holds ", v, " for dim ", d, " of X ", tide::ToString(x), " (tuple ", i,
                 "); expected [", -x[d], ", ", x[d], ")");
      if (v < 0) v += x[d];
      s.offsets[i] += v * strides[d];
    }
  return s;
}

template <typename T>
void ScatterNdAddKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), updates = ctx.Input("Updates");
  const NdSlices s = GetSlices(ctx, x.dims(), updates.numel());
  const T* xd = x.data<T>();
  const T* ud = updates.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  std::copy(xd, xd + x.numel(), o);
  for (size_t i = 0; i < s.offsets.size(); ++i)
    for (int64_t q = 0; q < s.slice; ++q) o[s.offsets[i] + q] += ud[i * s.slice + q];
}

template <typename T>
void ScatterNdAddGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor updates = ctx.Input("Updates");
  const NdSlices s = GetSlices(ctx, dout.dims(), updates.numel());
  const T* g = dout.data<T>();
  const std::string dx_name = GradVarName("X"), du_name = GradVarName("Updates");
  if (ctx.HasOutput(dx_name.c_str()))
    std::copy(g, g + dout.numel(),
              ctx.Output(dx_name.c_str()).mutable_data<T>(dout.dims(), ctx.place()));
  if (!ctx.HasOutput(du_name.c_str())) return;
  T* du = ctx.Output(du_name.c_str()).mutable_data<T>(updates.dims(), ctx.place());
  for (size_t i = 0; i < s.offsets.size(); ++i)
    std::copy(g + s.offsets[i], g + s.offsets[i] + s.slice, du + i * s.slice);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("scatter_nd_add")
                     .Comment("Out = X with Updates' slices added at the positions in Index's "
                              "last dim (paddle.scatter_nd_add).")
                     .Input("X", "the input")
                     .Input("Index", "int32/int64 [..., k], k <= X's rank (negative: from the end)")
                     .Input("Updates", "Index's dims but the last, then X's dims from k on")
                     .Output("Out", "X's dims")
                     .KernelDataTypeFrom("X")
                     .InferShape(ScatterNdAddInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("scatter_nd_add_grad")
                           .Input("Index", g.Input("Index"))
                           .Input("Updates", g.Input("Updates"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Updates"), g.InputGrad("Updates"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("scatter_nd_add_grad")
                     .Comment("X@GRAD = Out@GRAD; Updates@GRAD = Out@GRAD's slices at Index.")
                     .Input("Index")
                     .Input("Updates")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Output(GradVarName("Updates"))
                     .KernelDataTypeFrom(GradVarName("Out"))
                     .InferShape([](tide::InferShapeContext& ctx) {
                       const std::string dout = GradVarName("Out"), dx = GradVarName("X");
                       if (ctx.HasOutput(dx.c_str())) {
                         ctx.SetOutputDims(dx.c_str(), ctx.InputDims(dout.c_str()));
                         ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
                       }
                       GradsLikeInputs(ctx, {"Updates"});
                     }));
TIDE_REGISTER_KERNEL("scatter_nd_add", "cpu", ScatterNdAddKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("scatter_nd_add_grad", "cpu", ScatterNdAddGradKernel, OPS_NN_FLOAT_TYPES);
