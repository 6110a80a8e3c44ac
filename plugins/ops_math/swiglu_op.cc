// swiglu_op.cc: Paddle's swiglu (paddle.incubate.nn.functional.swiglu / F.swiglu): out = silu(x) y,
// silu(x) = x sigmoid(x); without y, x's last dim is split in two halves [a, b] and
// out = silu(a) b. With its grad: dx = dout y silu'(x), dy = dout silu(x). The forward also in
// bfloat16 (computed in float32), for bf16 inference.
#include <cmath>
#include <string>
#include <tide/low_precision.hpp>
#include <type_traits>
#include <vector>

#include "bf16_convert.h"
#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// x as `rows` rows of gate values and y's values: with y, both are [rows, n]; without, x's
// rows hold n gates followed by n values.
template <typename T>
struct SwigluView {
  int64_t rows = 0, n = 0;
  const T *x = nullptr, *y = nullptr;  // y null: the values are x's second halves
  int64_t xstride() const { return y ? n : 2 * n; }
  T Gate(int64_t r, int64_t c) const { return x[r * xstride() + c]; }
  T Value(int64_t r, int64_t c) const { return y ? y[r * n + c] : x[r * xstride() + n + c]; }
};

Dims SwigluOutDims(const char* op, const std::string& xname, const Dims& x, const Dims* y) {
  TIDE_CHECK(!x.empty(), "op '", op, "': x ('", xname, "') must have at least one dim");
  if (y) {
    bool same = y->size() == x.size();
    for (size_t i = 0; same && i < x.size(); ++i) same = x[i] < 0 || (*y)[i] < 0 || x[i] == (*y)[i];
    TIDE_CHECK(same, "op '", op, "': y ", tide::ToString(*y), " must have x's dims ",
               tide::ToString(x));
    return x;
  }
  const int64_t last = x.back();
  TIDE_CHECK(last < 0 || last % 2 == 0, "op '", op, "': without y, x ('", xname, "') ",
             tide::ToString(x), " is split in two halves on its last dim, which must be even");
  Dims out = x;
  out.back() = last < 0 ? -1 : last / 2;
  return out;
}

void SwigluShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("x");
  Dims y;
  if (ctx.HasInput("y")) {
    y = ctx.InputDims("y");
    const TideDataType tx = ctx.InputDataType("x"), ty = ctx.InputDataType("y");
    TIDE_CHECK(tx == ty || tx == TIDE_UNDEFINED || ty == TIDE_UNDEFINED, "op '", ctx.op_type(),
               "': y must be ", tide::DataTypeName(tx), " as x is, but is ",
               tide::DataTypeName(ty));
  }
  ctx.SetOutputDims(
      "out", SwigluOutDims(ctx.op_type(), ctx.InputName("x"), x, ctx.HasInput("y") ? &y : nullptr));
  ctx.SetOutputDataType("out", ctx.InputDataType("x"));
}

template <typename T>
SwigluView<T> ViewOf(KernelContext& ctx, Dims* out_dims) {
  Tensor x = ctx.Input("x"), y = ctx.OptionalInput("y");
  Dims yd = y ? y.dims() : Dims{};
  *out_dims = SwigluOutDims(ctx.op_type(), ctx.InputName("x"), x.dims(), y ? &yd : nullptr);
  if (y)
    TIDE_CHECK(yd == x.dims(), "op '", ctx.op_type(), "': y ", tide::ToString(yd),
               " must have x's dims ", tide::ToString(x.dims()));
  SwigluView<T> v;
  v.n = out_dims->back();
  v.rows = v.n ? DimsProduct(*out_dims) / v.n : 0;
  v.x = x.data<T>();
  v.y = y ? y.data<T>() : nullptr;
  return v;
}

template <typename T>
T Sigmoid(T a) {
  return T(1) / (T(1) + std::exp(-a));
}

template <typename T>
T Swiglu(T a, T b) {
  return a * Sigmoid(a) * b;
}

// bfloat16 (bf16 inference, between bfloat16 projections): rows widened to float, the float32
// kernel's arithmetic, each value rounded once, as the float32 kernel between two casts.
void SwigluBf16Rows(const SwigluView<tide::bfloat16>& v, int64_t r0, int64_t r1,
                    tide::bfloat16* out) {
  std::vector<float> a(static_cast<size_t>(v.n)), b(a.size());
  for (int64_t r = r0; r < r1; ++r) {
    Bfloat16ToFloat(tide::Bits(v.x + r * v.xstride()), a.data(), v.n);
    Bfloat16ToFloat(tide::Bits(v.y ? v.y + r * v.n : v.x + r * v.xstride() + v.n), b.data(), v.n);
    for (int64_t c = 0; c < v.n; ++c) a[c] = Swiglu(a[c], b[c]);
    FloatToBfloat16(a.data(), tide::Bits(out + r * v.n), v.n);
  }
}

template <typename T>
void SwigluKernel(KernelContext& ctx) {
  Dims od;
  const SwigluView<T> v = ViewOf<T>(ctx, &od);
  T* out = ctx.Output("out").mutable_data<T>(od, ctx.place());
  ParallelFor(ctx, v.rows, 16 * v.n, [&](int64_t r0, int64_t r1) {
    if constexpr (std::is_same_v<T, tide::bfloat16>) {
      SwigluBf16Rows(v, r0, r1, out);
    } else {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < v.n; ++c) out[r * v.n + c] = Swiglu(v.Gate(r, c), v.Value(r, c));
    }
  });
}

template <typename T>
void SwigluGradKernel(KernelContext& ctx) {
  Dims od;
  const SwigluView<T> v = ViewOf<T>(ctx, &od);
  const T* g = ctx.Input(GradVarName("out").c_str()).data<T>();
  const std::string gx = GradVarName("x"), gy = GradVarName("y");
  T* dx = ctx.HasOutput(gx.c_str())
              ? ctx.Output(gx.c_str()).mutable_data<T>(ctx.Input("x").dims(), ctx.place())
              : nullptr;
  T* dy = v.y && ctx.HasOutput(gy.c_str())
              ? ctx.Output(gy.c_str()).mutable_data<T>(ctx.Input("y").dims(), ctx.place())
              : nullptr;
  for (int64_t r = 0; r < v.rows; ++r)
    for (int64_t c = 0; c < v.n; ++c) {
      const T a = v.Gate(r, c), s = Sigmoid(a), go = g[r * v.n + c];
      const T silu = a * s, dsilu = s * (T(1) + a * (T(1) - s));
      if (dx) dx[r * v.xstride() + c] = go * v.Value(r, c) * dsilu;
      if (!v.y && dx) dx[r * v.xstride() + v.n + c] = go * silu;
      if (dy) dy[r * v.n + c] = go * silu;
    }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("swiglu")
                     .Comment("out = silu(x) * y; without y, x's last dim halves [a, b] give "
                              "silu(a) * b.")
                     .Input("x",
                            "the gate (and without y the values, in its last dim's second "
                            "half)")
                     .Input("y", "the values, x's dims (optional)")
                     .AsDispensable()
                     .Output("out", "x's dims (its last dim halved without y)")
                     .KernelDataTypeFrom("x")
                     .InferShape(SwigluShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("swiglu_grad")
                           .Input("x", g.Input("x"))
                           .Input("y", g.Input("y"))
                           .Input(GradVarName("out"), g.OutputGrad("out"))
                           .Output(GradVarName("x"), g.InputGrad("x"))
                           .Output(GradVarName("y"), g.InputGrad("y"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("swiglu_grad")
                     .Input("x")
                     .Input("y")
                     .AsDispensable()
                     .Input(GradVarName("out"))
                     .Output(GradVarName("x"))
                     .AsDispensable()
                     .Output(GradVarName("y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("x")
                     .InferShape([](tide::InferShapeContext& c) {
                       for (const char* p : {"x", "y"}) {
                         const std::string g = GradVarName(p);
                         if (!c.HasOutput(g.c_str()) || !c.HasInput(p)) continue;
                         c.SetOutputDims(g.c_str(), c.InputDims(p));
                         c.SetOutputDataType(g.c_str(), c.InputDataType(p));
                       }
                     }));
TIDE_REGISTER_KERNEL("swiglu", "cpu", SwigluKernel, OPS_MATH_FLOAT_TYPES, tide::bfloat16);
TIDE_REGISTER_KERNEL("swiglu_grad", "cpu", SwigluGradKernel, OPS_MATH_FLOAT_TYPES);
