// rms_norm_ops.cc: Paddle's RMS normalisation, with grads: rms_norm (x [..., normalized_shape],
// scale -> y = x / sqrt(mean(x^2) + epsilon) * scale and invvar, one per row) and
// fused_rms_norm_quant (paddle.incubate.nn.functional.fused_rms_norm: the rows are x's dims from
// begin_norm_axis on; with residual, x + residual (+ bias) is normalised and written to
// residual_out; out = that * inv_var * norm_weight (+ norm_bias)). Paddle's kernels ignore bias
// without residual, and so does Tide. Quantising out (quant_scale > 0) is refused.
#include <cmath>
#include <string>
#include <tide/low_precision.hpp>
#include <type_traits>
#include <vector>

#include "common.h"

namespace ops_nn {
namespace {

// One normalisation over [rows, cols]: s = x (+ residual (+ bias), per row), r = 1 / RMS(s).
template <typename T>
struct RmsRows {
  int64_t rows = 0, cols = 0;
  double eps = 0;
  const T *x = nullptr, *residual = nullptr, *bias = nullptr, *weight = nullptr, *shift = nullptr;

  void Sum(int64_t row, T* s) const {
    const int64_t o = row * cols;
    for (int64_t c = 0; c < cols; ++c)
      s[c] = residual ? x[o + c] + residual[o + c] + (bias ? bias[c] : T(0)) : x[o + c];
  }
  T InvRms(const T* s) const {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += double(s[c]) * double(s[c]);
    return static_cast<T>(1.0 / std::sqrt(ss / double(cols) + eps));
  }
};

// One row: s (its sum), o (its out); returns r.
template <typename T>
T RmsRowForward(const RmsRows<T>& a, int64_t row, T* s, T* o) {
  a.Sum(row, s);
  const T r = a.InvRms(s);
  for (int64_t c = 0; c < a.cols; ++c)
    o[c] = s[c] * r * (a.weight ? a.weight[c] : T(1)) + (a.shift ? a.shift[c] : T(0));
  return r;
}

// out, and where asked residual_out (s) and inv_var (r per row); the rows split over the CPU
// pool (an LLM's normalisations run on every token of a prefill).
template <typename T>
void RmsForward(const KernelContext& ctx, const RmsRows<T>& a, T* out, T* sum_out, T* inv) {
  ParallelFor(ctx, a.rows, 4 * a.cols, [&](int64_t begin, int64_t end) {
    std::vector<T> s(static_cast<size_t>(a.cols));
    for (int64_t row = begin; row < end; ++row) {
      const T r = RmsRowForward(a, row, s.data(), out + row * a.cols);
      if (sum_out) std::copy(s.begin(), s.end(), sum_out + row * a.cols);
      if (inv) inv[row] = r;
    }
  });
}

using tide::bfloat16;

// bfloat16 x and residual (bfloat16 inference, between bfloat16 ops) with float32 weights
// (AsFloat32Param, in `f`, whose x and residual are unset): each row widened and normalised by
// the float32 kernel's arithmetic (RmsRowForward), out, residual_out and inv_var each rounded
// once, as the float32 kernel between two casts computed them.
void RmsForwardBf16(const KernelContext& ctx, const RmsRows<float>& f, const bfloat16* x,
                    const bfloat16* residual, bfloat16* out, bfloat16* sum_out, bfloat16* inv) {
  const int64_t cols = f.cols;
  ParallelFor(ctx, f.rows, 4 * cols, [&](int64_t begin, int64_t end) {
    std::vector<float> xs(static_cast<size_t>(cols)), rs(residual ? xs.size() : 0), s(xs.size()),
        o(xs.size());
    RmsRows<float> one = f;  // this row, widened
    one.rows = 1;
    one.x = xs.data();
    one.residual = residual ? rs.data() : nullptr;
    for (int64_t row = begin; row < end; ++row) {
      tide::Bfloat16BitsToFloat(tide::Bits(x + row * cols), xs.data(), cols);
      if (residual) tide::Bfloat16BitsToFloat(tide::Bits(residual + row * cols), rs.data(), cols);
      const float r = RmsRowForward(one, 0, s.data(), o.data());
      tide::FloatToBfloat16Bits(o.data(), tide::Bits(out + row * cols), cols);
      if (sum_out) tide::FloatToBfloat16Bits(s.data(), tide::Bits(sum_out + row * cols), cols);
      if (inv) inv[row] = bfloat16(r);
    }
  });
}

// The grads of one normalisation. dS = r w g - s r^3 mean(s w g) (+ the grad of residual_out)
// goes to x and residual, its column sums to bias (with residual); dweight = sum g s r, dshift =
// sum g. Null outputs are not asked for.
template <typename T>
struct RmsGrads {
  T *dx = nullptr, *dresidual = nullptr, *dbias = nullptr, *dweight = nullptr, *dshift = nullptr;
};

template <typename T>
void RmsBackward(const RmsRows<T>& a, const T* dout, const T* dsum, const RmsGrads<T>& d) {
  for (T* p : {d.dbias, d.dweight, d.dshift})
    if (p) std::fill(p, p + a.cols, T(0));
  std::vector<T> s(static_cast<size_t>(a.cols));
  for (int64_t row = 0; row < a.rows; ++row) {
    a.Sum(row, s.data());
    const T r = a.InvRms(s.data());
    const int64_t o = row * a.cols;
    double m = 0;
    for (int64_t c = 0; c < a.cols; ++c)
      m += double(s[c]) * double(dout[o + c]) * double(a.weight ? a.weight[c] : T(1));
    const T k = static_cast<T>(m / double(a.cols)) * r * r * r;
    for (int64_t c = 0; c < a.cols; ++c) {
      const T g = dout[o + c];
      const T ds = r * g * (a.weight ? a.weight[c] : T(1)) - s[c] * k + (dsum ? dsum[o + c] : T(0));
      if (d.dx) d.dx[o + c] = ds;
      if (d.dresidual) d.dresidual[o + c] = ds;
      if (d.dbias && a.residual) d.dbias[c] += ds;  // bias counts only with residual
      if (d.dweight) d.dweight[c] += g * s[c] * r;
      if (d.dshift) d.dshift[c] += g;
    }
  }
}

// A 1-D-or-more input of `cols` elements (weight, bias), or null when absent.
template <typename T>
const T* PerColumn(KernelContext& ctx, const char* slot, int64_t cols) {
  Tensor t = ctx.OptionalInput(slot);
  if (!t) return nullptr;
  TIDE_CHECK(t.numel() == cols, "op '", ctx.op_type(), "': ", slot, " ('", ctx.InputName(slot),
             "') must hold one value per normalised column (", cols, "), but has dims ",
             tide::ToString(t.dims()));
  return t.data<T>();
}

template <typename T>
T* GradOf(KernelContext& ctx, const char* slot, const Dims& dims) {
  const std::string g = GradVarName(slot);
  if (!ctx.HasOutput(g.c_str())) return nullptr;
  return ctx.Output(g.c_str()).mutable_data<T>(dims, ctx.place());
}

// ---- rms_norm: the last normalized_shape.size() dims of x are normalised.
int64_t RowsAxis(const char* op, const std::string& xname, const Dims& x,
                 const std::vector<int64_t>& shape) {
  TIDE_CHECK(!shape.empty() && shape.size() <= x.size(), "op '", op,
             "': normalized_shape must name 1 to rank(x) = ", x.size(), " trailing dims, got ",
             shape.size());
  const size_t at = x.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    TIDE_CHECK(x[at + i] < 0 || x[at + i] == shape[i], "op '", op, "': x ('", xname, "') ",
               tide::ToString(x), " does not end in normalized_shape ", tide::ToString(shape));
  return static_cast<int64_t>(at);
}

void RmsNormShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("x");
  const auto shape = ctx.Attr<std::vector<int64_t>>("normalized_shape");
  const int64_t at = RowsAxis(ctx.op_type(), ctx.InputName("x"), x, shape);
  ctx.SetOutputDims("y", x);
  ctx.SetOutputDataType("y", ctx.InputDataType("x"));
  if (!ctx.HasOutput("invvar")) return;  // inference: the fused pass drops it
  ctx.SetOutputDims("invvar", Dims(x.begin(), x.begin() + at));
  ctx.SetOutputDataType("invvar", ctx.InputDataType("x"));
}

// A kernel's x split at normalized_shape: `rows` rows (the product of its dims before `at`) of
// `cols` values.
struct RmsNormSplit {
  int64_t at = 0, rows = 0, cols = 0;
};
RmsNormSplit SplitRows(const KernelContext& ctx, const Dims& d) {
  RmsNormSplit s;
  s.at = RowsAxis(ctx.op_type(), ctx.InputName("x"), d,
                  ctx.Attr<std::vector<int64_t>>("normalized_shape"));
  s.rows = DimsProduct(Dims(d.begin(), d.begin() + s.at));
  s.cols = DimsProduct(Dims(d.begin() + s.at, d.end()));
  return s;
}

// x's rows; the weights as P (float for bfloat16 x), x itself as T.
template <typename T, typename P = T>
RmsRows<P> RmsNormRows(KernelContext& ctx, const Tensor& x, const RmsNormSplit& s) {
  RmsRows<P> a;
  a.rows = s.rows;
  a.cols = s.cols;
  a.eps = ctx.Attr<double>("epsilon");
  if constexpr (std::is_same_v<T, P>) a.x = x.data<T>();
  a.weight = PerColumn<P>(ctx, "scale", a.cols);
  return a;
}

template <typename T>
void RmsNormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const Dims d = x.dims();
  const RmsNormSplit s = SplitRows(ctx, d);
  T* y = ctx.Output("y").mutable_data<T>(d, ctx.place());
  T* inv = ctx.HasOutput("invvar") ? ctx.Output("invvar").mutable_data<T>(
                                         Dims(d.begin(), d.begin() + s.at), ctx.place())
                                   : nullptr;
  if constexpr (std::is_same_v<T, bfloat16>)
    RmsForwardBf16(ctx, RmsNormRows<T, float>(ctx, x, s), x.data<T>(), nullptr, y, nullptr, inv);
  else
    RmsForward<T>(ctx, RmsNormRows<T>(ctx, x, s), y, nullptr, inv);
}

template <typename T>
void RmsNormGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const RmsRows<T> a = RmsNormRows<T>(ctx, x, SplitRows(ctx, x.dims()));
  RmsGrads<T> d;
  d.dx = GradOf<T>(ctx, "x", x.dims());
  if (a.weight) d.dweight = GradOf<T>(ctx, "scale", ctx.Input("scale").dims());
  RmsBackward<T>(a, ctx.Input(GradVarName("y").c_str()).data<T>(), nullptr, d);
}

// ---- fused_rms_norm_quant: rows are x's dims before begin_norm_axis.
int64_t NormAxisOf(const char* op, int32_t axis, size_t rank) {
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  TIDE_CHECK(a >= 0 && a < static_cast<int64_t>(rank), "op '", op, "': begin_norm_axis ", axis,
             " is outside x's ", rank, " dims");
  return a;
}

void CheckNoQuant(const char* op, float quant_scale) {
  TIDE_CHECK(quant_scale <= 0, "op '", op, "': quant_scale = ", quant_scale,
             " asks for out quantised to int8, which Tide does not compute; only quant_scale "
             "<= 0 (no quantisation) is supported");
}

void FusedRmsShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckNoQuant(op, ctx.Attr<float>("quant_scale"));
  const Dims x = ctx.InputDims("x");
  const int64_t at = NormAxisOf(op, ctx.Attr<int32_t>("begin_norm_axis"), x.size());
  if (ctx.HasInput("residual")) {
    const Dims r = ctx.InputDims("residual");
    TIDE_CHECK(r.size() == x.size(), "op '", op, "': residual ('", ctx.InputName("residual"), "') ",
               tide::ToString(r), " must have x's dims ", tide::ToString(x));
  }
  const TideDataType t = ctx.InputDataType("x");
  ctx.SetOutputDims("out", x);
  ctx.SetOutputDataType("out", t);
  if (ctx.HasOutput("residual_out")) {
    ctx.SetOutputDims("residual_out", x);
    ctx.SetOutputDataType("residual_out", t);
  }
  if (ctx.HasOutput("inv_var")) {
    ctx.SetOutputDims("inv_var", {DimsProductOrUnknown(Dims(x.begin(), x.begin() + at))});
    ctx.SetOutputDataType("inv_var", t);
  }
}

// x's rows (and residual's); the weights and bias as P (float for bfloat16 x), x and residual
// themselves as T.
template <typename T, typename P = T>
RmsRows<P> FusedRows(KernelContext& ctx, const Tensor& x) {
  const char* op = ctx.op_type();
  CheckNoQuant(op, ctx.Attr<float>("quant_scale"));
  const Dims d = x.dims();
  const int64_t at = NormAxisOf(op, ctx.Attr<int32_t>("begin_norm_axis"), d.size());
  RmsRows<P> a;
  a.rows = DimsProduct(Dims(d.begin(), d.begin() + at));
  a.cols = DimsProduct(Dims(d.begin() + at, d.end()));
  a.eps = ctx.Attr<float>("epsilon");
  a.weight = PerColumn<P>(ctx, "norm_weight", a.cols);
  TIDE_CHECK(a.weight, "op '", op, "': norm_weight is missing");
  a.shift = PerColumn<P>(ctx, "norm_bias", a.cols);
  Tensor res = ctx.OptionalInput("residual");
  if (res) {
    TIDE_CHECK(res.dims() == d, "op '", op, "': residual ('", ctx.InputName("residual"), "') ",
               tide::ToString(res.dims()), " must have x's dims ", tide::ToString(d));
    a.bias = PerColumn<P>(ctx, "bias", a.cols);
  }
  if constexpr (std::is_same_v<T, P>) {
    a.x = x.data<T>();
    if (res) a.residual = res.data<T>();
  }
  return a;
}

template <typename T>
void FusedRmsKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const Dims d = x.dims();
  T* out = ctx.Output("out").mutable_data<T>(d, ctx.place());
  T* sum = ctx.HasOutput("residual_out")
               ? ctx.Output("residual_out").mutable_data<T>(d, ctx.place())
               : nullptr;
  if constexpr (std::is_same_v<T, bfloat16>) {
    const RmsRows<float> f = FusedRows<T, float>(ctx, x);
    Tensor res = ctx.OptionalInput("residual");
    T* inv = ctx.HasOutput("inv_var") ? ctx.Output("inv_var").mutable_data<T>({f.rows}, ctx.place())
                                      : nullptr;
    RmsForwardBf16(ctx, f, x.data<T>(), res ? res.data<T>() : nullptr, out, sum, inv);
  } else {
    const RmsRows<T> a = FusedRows<T>(ctx, x);
    T* inv = ctx.HasOutput("inv_var") ? ctx.Output("inv_var").mutable_data<T>({a.rows}, ctx.place())
                                      : nullptr;
    RmsForward<T>(ctx, a, out, sum, inv);
  }
}

template <typename T>
void FusedRmsGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const RmsRows<T> a = FusedRows<T>(ctx, x);
  RmsGrads<T> d;
  d.dx = GradOf<T>(ctx, "x", x.dims());
  d.dweight = GradOf<T>(ctx, "norm_weight", ctx.Input("norm_weight").dims());
  if (a.shift) d.dshift = GradOf<T>(ctx, "norm_bias", ctx.Input("norm_bias").dims());
  if (a.residual) d.dresidual = GradOf<T>(ctx, "residual", x.dims());
  if (ctx.HasInput("bias")) d.dbias = GradOf<T>(ctx, "bias", ctx.Input("bias").dims());
  const std::string gsum = GradVarName("residual_out");
  Tensor dsum = ctx.OptionalInput(gsum.c_str());
  RmsBackward<T>(a, ctx.Input(GradVarName("out").c_str()).data<T>(),
                 dsum ? dsum.data<T>() : nullptr, d);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("rms_norm")
                     .Comment("y = x / sqrt(mean(x^2 over normalized_shape) + epsilon) * scale.")
                     .Input("x", "[..., normalized_shape]")
                     .Input("scale", "normalized_shape (optional)")
                     .AsDispensable()
                     .AsFloat32Param()  // float32 for bfloat16 x, as Paddle
                     .Output("y", "x's dims")
                     .Output("invvar", "1 / RMS per row, x's leading dims")
                     .AsDispensable()
                     .RequiredAttr("normalized_shape", TIDE_ATTR_LONGS,
                                   "x's trailing dims to normalise")
                     .Attr("epsilon", 1e-5, "added to the mean square")
                     .KernelDataTypeFrom("x")
                     .InferShape(RmsNormShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("rms_norm_grad")
                           .Input("x", g.Input("x"))
                           .Input("scale", g.Input("scale"))
                           .Input(GradVarName("y"), g.OutputGrad("y"))
                           .Output(GradVarName("x"), g.InputGrad("x"))
                           .Output(GradVarName("scale"), g.InputGrad("scale"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("rms_norm_grad")
                     .Input("x")
                     .Input("scale")
                     .AsDispensable()
                     .Input(GradVarName("y"))
                     .Output(GradVarName("x"))
                     .AsDispensable()
                     .Output(GradVarName("scale"))
                     .AsDispensable()
                     .RequiredAttr("normalized_shape", TIDE_ATTR_LONGS)
                     .Attr("epsilon", 1e-5)
                     .KernelDataTypeFrom("x")
                     .InferShape(GradLike({"x", "scale"})));
TIDE_REGISTER_KERNEL("rms_norm", "cpu", RmsNormKernel, OPS_NN_FLOAT_TYPES, tide::bfloat16);
TIDE_REGISTER_KERNEL("rms_norm_grad", "cpu", RmsNormGradKernel, OPS_NN_FLOAT_TYPES);

tide::OpSchema FusedRmsAttrs(tide::OpSchema s) {
  return s.RequiredAttr("epsilon", TIDE_ATTR_FLOAT, "added to the mean square")
      .RequiredAttr("begin_norm_axis", TIDE_ATTR_INT, "x's first normalised dim")
      .Attr("quant_scale", -1.0f, "<= 0: no quantisation (the only kind Tide computes)")
      .Attr("quant_round_type", int32_t(0), "the quantisation's rounding (unused)")
      .Attr("quant_max_bound", 0.0f, "the quantisation's upper bound (unused)")
      .Attr("quant_min_bound", 0.0f, "the quantisation's lower bound (unused)");
}

TIDE_REGISTER_OP(FusedRmsAttrs(
    tide::OpSchema("fused_rms_norm_quant")
        .Comment("s = x (+ residual + bias); out = s / sqrt(mean(s^2) + epsilon) * norm_weight "
                 "(+ norm_bias) over x's dims from begin_norm_axis; residual_out = s.")
        .Input("x", "the input")
        .Input("bias", "added with residual, one per column (optional; ignored without residual)")
        .AsDispensable()
        .AsFloat32Param()  // the weights float32 for bfloat16 x, as rms_norm's scale
        .Input("residual", "added to x before normalising, x's dims (optional)")
        .AsDispensable()
        .Input("norm_weight", "one scale per column")
        .AsFloat32Param()
        .Input("norm_bias", "one shift per column (optional)")
        .AsDispensable()
        .AsFloat32Param()
        .Output("out", "x's dims")
        .Output("residual_out", "x + residual + bias (optional)")
        .AsDispensable()
        .Output("inv_var", "1 / RMS per row (optional)")
        .AsDispensable()
        .KernelDataTypeFrom("x")
        .InferShape(FusedRmsShape)
        .Grad([](tide::GradMaker& g) {
          auto op = g.NewOp("fused_rms_norm_quant_grad");
          for (const char* in : {"x", "bias", "residual", "norm_weight", "norm_bias"}) {
            op.Input(in, g.Input(in));
            op.Output(GradVarName(in), g.InputGrad(in));
          }
          op.Input(GradVarName("out"), g.OutputGrad("out"))
              .Input(GradVarName("residual_out"), g.OutputGrad("residual_out"))
              .CopyAttrs();
        })));
TIDE_REGISTER_OP(FusedRmsAttrs(tide::OpSchema("fused_rms_norm_quant_grad")
                                   .Input("x")
                                   .Input("bias")
                                   .AsDispensable()
                                   .Input("residual")
                                   .AsDispensable()
                                   .Input("norm_weight")
                                   .Input("norm_bias")
                                   .AsDispensable()
                                   .Input(GradVarName("out"))
                                   .Input(GradVarName("residual_out"))
                                   .AsDispensable()
                                   .Output(GradVarName("x"))
                                   .AsDispensable()
                                   .Output(GradVarName("bias"))
                                   .AsDispensable()
                                   .Output(GradVarName("residual"))
                                   .AsDispensable()
                                   .Output(GradVarName("norm_weight"))
                                   .AsDispensable()
                                   .Output(GradVarName("norm_bias"))
                                   .AsDispensable()
                                   .KernelDataTypeFrom("x")
                                   .InferShape(GradLike({"x", "bias", "residual", "norm_weight",
                                                         "norm_bias"}))));
TIDE_REGISTER_KERNEL("fused_rms_norm_quant", "cpu", FusedRmsKernel, OPS_NN_FLOAT_TYPES,
                     tide::bfloat16);
TIDE_REGISTER_KERNEL("fused_rms_norm_quant_grad", "cpu", FusedRmsGradKernel, OPS_NN_FLOAT_TYPES);
