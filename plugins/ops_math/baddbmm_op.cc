// baddbmm_op.cc: Paddle's baddbmm (paddle.baddbmm): Out = Beta * Input + Alpha * X @ Y per batch,
// X [B, M, K], Y [B, K, N], Input [B, M, N] or [B, N] (read as [B, 1, N]), each of its dims 1 or
// Out's (it broadcasts); and its grad (Input@GRAD: Beta dOut summed over Input's broadcast dims,
// X@GRAD: Alpha dOut Y^T, Y@GRAD: Alpha X^T dOut).
#include <string>

#include "common.h"
#include "gemm.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// {B, M, K, N} and Input read as 3-D, with Paddle's errors; -1 where unknown at compile time.
struct BaddbmmDims {
  int64_t b, m, k, n;
  Dims input;  // Input as [B or 1, M or 1, N or 1]
  Dims out() const { return {b, m, n}; }
};

BaddbmmDims GetBaddbmmDims(const char* op, const Dims& in, const Dims& x, const Dims& y) {
  TIDE_CHECK(x.size() == 3 && y.size() == 3, "op '", op,
             "': X and Y must be 3-D ([B, M, K] and [B, K, N]), got ", tide::ToString(x), " and ",
             tide::ToString(y));
  TIDE_CHECK(tide::ops::DimsCompatible(x[0], y[0]), "op '", op, "': X ", tide::ToString(x),
             " and Y ", tide::ToString(y), " must have one batch size");
  TIDE_CHECK(tide::ops::DimsCompatible(x[2], y[1]), "op '", op, "': X ", tide::ToString(x),
             " and Y ", tide::ToString(y), " do not multiply (X's last dim must be Y's second)");
  TIDE_CHECK(in.size() == 2 || in.size() == 3, "op '", op,
             "': Input must be 3-D [B, M, N] or 2-D [B, N], got ", tide::ToString(in));
  BaddbmmDims d{x[0] < 0 ? y[0] : x[0], x[1], x[2], y[2], in};
  if (in.size() == 2) d.input = {in[0], 1, in[1]};
  const Dims out = d.out();
  for (size_t i = 0; i < 3; ++i)
    TIDE_CHECK(d.input[i] == 1 || tide::ops::DimsCompatible(d.input[i], out[i]), "op '", op,
               "': Input ", tide::ToString(in), " does not broadcast to X @ Y's ",
               tide::ToString(out), " (dim ", i, " of [B, M, N] must be 1 or ", out[i], ")");
  return d;
}

BaddbmmDims DimsOf(const char* op, const Tensor& in, const Tensor& x, const Tensor& y) {
  return GetBaddbmmDims(op, in.dims(), x.dims(), y.dims());
}

// Input's element under Out's element (b, i, j).
struct InputIndex {
  int64_t sb, si, sj;  // Input's strides, 0 along its broadcast dims
  explicit InputIndex(const BaddbmmDims& d) {
    const Dims& s = d.input;
    sj = s[2] == 1 ? 0 : 1;
    si = s[1] == 1 ? 0 : s[2];
    sb = s[0] == 1 ? 0 : s[1] * s[2];
  }
  int64_t operator()(int64_t b, int64_t i, int64_t j) const { return b * sb + i * si + j * sj; }
};

void BaddbmmInferShape(tide::InferShapeContext& ctx) {
  for (const char* p : {"X", "Y"})
    TIDE_CHECK(ctx.InputDataType(p) == ctx.InputDataType("Input"), "op '", ctx.op_type(), "': ", p,
               " is ", tide::DataTypeName(ctx.InputDataType(p)), " but Input is ",
               tide::DataTypeName(ctx.InputDataType("Input")));
  const BaddbmmDims d =
      GetBaddbmmDims(ctx.op_type(), ctx.InputDims("Input"), ctx.InputDims("X"), ctx.InputDims("Y"));
  ctx.SetOutputDims("Out", d.out());
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

template <typename T>
void BaddbmmKernel(KernelContext& ctx) {
  Tensor in = ctx.Input("Input"), x = ctx.Input("X"), y = ctx.Input("Y");
  const BaddbmmDims d = DimsOf(ctx.op_type(), in, x, y);
  const T alpha = T(ctx.Attr<float>("Alpha")), beta = T(ctx.Attr<float>("Beta"));
  const T *p = in.data<T>(), *xd = x.data<T>(), *yd = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(d.out(), ctx.place());
  const InputIndex at(d);
  for (int64_t b = 0; b < d.b; ++b) {
    T* ob = o + b * d.m * d.n;
    Gemm<T>(ctx, false, false, d.m, d.n, d.k, alpha, xd + b * d.m * d.k, yd + b * d.k * d.n, T(0),
            ob);
    // Beta * Input added after the product, so a NaN in Input shows even with Beta 0 (Paddle's).
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) ob[i * d.n + j] += beta * p[at(b, i, j)];
  }
}

template <typename T>
void BaddbmmGradKernel(KernelContext& ctx) {
  Tensor in = ctx.Input("Input"), x = ctx.Input("X"), y = ctx.Input("Y");
  const BaddbmmDims d = DimsOf(ctx.op_type(), in, x, y);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), d.out());
  const T alpha = T(ctx.Attr<float>("Alpha")), beta = T(ctx.Attr<float>("Beta"));
  const T *xd = x.data<T>(), *yd = y.data<T>(), *g = dout.data<T>();
  const std::string din = GradVarName("Input"), dx = GradVarName("X"), dy = GradVarName("Y");
  if (ctx.HasOutput(din.c_str())) {
    T* di = ctx.Output(din.c_str()).mutable_data<T>(in.dims(), ctx.place());
    std::fill(di, di + in.numel(), T(0));
    const InputIndex at(d);
    for (int64_t b = 0; b < d.b; ++b)
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j) di[at(b, i, j)] += beta * g[(b * d.m + i) * d.n + j];
  }
  if (ctx.HasOutput(dx.c_str())) {
    T* o = ctx.Output(dx.c_str()).mutable_data<T>(x.dims(), ctx.place());
    for (int64_t b = 0; b < d.b; ++b)  // [M, N] @ [K, N]^T
      Gemm<T>(ctx, false, true, d.m, d.k, d.n, alpha, g + b * d.m * d.n, yd + b * d.k * d.n, T(0),
              o + b * d.m * d.k);
  }
  if (ctx.HasOutput(dy.c_str())) {
    T* o = ctx.Output(dy.c_str()).mutable_data<T>(y.dims(), ctx.place());
    for (int64_t b = 0; b < d.b; ++b)  // [M, K]^T @ [M, N]
      Gemm<T>(ctx, true, false, d.k, d.n, d.m, alpha, xd + b * d.m * d.k, g + b * d.m * d.n, T(0),
              o + b * d.k * d.n);
  }
}

void BaddbmmGradInferShape(tide::InferShapeContext& ctx) {
  GradsLikeInputs(ctx, {"Input", "X", "Y"});
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("baddbmm")
                     .Comment("Out = Beta * Input + Alpha * X @ Y per batch (paddle.baddbmm), "
                              "Input broadcast to [B, M, N].")
                     .Input("Input", "[B, M, N] or [B, N], each dim 1 or Out's")
                     .Input("X", "[B, M, K]")
                     .Input("Y", "[B, K, N]")
                     .Output("Out", "[B, M, N]")
                     .Attr("Alpha", 1.0f, "the factor of X @ Y")
                     .Attr("Beta", 1.0f, "the factor of Input")
                     .InferShape(BaddbmmInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("baddbmm_grad")
                           .Input("Input", g.Input("Input"))
                           .Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("Input"), g.InputGrad("Input"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("baddbmm_grad")
                     .Input("Input")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("Alpha", 1.0f)
                     .Attr("Beta", 1.0f)
                     .KernelDataTypeFrom("X")
                     .InferShape(BaddbmmGradInferShape));
TIDE_REGISTER_KERNEL("baddbmm", "cpu", BaddbmmKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("baddbmm_grad", "cpu", BaddbmmGradKernel, OPS_MATH_FLOAT_TYPES);
