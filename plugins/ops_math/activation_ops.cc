// activation_ops.cc: Fluid's activations, table-driven: one functor per activation (its name,
// formula, attributes with Fluid's defaults, Out = f(X) and dX = df(dOut)), and one helper that
// registers the op, its grad op and float/double kernels for each. A grad reads X or Out, as the
// activation's Fluid grad op does (kDep), so other devices' grad kernels see the same inputs.
// Also scale (a linear op with its own grad rule) and prelu (a learnt Alpha input).
#include <cmath>
#include <limits>
#include <type_traits>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

enum Dep { kDepX, kDepOut };

// A functor's attributes: read from a kernel's context; declared on its schema.
struct AttrSpec {
  const char* name;
  float default_value;
  const char* comment;
};

template <typename T> T Sigm(T x) { return T(1) / (T(1) + std::exp(-x)); }
// log(1 + exp(x)) without overflow.
template <typename T> T Softplus(T x) {
  return std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x)));
}

// Each functor: kName, kFormula, kDep, kAttrs (up to 3), a constructor from the attribute values
// (as float, in kAttrs order), Fwd(x) and Bwd(v, dout) with v = X or Out per kDep.
// The attribute-less functors differ only in their formulas: a macro keeps each one line long.
#define SIMPLE_ACT(Cls, name, formula, dep, fwd, bwd)                        \
  struct Cls {                                                               \
    static constexpr const char* kName = name;                               \
    static constexpr const char* kFormula = formula;                         \
    static constexpr Dep kDep = dep;                                         \
    static constexpr int kNumAttrs = 0;                                      \
    static constexpr AttrSpec kAttrs[1] = {{"", 0, ""}};                     \
    explicit Cls(const float*) {}                                            \
    template <typename T> T Fwd(T x) const { return fwd; }                   \
    template <typename T> T Bwd(T v, T g) const { (void)v; return bwd; }     \
  };

SIMPLE_ACT(Relu, "relu", "max(X, 0)", kDepOut, x > T(0) ? x : T(0), v > T(0) ? g : T(0))
SIMPLE_ACT(Sigmoid, "sigmoid", "1 / (1 + exp(-X))", kDepOut, Sigm(x), g * v * (T(1) - v))
SIMPLE_ACT(Tanh, "tanh", "tanh(X)", kDepOut, std::tanh(x), g * (T(1) - v * v))
SIMPLE_ACT(Square, "square", "X^2", kDepX, x * x, g * T(2) * v)
SIMPLE_ACT(Abs, "abs", "|X|", kDepX, std::abs(x), v > T(0) ? g : (v < T(0) ? -g : T(0)))
SIMPLE_ACT(Acos, "acos", "acos(X)", kDepX, std::acos(x), -g / std::sqrt(T(1) - v * v))
SIMPLE_ACT(Asin, "asin", "asin(X)", kDepX, std::asin(x), g / std::sqrt(T(1) - v * v))
SIMPLE_ACT(Atan, "atan", "atan(X)", kDepX, std::atan(x), g / (T(1) + v * v))
SIMPLE_ACT(Cos, "cos", "cos(X)", kDepX, std::cos(x), -g * std::sin(v))
SIMPLE_ACT(Sin, "sin", "sin(X)", kDepX, std::sin(x), g * std::cos(v))
SIMPLE_ACT(Exp, "exp", "exp(X)", kDepOut, std::exp(x), g * v)
SIMPLE_ACT(Log, "log", "ln(X)", kDepX, std::log(x), g / v)
SIMPLE_ACT(Reciprocal, "reciprocal", "1 / X", kDepOut, T(1) / x, -g * v * v)
SIMPLE_ACT(Rsqrt, "rsqrt", "1 / sqrt(X)", kDepOut, T(1) / std::sqrt(x), T(-0.5) * g * v * v * v)
// Piecewise constant: the gradient is 0 (Fluid's ZeroGradFunctor). round: half away from zero.
SIMPLE_ACT(Ceil, "ceil", "ceil(X)", kDepX, std::ceil(x), T(0))
SIMPLE_ACT(Floor, "floor", "floor(X)", kDepX, std::floor(x), T(0))
SIMPLE_ACT(Round, "round", "round(X), halves away from 0", kDepX, std::round(x), T(0))
SIMPLE_ACT(LogSigmoid, "logsigmoid", "log(1 / (1 + exp(-X)))", kDepX, -Softplus(-x),
           g * Sigm(-v))
SIMPLE_ACT(SoftplusAct, "softplus", "log(1 + exp(X))", kDepX, Softplus(x), g * Sigm(v))
SIMPLE_ACT(Softsign, "softsign", "X / (1 + |X|)", kDepX, x / (T(1) + std::abs(x)),
           g / ((T(1) + std::abs(v)) * (T(1) + std::abs(v))))
SIMPLE_ACT(TanhShrink, "tanh_shrink", "X - tanh(X)", kDepX, x - std::tanh(x),
           g * std::tanh(v) * std::tanh(v))
#undef SIMPLE_ACT

// Functors with attributes: `a` holds their values in kAttrs order.
#define ACT_HEAD(Cls, name, formula, dep, n)           \
  static constexpr const char* kName = name;           \
  static constexpr const char* kFormula = formula;     \
  static constexpr Dep kDep = dep;                     \
  static constexpr int kNumAttrs = n;

struct BRelu {
  ACT_HEAD(BRelu, "brelu", "min(max(X, t_min), t_max)", kDepX, 2)
  static constexpr AttrSpec kAttrs[2] = {{"t_min", 0.0f, "lower bound"},
                                         {"t_max", 24.0f, "upper bound"}};
  float lo, hi;
  explicit BRelu(const float* a) : lo(a[0]), hi(a[1]) {}
  template <typename T> T Fwd(T x) const { return std::min(std::max(x, T(lo)), T(hi)); }
  template <typename T> T Bwd(T x, T g) const { return (x > T(lo) && x < T(hi)) ? g : T(0); }
};
struct Elu {
  ACT_HEAD(Elu, "elu", "X > 0 ? X : alpha * (exp(X) - 1)", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"alpha", 1.0f, "the scale of the negative part"}};
  float alpha;
  explicit Elu(const float* a) : alpha(a[0]) {}
  template <typename T> T Fwd(T x) const { return x > T(0) ? x : T(alpha) * std::expm1(x); }
  template <typename T> T Bwd(T x, T g) const { return x > T(0) ? g : g * T(alpha) * std::exp(x); }
};
struct HardShrink {
  ACT_HEAD(HardShrink, "hard_shrink", "|X| > threshold ? X : 0", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"threshold", 0.5f, "values within it become 0"}};
  float t;
  explicit HardShrink(const float* a) : t(a[0]) {}
  template <typename T> T Fwd(T x) const { return (x < T(-t) || x > T(t)) ? x : T(0); }
  template <typename T> T Bwd(T x, T g) const { return (x < T(-t) || x > T(t)) ? g : T(0); }
};
struct HardSigmoid {
  ACT_HEAD(HardSigmoid, "hard_sigmoid", "clip(slope * X + offset, 0, 1)", kDepOut, 2)
  static constexpr AttrSpec kAttrs[2] = {{"slope", 0.2f, "the slope"},
                                         {"offset", 0.5f, "the offset"}};
  float slope, offset;
  explicit HardSigmoid(const float* a) : slope(a[0]), offset(a[1]) {}
  template <typename T> T Fwd(T x) const {
    return std::min(std::max(T(slope) * x + T(offset), T(0)), T(1));
  }
  template <typename T> T Bwd(T out, T g) const {
    return (out > T(0) && out < T(1)) ? g * T(slope) : T(0);
  }
};
// Fluid's grad is 1 where X + offset >= threshold; the true derivative, used here, is
// threshold / scale (the same for the defaults).
struct HardSwish {
  ACT_HEAD(HardSwish, "hard_swish", "X * min(max(X + offset, 0), threshold) / scale", kDepX, 3)
  static constexpr AttrSpec kAttrs[3] = {{"threshold", 6.0f, "the cap of X + offset"},
                                         {"scale", 6.0f, "the divisor"},
                                         {"offset", 3.0f, "added to X"}};
  float t, s, o;
  explicit HardSwish(const float* a) : t(a[0]), s(a[1]), o(a[2]) {}
  template <typename T> T Fwd(T x) const {
    return x * std::min(std::max(x + T(o), T(0)), T(t)) / T(s);
  }
  template <typename T> T Bwd(T x, T g) const {
    if (x + T(o) <= T(0)) return T(0);
    if (x + T(o) >= T(t)) return g * T(t) / T(s);
    return g * (T(2) * x + T(o)) / T(s);
  }
};
struct LeakyRelu {
  ACT_HEAD(LeakyRelu, "leaky_relu", "X > 0 ? X : alpha * X", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"alpha", 0.02f, "the slope for X <= 0"}};
  float alpha;
  explicit LeakyRelu(const float* a) : alpha(a[0]) {}
  template <typename T> T Fwd(T x) const { return x > T(0) ? x : T(alpha) * x; }
  template <typename T> T Bwd(T x, T g) const { return x > T(0) ? g : T(alpha) * g; }
};
struct Pow {
  ACT_HEAD(Pow, "pow", "X ^ factor", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"factor", 1.0f, "the exponent"}};
  float factor;
  explicit Pow(const float* a) : factor(a[0]) {}
  template <typename T> T Fwd(T x) const { return std::pow(x, T(factor)); }
  template <typename T> T Bwd(T x, T g) const {
    return g * T(factor) * std::pow(x, T(factor) - T(1));
  }
};
struct Relu6 {
  ACT_HEAD(Relu6, "relu6", "min(max(X, 0), threshold)", kDepOut, 1)
  static constexpr AttrSpec kAttrs[1] = {{"threshold", 6.0f, "the cap"}};
  float t;
  explicit Relu6(const float* a) : t(a[0]) {}
  template <typename T> T Fwd(T x) const { return std::min(std::max(x, T(0)), T(t)); }
  template <typename T> T Bwd(T out, T g) const { return (out > T(0) && out < T(t)) ? g : T(0); }
};
struct SoftRelu {
  ACT_HEAD(SoftRelu, "soft_relu", "log(1 + exp(clip(X, -threshold, threshold)))", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"threshold", 40.0f, "X is clipped to +-threshold"}};
  float t;
  explicit SoftRelu(const float* a) : t(a[0]) {}
  template <typename T> T Fwd(T x) const { return Softplus(std::min(std::max(x, T(-t)), T(t))); }
  template <typename T> T Bwd(T x, T g) const { return (x > T(-t) && x < T(t)) ? g * Sigm(x) : T(0); }
};
struct SoftShrink {
  ACT_HEAD(SoftShrink, "softshrink", "X - lambda (X > lambda), X + lambda (X < -lambda), else 0",
           kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"lambda", 0.5f, "the shrinkage"}};
  float l;
  explicit SoftShrink(const float* a) : l(a[0]) {}
  template <typename T> T Fwd(T x) const {
    return x > T(l) ? x - T(l) : (x < T(-l) ? x + T(l) : T(0));
  }
  template <typename T> T Bwd(T x, T g) const { return (x > T(l) || x < T(-l)) ? g : T(0); }
};
struct STanh {
  ACT_HEAD(STanh, "stanh", "scale_b * tanh(scale_a * X)", kDepX, 2)
  static constexpr AttrSpec kAttrs[2] = {{"scale_a", 0.67f, "the input scale"},
                                         {"scale_b", 1.7159f, "the output scale"}};
  float a, b;
  explicit STanh(const float* v) : a(v[0]), b(v[1]) {}
  template <typename T> T Fwd(T x) const { return T(b) * std::tanh(T(a) * x); }
  template <typename T> T Bwd(T x, T g) const {
    const T t = std::tanh(T(a) * x);
    return g * T(a) * T(b) * (T(1) - t * t);
  }
};
struct Swish {
  ACT_HEAD(Swish, "swish", "X * sigmoid(beta * X)", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"beta", 1.0f, "the sigmoid's scale"}};
  float beta;
  explicit Swish(const float* a) : beta(a[0]) {}
  template <typename T> T Fwd(T x) const { return x * Sigm(T(beta) * x); }
  template <typename T> T Bwd(T x, T g) const {
    const T s = Sigm(T(beta) * x);
    return g * (s + T(beta) * x * s * (T(1) - s));
  }
};
struct ThresholdedRelu {
  ACT_HEAD(ThresholdedRelu, "thresholded_relu", "X > threshold ? X : 0", kDepX, 1)
  static constexpr AttrSpec kAttrs[1] = {{"threshold", 1.0f, "values up to it become 0"}};
  float t;
  explicit ThresholdedRelu(const float* a) : t(a[0]) {}
  template <typename T> T Fwd(T x) const { return x > T(t) ? x : T(0); }
  template <typename T> T Bwd(T x, T g) const { return x > T(t) ? g : T(0); }
};
#undef ACT_HEAD

// gelu's `approximate` is a bool attribute, unlike the float ones above.
struct Gelu {
  static constexpr const char* kName = "gelu";
  static constexpr const char* kFormula =
      "0.5 X (1 + erf(X / sqrt(2))), or with approximate 0.5 X (1 + tanh(sqrt(2 / pi) (X + "
      "0.044715 X^3)))";
  static constexpr Dep kDep = kDepX;
  bool approximate;
  explicit Gelu(bool approx) : approximate(approx) {}
  template <typename T> T Fwd(T x) const {
    if (approximate) return T(0.5) * x * (T(1) + std::tanh(kC<T>() * (x + T(0.044715) * x * x * x)));
    return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
  }
  template <typename T> T Bwd(T x, T g) const {
    if (approximate) {
      const T inner = kC<T>() * (x + T(0.044715) * x * x * x);
      const T t = std::tanh(inner);
      const T dinner = kC<T>() * (T(1) + T(3 * 0.044715) * x * x);
      return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * dinner);
    }
    const T cdf = T(0.5) * (T(1) + std::erf(x / std::sqrt(T(2))));
    const T pdf = std::exp(T(-0.5) * x * x) / std::sqrt(T(2) * kPi<T>());
    return g * (cdf + x * pdf);
  }
  template <typename T> static T kPi() { return T(3.14159265358979323846); }  // M_PI is POSIX's
  template <typename T> static T kC() { return std::sqrt(T(2) / kPi<T>()); }
};

// A functor made from a kernel's attributes.
template <typename F>
F MakeFunctor(const KernelContext& ctx) {
  if constexpr (std::is_same_v<F, Gelu>) {
    return Gelu(ctx.Attr<bool>("approximate"));
  } else {
    float a[F::kNumAttrs > 0 ? F::kNumAttrs : 1] = {};
    for (int i = 0; i < F::kNumAttrs; ++i) a[i] = ctx.Attr<float>(F::kAttrs[i].name);
    return F(a);
  }
}

template <typename T, typename F>
void ActKernel(KernelContext& ctx) {
  const F f = MakeFunctor<F>(ctx);
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T* __restrict__ xd = x.data<T>();
  T* __restrict__ od = out.mutable_data<T>(x.dims(), ctx.place());
  tide::ParallelFor(ctx, x.numel(), 8, [f, xd, od](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) od[i] = f.template Fwd<T>(xd[i]);
  });
}

template <typename T, typename F>
void ActGradKernel(KernelContext& ctx) {
  const F f = MakeFunctor<F>(ctx);
  const char* from_param = F::kDep == kDepX ? "X" : "Out";
  Tensor from = ctx.Input(from_param);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), from.dims());
  const T* __restrict__ v = from.data<T>();
  const T* __restrict__ g = dout.data<T>();
  T* __restrict__ dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(from.dims(), ctx.place());
  tide::ParallelFor(ctx, from.numel(), 8, [f, v, g, dx](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = f.template Bwd<T>(v[i], g[i]);
  });
}

template <typename F>
tide::OpSchema WithAttrs(tide::OpSchema s) {
  // Paddle 2.x programs carry its oneDNN precision hint on activations (it never changes them).
  s.Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
  if constexpr (std::is_same_v<F, Gelu>) {
    return s.Attr("approximate", false, "use the tanh approximation");
  } else {
    for (int i = 0; i < F::kNumAttrs; ++i)
      s.Attr(F::kAttrs[i].name, F::kAttrs[i].default_value, F::kAttrs[i].comment);
    return s;
  }
}

// The op, its grad op (reading X or Out, and Out@GRAD), and float/double CPU kernels.
template <typename F>
void RegisterActivation(tide::Registrar& r) {
  const std::string formula = F::kFormula;
  const std::string type = F::kName;
  const char* from = F::kDep == kDepX ? "X" : "Out";
  r.Op(WithAttrs<F>(tide::OpSchema(type)
                        .Comment("Out = " + formula + ", elementwise.")
                        .Input("X", "input").Output("Out", "same dims as X")
                        .InferShape(tide::SameShapeAsInput("X", "Out"))
                        .Grad([type, from](tide::GradMaker& g) {
                          auto op = g.NewOp(type + "_grad");
                          if (std::string(from) == "X") op.Input("X", g.Input("X"));
                          else op.Input("Out", g.Output("Out"));
                          op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                              .Output(GradVarName("X"), g.InputGrad("X"))
                              .CopyAttrs();
                        })));
  r.Op(WithAttrs<F>(tide::OpSchema(type + "_grad")
                        .Input(from).Input(GradVarName("Out")).Output(GradVarName("X"))
                        .InferShape(tide::SameShapeAsInput(from, GradVarName("X")))));
  r.Kernel(type, "cpu", TIDE_FP32, &ActKernel<float, F>);
  r.Kernel(type, "cpu", TIDE_FP64, &ActKernel<double, F>);
  r.Kernel(type + "_grad", "cpu", TIDE_FP32, &ActGradKernel<float, F>);
  r.Kernel(type + "_grad", "cpu", TIDE_FP64, &ActGradKernel<double, F>);
}

template <typename... Fs>
void RegisterActivations(tide::Registrar& r) {
  (RegisterActivation<Fs>(r), ...);
}

// The factor: Paddle 2.x's ScaleTensor (one element) when given, else the attribute.
double ScaleFactor(const KernelContext& ctx) {
  if (!ctx.HasInput("ScaleTensor")) return ctx.Attr<float>("scale");
  Tensor t = ctx.Input("ScaleTensor");
  TIDE_CHECK(t.numel() == 1, "op 'scale': ScaleTensor ('", ctx.InputName("ScaleTensor"),
             "') must hold one element, got ", tide::ToString(t.dims()));
  switch (t.dtype()) {
    case TIDE_FP32: return t.data<float>()[0];
    case TIDE_FP64: return t.data<double>()[0];
    case TIDE_INT32: return t.data<int32_t>()[0];
    case TIDE_INT64: return static_cast<double>(t.data<int64_t>()[0]);
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op 'scale': ScaleTensor must be float32, float64, int32 "
                 "or int64, got ", tide::DataTypeName(t.dtype()));
  }
}

// scale or bias as X's type, as Fluid casts them; for an integer X the value must be finite and
// within the type's range (a fuzzer finding: a NaN scale on an int64 X was undefined behaviour).
template <typename T>
T ScaleParam(double v, const char* what) {
  if constexpr (std::is_integral_v<T>) {
    const bool fits = std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
                      v < -static_cast<double>(std::numeric_limits<T>::min());  // [-2^k, 2^k), exact
    TIDE_CHECK(fits, "op 'scale': ", what, " ", v, " has no ", tide::DataTypeName(tide::DataTypeOf<T>()),
               " value (X is ", tide::DataTypeName(tide::DataTypeOf<T>()), ")");
  }
  return static_cast<T>(v);
}

// Out = scale * X + bias (or scale * (X + bias)) elementwise, Out resized like X.
template <typename T>
void ScaleValues(KernelContext& ctx, const Tensor& x, Tensor& out) {
  T scale = ScaleParam<T>(ScaleFactor(ctx), "scale"), bias = ScaleParam<T>(ctx.Attr<float>("bias"), "bias");
  out.ResizeLike(x);
  if (ctx.Attr<bool>("bias_after_scale"))
    EigenEval(ctx, Out<T>(out, ctx), In<T>(x) * scale + bias);
  else
    EigenEval(ctx, Out<T>(out, ctx), (In<T>(x) + bias) * scale);
}

template <typename T>
void ScaleKernel(KernelContext& ctx) {
  tide::Variable xv = ctx.InputVar("X");
  if (xv && xv.IsSelectedRows()) {
    // Fluid: a SelectedRows X gives a SelectedRows Out with X's rows and height, values scaled
    // (X's value tensor goes through the dense path below).
    tide::SelectedRows in = xv.GetSelectedRows(), sr = ctx.OutputVar("Out").GetSelectedRows();
    const std::vector<int64_t> rows = in.rows();
    const int64_t height = in.height();
    Tensor x = in.value(), out = sr.value();
    TIDE_CHECK(x.initialized() || rows.empty(), "op 'scale': X ('", ctx.InputName("X"), "') lists ",
               rows.size(), " rows but has no value");
    if (x.initialized()) ScaleValues<T>(ctx, x, out);
    sr.set_rows(rows);
    sr.set_height(height);
    return;
  }
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  ScaleValues<T>(ctx, x, out);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_ON_REGISTER([](tide::Registrar& r) {
  RegisterActivations<Relu, Sigmoid, Tanh, Square, Abs, Acos, Asin, Atan, Cos, Sin, Exp, Log,
                      Reciprocal, Rsqrt, Ceil, Floor, Round, LogSigmoid, SoftplusAct, Softsign,
                      TanhShrink, BRelu, Elu, HardShrink, HardSigmoid, HardSwish, LeakyRelu, Pow,
                      Relu6, SoftRelu, SoftShrink, STanh, Swish, ThresholdedRelu, Gelu>(r);
});

TIDE_REGISTER_OP(tide::OpSchema("scale")
                     .Comment("Out = scale * X + bias (bias_after_scale), else scale * (X + bias). A "
                              "SelectedRows X gives a SelectedRows Out with X's rows.")
                     .Input("X", "input")
                     .Input("ScaleTensor", "Paddle: the factor as a one-element tensor "
                            "(optional; overrides `scale`)")
                     .AsDispensable()
                     .Output("Out", "same dims as X")
                     .Attr("scale", 1.0f, "the factor")
                     .Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint "
                           "(ignored)")
                     .Attr("bias", 0.0f, "the offset")
                     .Attr("bias_after_scale", true, "add bias after scaling")
                     .InferShape([](tide::InferShapeContext& c) {
                       // A SelectedRows X (a sparse gradient) gives a SelectedRows Out.
                       if (c.InputVarType("X") == TIDE_VAR_SELECTED_ROWS)
                         c.SetOutputVarType("Out", TIDE_VAR_SELECTED_ROWS);
                       tide::SameShapeAsInput("X", "Out")(c);
                     })
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("scale");
                       op.Input("X", g.OutputGrad("Out"));
                       if (!g.Input("ScaleTensor").empty())
                         op.Input("ScaleTensor", g.Input("ScaleTensor"));
                       op.Output("Out", g.InputGrad("X"))
                           .Attr("scale", g.Attr<float>("scale"))
                           .Attr("bias", 0.0f);
                     }));
TIDE_REGISTER_KERNEL("scale", "cpu", ScaleKernel, OPS_MATH_NUMERIC_TYPES);
