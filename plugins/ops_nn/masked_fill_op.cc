// masked_fill_op.cc: Paddle's masked_fill (paddle.masked_fill): out = value where mask holds, x
// elsewhere; x and the bool mask broadcast numpy-style (out has the broadcast dims), value is one
// element. The grad: x@GRAD = out@GRAD where mask does not hold, value@GRAD = the sum of out@GRAD
// where it does, each summed over the dims its input was broadcast along.
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// out's dims: x's and mask's broadcast; an error naming both when they do not broadcast.
Dims FillDims(const char* op, const Dims& x, const Dims& mask) {
  const size_t r = std::max(x.size(), mask.size());
  Dims out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t dx = i + x.size() >= r ? x[i + x.size() - r] : 1;
    const int64_t dm = i + mask.size() >= r ? mask[i + mask.size() - r] : 1;
    TIDE_CHECK(dx == dm || dx == 1 || dm == 1 || dx < 0 || dm < 0, "op '", op, "': mask ",
               tide::ToString(mask), " does not broadcast with x ", tide::ToString(x), " (dim ", i,
               ": ", dm, " vs ", dx, ")");
    out[i] = dx == 1 ? dm : dx;
  }
  return out;
}

void CheckMaskType(const char* op, const std::string& name, TideDataType t) {
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_BOOL, "op '", op, "': mask ('", name,
             "') must be bool, got ", tide::DataTypeName(t));
}

void MaskedFillInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckMaskType(op, ctx.InputName("mask"), ctx.InputDataType("mask"));
  ctx.SetOutputDims("out", FillDims(op, ctx.InputDims("x"), ctx.InputDims("mask")));
  ctx.SetOutputDataType("out", ctx.InputDataType("x"));
}

// fn(e, xi, filled) for every element e of out: x's element xi, and whether mask holds there.
template <typename F>
void ForEachFilled(const KernelContext& ctx, const Tensor& x, F&& fn) {
  const char* op = ctx.op_type();
  Tensor mask = ctx.Input("mask");
  CheckMaskType(op, ctx.InputName("mask"), mask.dtype());
  FillDims(op, x.dims(), mask.dims());  // names x and mask when they do not broadcast
  const bool* m = mask.data<bool>();
  const auto b = tide::ops::GetNumpyBroadcast(op, x.dims(), mask.dims());
  int64_t xi, mi;
  for (int64_t e = 0; e < b.numel; ++e) {
    b.Index(e, &xi, &mi);
    fn(e, xi, m[mi]);
  }
}

template <typename T>
T ValueOf(const KernelContext& ctx) {
  Tensor value = ctx.Input("value");
  TIDE_CHECK(value.numel() == 1, "op '", ctx.op_type(), "': value ('", ctx.InputName("value"),
             "') must hold one element, got dims ", tide::ToString(value.dims()));
  return value.data<T>()[0];
}

template <typename T>
void MaskedFillKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const T v = ValueOf<T>(ctx);
  const Dims od = FillDims(ctx.op_type(), x.dims(), ctx.Input("mask").dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("out").mutable_data<T>(od, ctx.place());
  ForEachFilled(ctx, x, [&](int64_t e, int64_t xi, bool filled) { o[e] = filled ? v : xd[xi]; });
}

template <typename T>
void MaskedFillGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x"), dout = ctx.Input(GradVarName("out").c_str());
  const Dims od = FillDims(ctx.op_type(), x.dims(), ctx.Input("mask").dims());
  TIDE_CHECK(dout.dims() == od, "op '", ctx.op_type(), "': out@GRAD ", tide::ToString(dout.dims()),
             " differs from out ", tide::ToString(od));
  const T* g = dout.data<T>();
  T* dx = nullptr;
  const std::string dx_name = GradVarName("x"), dv_name = GradVarName("value");
  if (ctx.HasOutput(dx_name.c_str())) {
    dx = ctx.Output(dx_name.c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  T dvalue = T(0);
  ForEachFilled(ctx, x, [&](int64_t e, int64_t xi, bool filled) {
    if (filled)
      dvalue += g[e];
    else if (dx)
      dx[xi] += g[e];
  });
  if (ctx.HasOutput(dv_name.c_str())) {
    Tensor dv = ctx.Output(dv_name.c_str());
    *dv.mutable_data<T>(ctx.Input("value").dims(), ctx.place()) = dvalue;
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("masked_fill")
                     .Comment("out = value where mask holds, x elsewhere (paddle.masked_fill); x "
                              "and mask broadcast numpy-style.")
                     .Input("x", "the input")
                     .Input("mask", "bool, broadcast with x")
                     .Input("value", "one element of x's type")
                     .Output("out", "x and mask broadcast, x's type")
                     .KernelDataTypeFrom("x")
                     .InferShape(MaskedFillInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("masked_fill_grad")
                           .Input("x", g.Input("x"))
                           .Input("mask", g.Input("mask"))
                           .Input("value", g.Input("value"))
                           .Input(GradVarName("out"), g.OutputGrad("out"))
                           .Output(GradVarName("x"), g.InputGrad("x"))
                           .Output(GradVarName("value"), g.InputGrad("value"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("masked_fill_grad")
                     .Comment("x@GRAD: out@GRAD where mask does not hold; value@GRAD: its sum "
                              "where it does.")
                     .Input("x")
                     .Input("mask")
                     .Input("value")
                     .Input(GradVarName("out"))
                     .Output(GradVarName("x"))
                     .Output(GradVarName("value"))
                     .KernelDataTypeFrom("x")
                     .InferShape(GradLike({"x", "value"})));
TIDE_REGISTER_KERNEL("masked_fill", "cpu", MaskedFillKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("masked_fill_grad", "cpu", MaskedFillGradKernel, OPS_NN_FLOAT_TYPES);
