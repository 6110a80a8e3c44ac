// random_ops.cc: Paddle's random ops beyond uniform_random / gaussian_random (fill_ops.cc), on the
// same generator (RandomEngine: the op's `seed`, 0 for a fresh one each run): randint (U{low ..
// high - 1}), randperm (a shuffle of 0 .. n - 1), bernoulli (Out = 1 with probability X),
// multinomial (category indices drawn by X's weights, with or without replacement),
// gumbel_softmax (softmax((X + Gumbel noise) / temperature) along an axis, or its one-hot argmax
// with `hard`) and rrelu (a leaky ReLU with a random slope per negative element in training, the
// mean slope in test; Noise holds the slopes), with the grads Paddle has. The draws are Paddle's
// CPU kernels' (Gumbel noise from U[1e-5, 1), rrelu's slopes from a float U[lower, upper), one
// draw per negative element); the numbers are the generator's, not Paddle's. bernoulli,
// multinomial, gumbel_softmax and rrelu take a `seed` attribute of Tide's (Paddle draws them from
// its global generator).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <tide/kernels/softmax.hpp>
#include <tide/ops/axis.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <vector>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// ---- randint
void RandintInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const TideDataType t = tide::ops::DataTypeAttr(ctx, "dtype");
  TIDE_CHECK(t == TIDE_INT32 || t == TIDE_INT64, "op '", op,
             "': dtype must be int32 or int64, got ", tide::DataTypeName(t));
  const int32_t low = ctx.Attr<int32_t>("low"), high = ctx.Attr<int32_t>("high");
  TIDE_CHECK(low < high, "op '", op, "': low (", low, ") must be below high (", high, ")");
  ShapeInputsInferShape(ctx);
}

template <typename T>
void RandintKernel(KernelContext& ctx) {
  const int32_t low = ctx.Attr<int32_t>("low"), high = ctx.Attr<int32_t>("high");
  TIDE_CHECK(low < high, "op '", ctx.op_type(), "': low (", low, ") must be below high (", high,
             ")");
  Tensor out = ctx.Output("Out");
  out.Resize(ShapeInputsDims(ctx));
  T* o = out.mutable_data<T>(ctx.place());
  auto engine = RandomEngine(ctx);
  std::uniform_int_distribution<int64_t> dist(low, int64_t{high} - 1);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = static_cast<T>(dist(engine));
}

// ---- randperm
void RandpermInferShape(tide::InferShapeContext& ctx) {
  const int32_t n = ctx.Attr<int32_t>("n");
  TIDE_CHECK(n >= 0, "op '", ctx.op_type(), "': n must be >= 0, got ", n);
  const TideDataType t = tide::ops::DataTypeAttr(ctx, "dtype");
  TIDE_CHECK(t == TIDE_INT32 || t == TIDE_INT64 || t == TIDE_FP32 || t == TIDE_FP64, "op '",
             ctx.op_type(), "': dtype must be int32, int64, float32 or float64, got ",
             tide::DataTypeName(t));
  ctx.SetOutputDims("Out", Dims{n});
  ctx.SetOutputDataType("Out", t);
}

template <typename T>
void RandpermKernel(KernelContext& ctx) {
  const int32_t n = ctx.Attr<int32_t>("n");
  TIDE_CHECK(n >= 0, "op '", ctx.op_type(), "': n must be >= 0, got ", n);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  auto engine = RandomEngine(ctx);
  std::shuffle(perm.begin(), perm.end(), engine);
  T* o = ctx.Output("Out").mutable_data<T>(Dims{n}, ctx.place());
  for (int32_t i = 0; i < n; ++i) o[i] = static_cast<T>(perm[i]);
}

// ---- bernoulli
template <typename T>
void BernoulliKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T* p = x.data<T>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    TIDE_CHECK(p[i] >= T(0) && p[i] <= T(1), "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
               "') holds probabilities, which must be in [0, 1]; element ", i, " is ", p[i]);
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  auto engine = RandomEngine(ctx);
  std::uniform_real_distribution<T> dist(T(0), T(1));
  for (int64_t i = 0; i < n; ++i) o[i] = dist(engine) < p[i] ? T(1) : T(0);
}

// ---- multinomial
void MultinomialInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  TIDE_CHECK(x.size() == 1 || x.size() == 2, "op '", op, "': X ('", ctx.InputName("X"),
             "') must be 1-D [categories] or 2-D [distributions, categories], got ",
             tide::ToString(x));
  const int32_t k = ctx.Attr<int32_t>("num_samples");
  TIDE_CHECK(k > 0, "op '", op, "': num_samples must be > 0, got ", k);
  const int64_t c = x.back();
  TIDE_CHECK(ctx.Attr<bool>("replacement") || c < 0 || k <= c, "op '", op,
             "': without replacement num_samples (", k, ") must be at most the ", c,
             " categories of X ('", ctx.InputName("X"), "') ", tide::ToString(x));
  Dims out = x;
  out.back() = k;
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", TIDE_INT64);
}

template <typename T>
void MultinomialKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  const int32_t k = ctx.Attr<int32_t>("num_samples");
  const bool replacement = ctx.Attr<bool>("replacement");
  TIDE_CHECK(x.rank() == 1 || x.rank() == 2, "op '", op, "': X ('", ctx.InputName("X"),
             "') must be 1-D or 2-D, got ", tide::ToString(x.dims()));
  TIDE_CHECK(k > 0, "op '", op, "': num_samples must be > 0, got ", k);
  const int64_t c = x.dims().back(), rows = x.rank() == 2 ? x.dim(0) : 1;
  Dims od = x.dims();
  od.back() = k;
  int64_t* out = ctx.Output("Out").mutable_data<int64_t>(od, ctx.place());
  const T* w = x.data<T>();
  auto engine = RandomEngine(ctx);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  std::vector<double> weight(static_cast<size_t>(c)), cum(static_cast<size_t>(c));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t nonzero = 0;
    for (int64_t j = 0; j < c; ++j) {
      const T v = w[r * c + j];
      TIDE_CHECK(v >= T(0) && std::isfinite(v), "op '", op, "': X ('", ctx.InputName("X"),
                 "') holds weights, which must be finite and >= 0; row ", r, " category ", j,
                 " is ", v);
      weight[j] = static_cast<double>(v);
      nonzero += v > T(0);
    }
    TIDE_CHECK(nonzero > 0, "op '", op, "': the weights of row ", r, " of X ('", ctx.InputName("X"),
               "') are all 0");
    TIDE_CHECK(replacement || k <= nonzero, "op '", op, "': without replacement num_samples (", k,
               ") must be at most the ", nonzero, " non-zero weights of row ", r, " of X ('",
               ctx.InputName("X"), "')");
    double total = 0;
    bool stale = true;  // the cumulative weights change only as draws without replacement zero one
    for (int32_t s = 0; s < k; ++s) {
      if (stale) {
        total = 0;
        for (int64_t j = 0; j < c; ++j) cum[j] = total += weight[j];
        stale = false;
      }
      // The first category whose cumulative weight exceeds u * total; never one of weight 0
      // (u * total < total, and a category of weight 0 never raises the running sum).
      const double u = dist(engine) * total;
      int64_t pick = std::upper_bound(cum.begin(), cum.end(), u) - cum.begin();
      while (pick >= c || weight[pick] == 0) --pick;  // u * total rounded up to total
      out[r * k + s] = pick;
      if (!replacement) {
        weight[pick] = 0;
        stale = true;
      }
    }
  }
}

// ---- gumbel_softmax
void GumbelSoftmaxInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  tide::ops::NormAxis(ctx.op_type(), ctx.Attr<int32_t>("axis"), x.size());
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void GumbelSoftmaxKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const tide::ops::AxisSplit s =
      tide::ops::SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  const T temperature = static_cast<T>(ctx.Attr<float>("temperature"));
  TIDE_CHECK(temperature > T(0), "op '", ctx.op_type(), "': temperature must be > 0, got ",
             temperature);
  const bool hard = ctx.Attr<bool>("hard");
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  // (X + g) / temperature with Gumbel noise g = -log(-log(u)), u ~ U[1e-5, 1), drawn in X's
  // element order (Paddle's bounds keep g finite).
  auto engine = RandomEngine(ctx);
  std::uniform_real_distribution<T> dist(T(1e-5), T(1));
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    o[i] = (xd[i] - std::log(-std::log(dist(engine)))) / temperature;
  tide::kernels::SoftmaxLines(o, o, s);
  if (!hard) return;
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      T* line = o + i * s.n * s.post + k;
      auto at = [&](int64_t j) -> T& { return line[j * s.post]; };
      int64_t best = 0;
      for (int64_t j = 1; j < s.n; ++j)
        if (at(j) > at(best)) best = j;
      for (int64_t j = 0; j < s.n; ++j) at(j) = j == best ? T(1) : T(0);
    }
}

// ---- rrelu
void RreluInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const float lower = ctx.Attr<float>("lower"), upper = ctx.Attr<float>("upper");
  TIDE_CHECK(lower >= 0 && lower <= 1, "op '", op, "': lower must be in [0, 1], got ", lower);
  TIDE_CHECK(upper >= 0 && upper <= 1, "op '", op, "': upper must be in [0, 1], got ", upper);
  TIDE_CHECK(lower <= upper, "op '", op, "': lower (", lower, ") must be at most upper (", upper,
             ")");
  for (const char* o : {"Out", "Noise"}) {
    if (!ctx.HasOutput(o)) continue;
    ctx.SetOutputDims(o, ctx.InputDims("X"));
    ctx.SetOutputDataType(o, ctx.InputDataType("X"));
  }
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void RreluKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const float lower = ctx.Attr<float>("lower"), upper = ctx.Attr<float>("upper");
  TIDE_CHECK(lower >= 0 && lower <= upper && upper <= 1, "op '", ctx.op_type(),
             "': need 0 <= lower <= upper <= 1, got lower ", lower, ", upper ", upper);
  const T* xd = x.data<T>();
  const int64_t n = x.numel();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  Tensor noise_t = ctx.OptionalOutput("Noise");
  std::vector<T> scratch;
  T* noise = noise_t ? noise_t.mutable_data<T>(x.dims(), ctx.place())
                     : (scratch.resize(static_cast<size_t>(n)), scratch.data());
  if (ctx.Attr<bool>("is_test")) {
    const T mid = static_cast<T>((lower + upper) / 2.0f);
    for (int64_t i = 0; i < n; ++i) noise[i] = xd[i] >= T(0) ? T(1) : mid;
  } else {
    // One float draw per negative element, as Paddle's kernel (upper == lower: that slope).
    auto engine = RandomEngine(ctx);
    std::uniform_real_distribution<float> dist(lower, upper);
    for (int64_t i = 0; i < n; ++i)
      noise[i] = xd[i] >= T(0)    ? T(1)
                 : lower == upper ? static_cast<T>(lower)
                                  : static_cast<T>(dist(engine));
  }
  for (int64_t i = 0; i < n; ++i) o[i] = xd[i] * noise[i];
}

// rrelu_grad: X@GRAD = Out@GRAD * Noise (Paddle's).
template <typename T>
void RreluGradKernel(KernelContext& ctx) {
  Tensor noise = ctx.Input("Noise"), dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(noise.dims() == dout.dims(), "op '", ctx.op_type(), "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not match Noise ", tide::ToString(noise.dims()));
  const T *m = noise.data<T>(), *g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(noise.dims(), ctx.place());
  for (int64_t i = 0, n = noise.numel(); i < n; ++i) dx[i] = g[i] * m[i];
}

tide::OpSchema WithSeed(tide::OpSchema s) {
  return s.Attr("seed", int32_t(0),
                "Tide's: 0 draws a fresh seed each run, another value the same numbers each run");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(RandomSchema("randint", "Out ~ U{low, ..., high - 1} (integers).", TIDE_INT64)
                     .NoGradient()
                     .Attr("low", int32_t(0), "the smallest value")
                     .Attr("high", int32_t(0), "one past the largest value (> low)")
                     .InferShape(RandintInferShape));
TIDE_REGISTER_KERNEL("randint", "cpu", RandintKernel, int32_t, int64_t);

TIDE_REGISTER_OP(tide::OpSchema("randperm")
                     .NoGradient()
                     .Comment("Out = a random permutation of 0, 1, ..., n - 1.")
                     .Output("Out", "[n]")
                     .Attr("n", int32_t(0), "how many values (>= 0)")
                     .Attr("dtype", int32_t(TIDE_INT64),
                           "element type (TideDataType): int32, int64, float32 or float64")
                     .Attr("seed", int32_t(0),
                           "0: a fresh seed each run; otherwise the same permutation each run")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(RandpermInferShape));
TIDE_REGISTER_KERNEL("randperm", "cpu", RandpermKernel, OPS_MATH_NUMERIC_TYPES);

TIDE_REGISTER_OP(WithSeed(tide::OpSchema("bernoulli")
                              .NoGradient()
                              .Comment("Out = 1 with probability X, else 0, per element.")
                              .Input("X", "probabilities in [0, 1]")
                              .Output("Out", "0 / 1 of X's dims and dtype")
                              .KernelDataTypeFrom("X")
                              .InferShape(tide::SameShapeAsInput("X", "Out"))));
TIDE_REGISTER_KERNEL("bernoulli", "cpu", BernoulliKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(WithSeed(tide::OpSchema("multinomial")
                              .NoGradient()
                              .Comment("Out = num_samples category indices per row of X, drawn "
                                       "with probabilities proportional to X's weights; without "
                                       "replacement each index at most once per row.")
                              .Input("X", "weights (>= 0, not all 0), [C] or [N, C]")
                              .Output("Out", "int64 indices, [num_samples] or [N, num_samples]")
                              .Attr("num_samples", int32_t(1), "how many draws per row (> 0)")
                              .Attr("replacement", false, "draw with replacement")
                              .KernelDataTypeFrom("X")
                              .InferShape(MultinomialInferShape)));
TIDE_REGISTER_KERNEL("multinomial", "cpu", MultinomialKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(WithSeed(tide::OpSchema("gumbel_softmax")
                              .Comment("Out = softmax((X + g) / temperature) along `axis`, g "
                                       "Gumbel noise -log(-log(u)), u ~ U[1e-5, 1); with `hard` "
                                       "the one-hot of its argmax.")
                              .Input("X", "logits")
                              .Output("Out", "X's dims")
                              .Attr("temperature", 1.0f, "the softmax's temperature (> 0)")
                              .GreaterThan(0.0)
                              .Attr("hard", false, "one-hot of the argmax instead")
                              .Attr("axis", int32_t(-1), "the softmax's axis")
                              .KernelDataTypeFrom("X")
                              .InferShape(GumbelSoftmaxInferShape)
                              .Grad([](tide::GradMaker& g) {
                                g.NewOp("gumbel_softmax_grad")
                                    .Input("Out", g.Output("Out"))
                                    .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                    .Output(GradVarName("X"), g.InputGrad("X"))
                                    .Attr("axis", g.Attr<int32_t>("axis"));
                              })));
// Paddle's grad: softmax's of Out (softmax_op.cc registers its kernel): neither 1 / temperature
// nor the one-hot of `hard` enters it.
TIDE_REGISTER_OP(tide::OpSchema("gumbel_softmax_grad")
                     .Comment("X@GRAD = (Out@GRAD - sum(Out@GRAD * Out)) * Out along `axis`.")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", int32_t(-1))
                     .KernelDataTypeFrom("Out")
                     .InferShape(tide::SameShapeAsInput("Out", GradVarName("X"))));
TIDE_REGISTER_KERNEL("gumbel_softmax", "cpu", GumbelSoftmaxKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(
    WithSeed(tide::OpSchema("rrelu")
                 .Comment("Out = X where X >= 0, else X * a slope: in training drawn from "
                          "U[lower, upper) per element, in test (lower + upper) / 2; Noise holds "
                          "each element's factor (1 where X >= 0).")
                 .Input("X", "the input")
                 .Output("Out", "X's dims")
                 .Output("Noise", "dOut/dX per element, X's dims")
                 .AsIntermediate()
                 .AsDispensable()
                 .Attr("lower", 0.125f, "the smallest slope, in [0, 1]")
                 .Attr("upper", 1.0f / 3.0f, "the largest slope, in [lower, 1]")
                 .Attr("is_test", false, "test: the mean slope (lower + upper) / 2")
                 .KernelDataTypeFrom("X")
                 .InferShape(RreluInferShape)
                 .Grad([](tide::GradMaker& g) {
                   g.NewOp("rrelu_grad")
                       .Input("X", g.Input("X"))
                       .Input("Noise", g.Output("Noise"))
                       .Input(GradVarName("Out"), g.OutputGrad("Out"))
                       .Output(GradVarName("X"), g.InputGrad("X"))
                       .CopyAttrs();
                 })));
TIDE_REGISTER_OP(WithSeed(tide::OpSchema("rrelu_grad")
                              .Comment("X@GRAD = Out@GRAD * Noise.")
                              .Input("X")
                              .Input("Noise")
                              .Input(GradVarName("Out"))
                              .Output(GradVarName("X"))
                              .Attr("lower", 0.125f)
                              .Attr("upper", 1.0f / 3.0f)
                              .Attr("is_test", false)
                              .KernelDataTypeFrom("Noise")
                              .InferShape([](tide::InferShapeContext& c) {
                                GradsLikeInputs(c, {"X"});
                              })));
TIDE_REGISTER_KERNEL("rrelu", "cpu", RreluKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("rrelu_grad", "cpu", RreluGradKernel, OPS_MATH_FLOAT_TYPES);
