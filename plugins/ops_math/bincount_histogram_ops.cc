// bincount_histogram_ops.cc: Paddle's counting ops, with Paddle's output types:
//  bincount (paddle.bincount): Out[v] = how often v occurs in the non-negative int X (or the sum of
//    Weights there); Out's length max(X) + 1, at least minlength. int64 without Weights; float32
//    Weights give float32, others float64.
//  histogram (paddle.histogram): `bins` equal bins over [min, max] (both 0: X's own range; an
//    empty range widened by 1 each way, as Paddle), elements outside left out, max in the last bin;
//    int64 counts, Weight's type with Weight, float32 densities (count / (total * bin width)).
#include <cmath>
#include <tide/ops/int_inputs.hpp>

#include "common.h"

namespace ops_math {
namespace {

void CheckIntX(const char* op, const std::string& name, TideDataType t) {
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", op, "': X ('", name,
             "') must be int32 or int64, got ", tide::DataTypeName(t));
}

TideDataType BincountOutType(TideDataType weights) {
  if (weights == TIDE_UNDEFINED) return TIDE_INT64;
  return weights == TIDE_FP32 ? TIDE_FP32 : TIDE_FP64;
}

void BincountInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  CheckIntX(op, ctx.InputName("X"), ctx.InputDataType("X"));
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(x.size() == 1, "op '", op, "': X must be 1-D, got ", tide::ToString(x));
  TIDE_CHECK(ctx.Attr<int32_t>("minlength") >= 0, "op '", op, "': minlength must be >= 0, got ",
             ctx.Attr<int32_t>("minlength"));
  TideDataType w = TIDE_UNDEFINED;
  if (ctx.HasInput("Weights")) {
    const Dims wd = ctx.InputDims("Weights");
    TIDE_CHECK(wd.size() == 1 && tide::ops::DimsCompatible(wd[0], x[0]), "op '", op,
               "': Weights ('", ctx.InputName("Weights"), "') must be X's dims ", tide::ToString(x),
               ", got ", tide::ToString(wd));
    w = ctx.InputDataType("Weights");
    if (w == TIDE_UNDEFINED) w = TIDE_FP32;
  }
  ctx.SetOutputDims("Out", {-1});  // the kernel knows X's largest value
  ctx.SetOutputDataType("Out", BincountOutType(w));
}

template <typename O, typename W>
void Count(Tensor& out, const std::vector<int64_t>& x, const W* w, int64_t n,
           const tide::Place& place) {
  O* o = out.mutable_data<O>({n}, place);
  std::fill(o, o + n, O(0));
  for (size_t i = 0; i < x.size(); ++i) o[x[i]] += w ? static_cast<O>(w[i]) : O(1);
}

// Registered per X's type (int32, int64).
template <typename T>
void BincountKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor xt = ctx.Input("X");
  CheckIntX(op, ctx.InputName("X"), xt.dtype());
  const std::vector<int64_t> x = tide::ops::IntValues(ctx, "X");
  int64_t n = ctx.Attr<int32_t>("minlength");
  if (ctx.HasInput("MinLength")) {  // computed at run time (PIR's minlength operand)
    const std::vector<int64_t> m = tide::ops::IntValues(ctx, "MinLength");
    TIDE_CHECK(m.size() == 1, "op '", op, "': MinLength ('", ctx.InputName("MinLength"),
               "') must hold one value, got ", m.size());
    n = m[0];
    TIDE_CHECK(n >= 0, "op '", op, "': MinLength ('", ctx.InputName("MinLength"),
               "') must be >= 0, got ", n);
  }
  TIDE_CHECK(n >= 0, "op '", op, "': minlength must be >= 0, got ", n);
  for (size_t i = 0; i < x.size(); ++i) {
    TIDE_CHECK(x[i] >= 0, "op '", op, "': X ('", ctx.InputName("X"), "') holds ", x[i],
               " at index ", i, "; bincount counts non-negative values only");
    n = std::max(n, x[i] + 1);
  }
  Tensor out = ctx.Output("Out");
  if (!ctx.HasInput("Weights")) return Count<int64_t, int64_t>(out, x, nullptr, n, ctx.place());
  Tensor w = ctx.Input("Weights");
  TIDE_CHECK(w.numel() == static_cast<int64_t>(x.size()), "op '", op, "': Weights ('",
             ctx.InputName("Weights"), "') holds ", w.numel(), " values, X ", x.size());
  switch (w.dtype()) {
    case TIDE_FP32:
      return Count<float>(out, x, w.data<float>(), n, ctx.place());
    case TIDE_FP64:
      return Count<double>(out, x, w.data<double>(), n, ctx.place());
    case TIDE_INT32:
      return Count<double>(out, x, w.data<int32_t>(), n, ctx.place());
    case TIDE_INT64:
      return Count<double>(out, x, w.data<int64_t>(), n, ctx.place());
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': Weights ('", ctx.InputName("Weights"),
                 "') must be float32, float64, int32 or int64, got ",
                 tide::DataTypeName(w.dtype()));
  }
}

TideDataType HistogramOutType(bool density, bool weighted, TideDataType weight) {
  if (density) return TIDE_FP32;
  return weighted ? weight : TIDE_INT64;
}

void HistogramInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const int64_t bins = ctx.Attr<int64_t>("bins");
  TIDE_CHECK(bins >= 1, "op '", op, "': bins must be >= 1, got ", bins);
  const float lo = ctx.Attr<float>("min"), hi = ctx.Attr<float>("max");
  TIDE_CHECK(hi >= lo, "op '", op, "': max (", hi, ") must be >= min (", lo, ")");
  const bool weighted = ctx.HasInput("Weight");
  if (weighted) {
    const Dims x = ctx.InputDims("X"), w = ctx.InputDims("Weight");
    const auto known = [](const Dims& d) {
      return std::all_of(d.begin(), d.end(), [](int64_t v) { return v >= 0; });
    };
    TIDE_CHECK(!known(x) || !known(w) || x == w, "op '", op, "': Weight ('",
               ctx.InputName("Weight"), "') must be X's dims ", tide::ToString(x), ", got ",
               tide::ToString(w));
  }
  ctx.SetOutputDims("Out", {bins});
  ctx.SetOutputDataType("Out",
                        HistogramOutType(ctx.Attr<bool>("density"), weighted,
                                         weighted ? ctx.InputDataType("Weight") : TIDE_FP32));
}

template <typename O, typename T, typename W>
void Histogram(KernelContext& ctx, const T* x, int64_t n, const W* w, double lo, double hi) {
  const int64_t bins = ctx.Attr<int64_t>("bins");
  std::vector<double> count(static_cast<size_t>(bins), 0.0);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    if (!(v >= lo && v <= hi)) continue;  // NaN too
    int64_t b = static_cast<int64_t>((v - lo) * static_cast<double>(bins) / (hi - lo));
    b = std::min(b, bins - 1);
    const double add = w ? static_cast<double>(w[i]) : 1.0;
    count[b] += add;
    total += add;
  }
  const bool density = ctx.Attr<bool>("density");
  const double scale = density ? 1.0 / (total * (hi - lo) / static_cast<double>(bins)) : 1.0;
  O* o = ctx.Output("Out").mutable_data<O>({bins}, ctx.place());
  for (int64_t b = 0; b < bins; ++b) o[b] = static_cast<O>(count[b] * scale);
}

template <typename T>
bool IsFinite(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(v);
  else
    return true;
}

template <typename T>
void HistogramKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor xt = ctx.Input("X");
  const T* x = xt.data<T>();
  const int64_t n = xt.numel();
  double lo = ctx.Attr<float>("min"), hi = ctx.Attr<float>("max");
  TIDE_CHECK(hi >= lo, "op '", op, "': max (", hi, ") must be >= min (", lo, ")");
  if (lo == 0 && hi == 0 && n > 0) {  // X's own range (its finite values)
    bool any = false;
    for (int64_t i = 0; i < n; ++i) {
      if (!IsFinite(x[i])) continue;
      const double v = static_cast<double>(x[i]);
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  const bool density = ctx.Attr<bool>("density");
  if (!ctx.HasInput("Weight")) {
    if (density) return Histogram<float, T, T>(ctx, x, n, nullptr, lo, hi);
    return Histogram<int64_t, T, T>(ctx, x, n, nullptr, lo, hi);
  }
  Tensor w = ctx.Input("Weight");
  TIDE_CHECK(w.dims() == xt.dims(), "op '", op, "': Weight ('", ctx.InputName("Weight"),
             "') must be X's dims ", tide::ToString(xt.dims()), ", got ", tide::ToString(w.dims()));
  TIDE_CHECK(w.dtype() == TIDE_FP32 || w.dtype() == TIDE_FP64, "op '", op, "': Weight ('",
             ctx.InputName("Weight"), "') must be float32 or float64, got ",
             tide::DataTypeName(w.dtype()));
  if (w.dtype() == TIDE_FP32) return Histogram<float>(ctx, x, n, w.data<float>(), lo, hi);
  if (density) return Histogram<float>(ctx, x, n, w.data<double>(), lo, hi);
  Histogram<double>(ctx, x, n, w.data<double>(), lo, hi);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("bincount")
                     .Comment("Out[v] = the count (or Weights' sum) of v in X (paddle.bincount).")
                     .Input("X", "int32/int64, 1-D, non-negative")
                     .Input("Weights", "X's dims: what each element adds (default 1)")
                     .AsDispensable()
                     .Input("MinLength",
                            "int32/int64 [1] or []: minlength at run time "
                            "(optional; over the attribute)")
                     .AsDispensable()
                     .Output("Out", "max(X) + 1 values, at least minlength")
                     .Attr("minlength", int32_t{0}, "Out's least length")
                     .KernelDataTypeFrom("X")
                     .InferShape(BincountInferShape)
                     .NoGradient());
TIDE_REGISTER_OP(tide::OpSchema("histogram")
                     .Comment("Out = the histogram of X over `bins` equal bins of [min, max] "
                              "(paddle.histogram).")
                     .Input("X", "the values")
                     .Input("Weight", "X's dims: what each element adds (default 1)")
                     .AsDispensable()
                     .Output("Out", "[bins]: int64 counts, Weight's type, float32 densities")
                     .Attr("bins", int64_t{100}, "how many bins")
                     .Attr("min", 0.0f, "the range's lower end (min = max = 0: X's range)")
                     .Attr("max", 0.0f, "the range's upper end")
                     .Attr("density", false, "count / (total * bin width) instead of counts")
                     .KernelDataTypeFrom("X")
                     .InferShape(HistogramInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("bincount", "cpu", BincountKernel, int32_t, int64_t);
TIDE_REGISTER_KERNEL("histogram", "cpu", HistogramKernel, OPS_MATH_NUMERIC_TYPES);
