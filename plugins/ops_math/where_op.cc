// where_op.cc: Paddle 2.x's where (paddle.where): Out = Condition ? X : Y elementwise, the three
// operands broadcast numpy-style (Paddle 2.6's layer broadcasts them itself and gives the op equal
// dims; Paddle 3's op broadcasts), and its grad (Out@GRAD to X where Condition holds, to Y
// elsewhere, each summed over the dims it was repeated over), complex64 / complex128 too (the grad
// only routes Out@GRAD, so the real rule is the complex convention's).
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

// Out's dims at build time: numpy's rule, a dim unknown (-1) where an operand's is unknown and
// no other operand fixes it.
Dims WhereDims(const char* op, const Dims& c, const Dims& x, const Dims& y) {
  const size_t r = std::max({c.size(), x.size(), y.size()});
  Dims out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t d = 1;
    bool unknown = false;
    for (const Dims* s : {&c, &x, &y}) {
      const size_t lead = r - s->size();
      const int64_t v = i >= lead ? (*s)[i - lead] : 1;
      if (v < 0) {
        unknown = true;
        continue;
      }
      if (v == 1) continue;
      TIDE_CHECK(d == 1 || d == v, "op '", op, "': Condition ", tide::ToString(c), ", X ",
                 tide::ToString(x), " and Y ", tide::ToString(y), " do not broadcast (dim ", i,
                 " of the result: ", d, " vs ", v, ")");
      d = v;
    }
    out[i] = (unknown && d == 1) ? -1 : d;
  }
  return out;
}

void WhereInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType ct = ctx.InputDataType("Condition");
  TIDE_CHECK(ct == TIDE_UNDEFINED || ct == TIDE_BOOL, "op '", op, "': Condition ('",
             ctx.InputName("Condition"), "') must be bool, got ", tide::DataTypeName(ct));
  const TideDataType xt = ctx.InputDataType("X"), yt = ctx.InputDataType("Y");
  TIDE_CHECK(xt == TIDE_UNDEFINED || yt == TIDE_UNDEFINED || xt == yt, "op '", op, "': X ('",
             ctx.InputName("X"), "') is ", tide::DataTypeName(xt), " but Y ('", ctx.InputName("Y"),
             "') is ", tide::DataTypeName(yt), "; they must have one data type");
  ctx.SetOutputDims(
      "Out", WhereDims(op, ctx.InputDims("Condition"), ctx.InputDims("X"), ctx.InputDims("Y")));
  ctx.SetOutputDataType("Out", xt);
}

// The pairing of Out's elements with Condition's, X's and Y's: X and Y broadcast together (xy),
// then Condition with their result (cxy).
struct WhereIndex {
  NumpyBroadcast xy, cxy;
  void Index(int64_t e, int64_t* ci, int64_t* xi, int64_t* yi) const {
    int64_t m = 0;
    cxy.Index(e, ci, &m);
    xy.Index(m, xi, yi);
  }
};

WhereIndex GetWhereIndex(const char* op, const Dims& c, const Dims& x, const Dims& y) {
  WhereDims(op, c, x, y);  // the error naming all three operands
  WhereIndex w;
  w.xy = GetNumpyBroadcast(op, x, y);
  w.cxy = GetNumpyBroadcast(op, c, w.xy.out);
  return w;
}

template <typename T>
void WhereKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor c = ctx.Input("Condition"), x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(c.dtype() == TIDE_BOOL, "op '", op, "': Condition ('", ctx.InputName("Condition"),
             "') must be bool, got ", tide::DataTypeName(c.dtype()));
  const bool* cd = c.data<bool>();
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  if (c.dims() == x.dims() && x.dims() == y.dims()) {
    T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
    tide::ParallelFor(ctx, x.numel(), 1, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = cd[i] ? xd[i] : yd[i];
    });
    return;
  }
  const WhereIndex w = GetWhereIndex(op, c.dims(), x.dims(), y.dims());
  T* o = ctx.Output("Out").mutable_data<T>(w.cxy.out, ctx.place());
  tide::ParallelFor(ctx, w.cxy.numel, 8, [&](int64_t b, int64_t e) {
    int64_t ci, xi, yi;
    for (int64_t i = b; i < e; ++i) {
      w.Index(i, &ci, &xi, &yi);
      o[i] = cd[ci] ? xd[xi] : yd[yi];
    }
  });
}

// X@GRAD[xi] += Out@GRAD where Condition holds, Y@GRAD[yi] += it elsewhere.
template <typename T>
void WhereGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor c = ctx.Input("Condition"), x = ctx.Input("X"), y = ctx.Input("Y");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const WhereIndex w = GetWhereIndex(op, c.dims(), x.dims(), y.dims());
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), w.cxy.out);
  const bool* cd = c.data<bool>();
  const T* g = dout.data<T>();
  const std::string dxn = GradVarName("X"), dyn = GradVarName("Y");
  T* dx = ctx.HasOutput(dxn.c_str())
              ? ctx.Output(dxn.c_str()).mutable_data<T>(x.dims(), ctx.place())
              : nullptr;
  T* dy = ctx.HasOutput(dyn.c_str())
              ? ctx.Output(dyn.c_str()).mutable_data<T>(y.dims(), ctx.place())
              : nullptr;
  if (dx) std::fill(dx, dx + x.numel(), T(0));
  if (dy) std::fill(dy, dy + y.numel(), T(0));
  int64_t ci, xi, yi;
  for (int64_t i = 0; i < w.cxy.numel; ++i) {
    w.Index(i, &ci, &xi, &yi);
    if (cd[ci]) {
      if (dx) dx[xi] += g[i];
    } else if (dy) {
      dy[yi] += g[i];
    }
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("where")
                     .Comment("Out = Condition ? X : Y elementwise (paddle.where); the operands "
                              "broadcast numpy-style.")
                     .Input("Condition", "bool: where to take X")
                     .Input("X", "the values where Condition holds")
                     .Input("Y", "the values elsewhere (X's data type)")
                     .Output("Out", "the broadcast dims of the three, X's data type")
                     .KernelDataTypeFrom("X")
                     .InferShape(WhereInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("where_grad")
                           .Input("Condition", g.Input("Condition"))
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("where_grad")
                     .Comment("X@GRAD / Y@GRAD of where: Out@GRAD where Condition holds / "
                              "elsewhere, summed over broadcast dims.")
                     .Input("Condition")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape(GradsLikeXY));
TIDE_REGISTER_KERNEL("where", "cpu", WhereKernel, OPS_MATH_NUMERIC_TYPES, bool,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("where_grad", "cpu", WhereGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
