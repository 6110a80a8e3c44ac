// eltwise_test.cc: the oneDNN activation kernels (activation_kernels.cc) and their grads against
// float64 reference loops written here from Fluid's formulas (not against the plain kernels), with
// default and other attribute values, fed plain and blocked; a conv output through them stays
// blocked; round (no oneDNN kernel) and hard_swish with other than Fluid's default attributes
// (declined) run their plain kernels under use_mkldnn; hard_swish's speed rule.
#include <functional>

#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Sigm(double x) { return 1 / (1 + std::exp(-x)); }
double Softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double GeluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluErfGrad(double x) {
  return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * kPi);
}
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
}
double GeluTanhGrad(double x) {
  const double k = std::sqrt(2 / kPi), t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
}

// One op with one set of attributes: its float64 forward f(x) and derivative df(x), the input
// range, points the inputs keep `gap` away from (kinks, where float32 rounding could pick the
// other branch; poles), and tolerances.
struct Case {
  std::string name, op;
  core::AttributeMap attrs;
  double lo, hi;
  std::function<double(double)> f, df;
  std::vector<double> kinks = {};
  double gap = 1e-3;
  double rtol = 1e-5, atol = 1e-6;
};

// Default tolerances are float32's (a few ulps relative, 1e-6 absolute where the value crosses
// 0). Looser where oneDNN's float32 approximation is (measured over dense ranges, AVX-512 and
// SSE4.1): log's polynomial is off by up to ~7e-6 absolute (so relatively large near X = 1);
// softplus / logsigmoid compute log(1 + e^x) in float32, off by up to ~8e-6 absolute where the
// value is near 0.
std::vector<Case> Cases() {
  return {
      {"relu",
       "relu",
       {},
       -3,
       3,
       [](double x) { return x > 0 ? x : 0; },
       [](double x) { return x > 0 ? 1.0 : 0.0; },
       {0}},
      {"tanh",
       "tanh",
       {},
       -3,
       3,
       [](double x) { return std::tanh(x); },
       [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {"sigmoid", "sigmoid", {}, -4, 4, Sigm, [](double x) { return Sigm(x) * (1 - Sigm(x)); }},
      {"abs",
       "abs",
       {},
       -3,
       3,
       [](double x) { return std::fabs(x); },
       [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); },
       {0}},
      {"exp",
       "exp",
       {},
       -4,
       4,
       [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); }},
      {"log",
       "log",
       {},
       0.05,
       6,
       [](double x) { return std::log(x); },
       [](double x) { return 1 / x; },
       {},
       1e-3,
       1e-5,
       1e-5},
      {"sqrt",
       "sqrt",
       {},
       0.05,
       6,
       [](double x) { return std::sqrt(x); },
       [](double x) { return 0.5 / std::sqrt(x); }},
      {"square",
       "square",
       {},
       -3,
       3,
       [](double x) { return x * x; },
       [](double x) { return 2 * x; }},
      {"reciprocal",
       "reciprocal",
       {},
       -3,
       3,
       [](double x) { return 1 / x; },
       [](double x) { return -1 / (x * x); },
       {0},
       0.2},
      {"rsqrt",
       "rsqrt",
       {},
       0.1,
       5,
       [](double x) { return 1 / std::sqrt(x); },
       [](double x) { return -0.5 / (x * std::sqrt(x)); }},
      {"softplus", "softplus", {}, -30, 30, Softplus, Sigm, {}, 1e-3, 1e-5, 1e-5},
      {"logsigmoid",
       "logsigmoid",
       {},
       -30,
       30,
       [](double x) { return -Softplus(-x); },
       [](double x) { return Sigm(-x); },
       {},
       1e-3,
       1e-5,
       1e-5},
      {"leaky_relu_default",
       "leaky_relu",
       {},
       -3,
       3,
       [](double x) { return x > 0 ? x : 0.02 * x; },
       [](double x) { return x > 0 ? 1 : 0.02; },
       {0}},
      {"leaky_relu_alpha",
       "leaky_relu",
       {{"alpha", 0.3f}},
       -3,
       3,
       [](double x) { return x > 0 ? x : double(0.3f) * x; },
       [](double x) { return x > 0 ? 1 : double(0.3f); },
       {0}},
      {"elu_default",
       "elu",
       {},
       -4,
       3,
       [](double x) { return x > 0 ? x : std::expm1(x); },
       [](double x) { return x > 0 ? 1 : std::exp(x); },
       {0}},
      {"elu_alpha",
       "elu",
       {{"alpha", 0.5f}},
       -4,
       3,
       [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); },
       [](double x) { return x > 0 ? 1 : 0.5 * std::exp(x); },
       {0}},
      {"relu6_default",
       "relu6",
       {},
       -2,
       8,
       [](double x) { return std::clamp(x, 0.0, 6.0); },
       [](double x) { return x > 0 && x < 6 ? 1.0 : 0.0; },
       {0, 6}},
      {"relu6_threshold",
       "relu6",
       {{"threshold", 3.5f}},
       -2,
       5,
       [](double x) { return std::clamp(x, 0.0, 3.5); },
       [](double x) { return x > 0 && x < 3.5 ? 1.0 : 0.0; },
       {0, 3.5}},
      // Fluid: min(max(X, 0), threshold) is threshold everywhere when threshold < 0.
      {"relu6_negative_threshold",
       "relu6",
       {{"threshold", -1.0f}},
       -3,
       3,
       [](double) { return -1.0; },
       [](double) { return 0.0; }},
      {"brelu_default",
       "brelu",
       {},
       -2,
       30,
       [](double x) { return std::clamp(x, 0.0, 24.0); },
       [](double x) { return x > 0 && x < 24 ? 1.0 : 0.0; },
       {0, 24}},
      {"brelu_bounds",
       "brelu",
       {{"t_min", -1.0f}, {"t_max", 1.5f}},
       -3,
       3,
       [](double x) { return std::clamp(x, -1.0, 1.5); },
       [](double x) { return x > -1 && x < 1.5 ? 1.0 : 0.0; },
       {-1, 1.5}},
      {"brelu_equal_bounds",
       "brelu",
       {{"t_min", 0.5f}, {"t_max", 0.5f}},
       -3,
       3,
       [](double) { return 0.5; },
       [](double) { return 0.0; }},
      // t_max < t_min: min(max(X, t_min), t_max) = t_max everywhere (oneDNN's clip refuses it).
      {"brelu_crossed_bounds",
       "brelu",
       {{"t_min", 1.0f}, {"t_max", -1.0f}},
       -3,
       3,
       [](double) { return -1.0; },
       [](double) { return 0.0; }},
      {"swish_default",
       "swish",
       {},
       -6,
       6,
       [](double x) { return x * Sigm(x); },
       [](double x) { return Sigm(x) + x * Sigm(x) * (1 - Sigm(x)); }},
      {"swish_beta",
       "swish",
       {{"beta", 2.0f}},
       -6,
       6,
       [](double x) { return x * Sigm(2 * x); },
       [](double x) { return Sigm(2 * x) + 2 * x * Sigm(2 * x) * (1 - Sigm(2 * x)); }},
      {"gelu_erf", "gelu", {}, -5, 5, GeluErf, GeluErfGrad},
      {"gelu_tanh", "gelu", {{"approximate", true}}, -5, 5, GeluTanh, GeluTanhGrad},
      {"pow_default", "pow", {}, -3, 3, [](double x) { return x; }, [](double) { return 1.0; }},
      {"pow_cube",
       "pow",
       {{"factor", 3.0f}},
       -2,
       2,
       [](double x) { return x * x * x; },
       [](double x) { return 3 * x * x; }},
      {"pow_fraction",
       "pow",
       {{"factor", 2.5f}},
       0.05,
       3,
       [](double x) { return std::pow(x, 2.5); },
       [](double x) { return 2.5 * std::pow(x, 1.5); }},
      {"pow_negative",
       "pow",
       {{"factor", -2.0f}},
       -3,
       3,
       [](double x) { return 1 / (x * x); },
       [](double x) { return -2 / (x * x * x); },
       {0},
       0.3},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The piecewise-linear functions the oneDNN plugin leaves to the plain kernels on plain data
// (issue 17's speed rule, eltwise_kernels.cc): oneDNN runs them only on blocked data.
bool PlainKernelOnPlainData(const Case& c) {
  for (const char* op : {"relu", "abs", "leaky_relu", "relu6", "brelu"})
    if (c.op == op) return true;
  return false;
}

// Which kernel `op` ran: oneDNN's, unless the case's function declines plain data.
::testing::AssertionResult RanTheRightKernel(const Result& got, const Case& c,
                                             const std::string& op, InputLayout feed, size_t rank) {
  return PlainKernelOnPlainData(c) && !FedBlocked(feed, rank) ? RanPlain(got, op)
                                                              : RanMkldnn(got, op);
}

// The case's input: uniform in [lo, hi), moved `gap` away from its kinks, exactly float32.
TestTensor InputFor(const Case& c, const std::vector<int64_t>& dims, unsigned seed) {
  TestTensor t = Random(dims, TIDE_FP32, c.lo, c.hi, seed);
  for (double& v : t.data)
    for (double k : c.kinks)
      if (std::fabs(v - k) < c.gap) v = static_cast<float>(k + (v < k ? -c.gap : c.gap));
  return t;
}

TestTensor Apply(const TestTensor& x, const std::function<double(double)>& f,
                 const TestTensor* times = nullptr) {
  TestTensor r = x;
  for (size_t i = 0; i < r.data.size(); ++i)
    r.data[i] = f(x.data[i]) * (times ? times->data[i] : 1.0);
  return r;
}

Net OneActivation(const Case& c, const TestTensor& x) {
  Net net;
  net.Feed("x", x).Op(c.op, {{"X", {"x"}}}, {{"Out", {"out"}}}, c.attrs);
  return net;
}

const std::vector<std::vector<int64_t>> kShapes = {{2, 16, 4, 4}, {2, 3, 4, 4}, {3, 7}, {5}};

class MkldnnEltwise : public ::testing::TestWithParam<Case> {};

TEST_P(MkldnnEltwise, ForwardMatchesFloat64Reference) {
  const Case& c = GetParam();
  for (const auto& dims : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const TestTensor x = InputFor(c, dims, 51);
    const TestTensor want = Apply(x, c.f);
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(std::string("fed ") + FeedName(feed));
      Result got = OneActivation(c, x).Run({"out"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(RanTheRightKernel(got, c, c.op, feed, dims.size()));
      EXPECT_TRUE(Close(got.values.at("out"), want, c.rtol, c.atol));
      if (feed == InputLayout::kBlocked && dims.size() == 4 && dims[1] % 8 == 0)
        EXPECT_EQ(got.layouts.at("out"), TIDE_LAYOUT_ONEDNN) << "Out keeps X's blocked format";
    }
  }
}

TEST_P(MkldnnEltwise, GradMatchesFloat64Reference) {
  const Case& c = GetParam();
  for (const auto& dims : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const TestTensor x = InputFor(c, dims, 52);
    const TestTensor dout = Random(dims, TIDE_FP32, -1, 1, 53);
    const TestTensor want = Apply(x, c.df, &dout);
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(std::string("fed ") + FeedName(feed));
      Net net = OneActivation(c, x);
      net.Backward("out", dout);
      Result got = net.Run({"x@GRAD"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(RanTheRightKernel(got, c, c.op, feed, dims.size()));
      EXPECT_TRUE(RanTheRightKernel(got, c, c.op + "_grad", feed, dims.size()));
      if (feed == InputLayout::kPlain)  // blocked data's grad stays blocked for the next kernel
        EXPECT_EQ(got.layouts.at("x@GRAD"), TIDE_LAYOUT_ANY) << "plain data, plain grad";
      EXPECT_TRUE(Close(got.values.at("x@GRAD"), want, c.rtol, c.atol));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, MkldnnEltwise, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// A conv output (blocked on every ISA for 16 channels) through activations with attributes:
// each reads it blocked and leaves its output blocked, with no layout transform by the core.
TEST(MkldnnEltwise, ConvOutputStaysBlocked) {
  const std::vector<std::string> names = {"gelu_tanh",    "elu_alpha", "swish_beta",
                                          "brelu_bounds", "pow_cube",  "leaky_relu_alpha",
                                          "softplus"};
  std::vector<Case> cases;
  for (const Case& c : Cases())
    if (std::find(names.begin(), names.end(), c.name) != names.end()) cases.push_back(c);
  ASSERT_EQ(cases.size(), names.size());
  Net net;
  net.Feed("x", Random({2, 8, 6, 6}, TIDE_FP32, -1, 1, 54))
      .Feed("w", Random({16, 8, 3, 3}, TIDE_FP32, -0.3, 0.3, 55), false);
  net.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"w"}}}, {{"Output", {"c"}}},
         {{"paddings", std::vector<int32_t>{1, 1}}});
  std::vector<std::string> fetch = {"c"};
  for (const Case& c : cases) {
    net.Op(c.op, {{"X", {"c"}}}, {{"Out", {c.name}}}, c.attrs);
    fetch.push_back(c.name);
  }
  Result got = net.Run(fetch, /*mkldnn=*/true);
  EXPECT_TRUE(RanMkldnn(got, "conv2d"));
  EXPECT_EQ(got.layouts.at("c"), TIDE_LAYOUT_ONEDNN);
  EXPECT_EQ(got.counts.layouts, 0u) << "no layout transform between conv and the activations";
  const TestTensor& conv = got.values.at("c");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(RanMkldnn(got, c.op));
    EXPECT_EQ(got.layouts.at(c.name), TIDE_LAYOUT_ONEDNN);
    EXPECT_TRUE(Close(got.values.at(c.name), Apply(conv, c.f), c.rtol, c.atol));
  }
}

// round (oneDNN rounds halves to even, Fluid away from zero) has no oneDNN kernel, and the
// oneDNN hard_swish declines attributes other than Fluid's defaults (oneDNN's is fixed to them):
// under use_mkldnn their plain kernels run, with Fluid's values.
TEST(MkldnnEltwise, RoundAndHardSwishWithOtherAttributesRunTheirPlainKernels) {
  const core::OpKernelType plain{core::PlaceKindId("cpu"), TIDE_FP32, TIDE_LAYOUT_ANY, 0};
  const TestTensor x = Values({6}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5});
  Net round;
  round.Feed("x", x).Op("round", {{"X", {"x"}}}, {{"Out", {"out"}}});
  Result got = round.Run({"out"}, /*mkldnn=*/true);
  ASSERT_EQ(got.kernels.size(), 1u);
  EXPECT_EQ(got.kernels[0].second, plain);
  EXPECT_EQ(got.values.at("out").data, (std::vector<double>{-3, -2, -1, 1, 2, 3}));

  // Blocked, as the oneDNN forward wants it (below), so the attributes alone decide.
  const TestTensor big = Random({4, 16, 64, 64}, TIDE_FP32, -6, 6, 56);
  Net hs;
  hs.Feed("x", big).Op("hard_swish", {{"X", {"x"}}}, {{"Out", {"out"}}},
                       {{"threshold", 4.0f}, {"scale", 5.0f}, {"offset", 2.0f}});
  got = hs.Run({"out"}, /*mkldnn=*/true, InputLayout::kBlocked);
  EXPECT_TRUE(RanPlain(got, "hard_swish"));
  EXPECT_TRUE(Close(got.values.at("out"),
                    Apply(big, [](double v) { return v * std::clamp(v + 2, 0.0, 4.0) / 5; }), 1e-6,
                    1e-6));
}

// hard_swish with Fluid's defaults runs oneDNN's hardswish where it is faster than the plain
// kernel (README.md, "Speed": the forward on blocked X, the grad on X of 16384 elements or more),
// else the plain kernels; the values are Fluid's either way.
TEST(MkldnnEltwise, HardSwishWithDefaultsMatchesFloat64Reference) {
  auto f = [](double v) { return v * std::clamp(v + 3, 0.0, 6.0) / 6; };
  auto df = [](double v) { return v <= -3 ? 0.0 : (v >= 3 ? 1.0 : (2 * v + 3) / 6); };
  const Case c{"hard_swish", "hard_swish", {}, -6, 6, f, df, {-3, 3}};
  for (const auto& dims : {std::vector<int64_t>{4, 16, 64, 64}, std::vector<int64_t>{4, 16, 16, 16},
                           std::vector<int64_t>{2, 16, 8, 8}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const TestTensor x = InputFor(c, dims, 57);
    const TestTensor dout = Random(dims, TIDE_FP32, -1, 1, 58);
    const bool onednn_grad = x.numel() >= 16384;
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(std::string("fed ") + FeedName(feed));
      Net net = OneActivation(c, x);
      net.Backward("out", dout);
      Result got = net.Run({"out", "x@GRAD"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(feed == InputLayout::kBlocked ? RanMkldnn(got, "hard_swish")
                                                : RanPlain(got, "hard_swish"));
      EXPECT_TRUE(onednn_grad ? RanMkldnn(got, "hard_swish_grad")
                              : RanPlain(got, "hard_swish_grad"));
      EXPECT_TRUE(Close(got.values.at("out"), Apply(x, f), 1e-5, 1e-6));
      EXPECT_TRUE(Close(got.values.at("x@GRAD"), Apply(x, df, &dout), 1e-5, 1e-6));
    }
  }
}

}  // namespace
}  // namespace tide::test::mkldnn
