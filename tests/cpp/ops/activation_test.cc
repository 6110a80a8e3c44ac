// activation_test.cc: relu, sigmoid, tanh, square and scale kernels against the std:: functions
// in float64, and their grads against finite differences.
#include <cmath>
#include <functional>

#include "op_tester.h"

namespace tide::test {
namespace {

using Fn = std::function<double(double)>;

struct Case {
  const char* op;
  Fn f;
};
const Case kCases[] = {{"relu", [](double x) { return std::max(x, 0.0); }},
                       {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
                       {"tanh", [](double x) { return std::tanh(x); }},
                       {"square", [](double x) { return x * x; }}};

std::vector<double> Apply(const TestTensor& x, const Fn& f) {
  std::vector<double> out;
  for (double v : x.data) out.push_back(f(v));
  return out;
}

// Values in +-[margin, margin + 2): none near relu's kink at 0, both signs present.
TestTensor AwayFromZero(std::vector<int64_t> dims, TideDataType dtype, double margin,
                        unsigned seed) {
  TestTensor t = Random(std::move(dims), dtype, -2, 2, seed);
  for (auto& v : t.data) {
    v = v < 0 ? v - margin : v + margin;
    if (dtype == TIDE_FP32) v = static_cast<float>(v);
  }
  return t;
}

class ActivationTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(ActivationTest, ForwardMatchesStd) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.op);
    TestTensor x = Random({3, 4, 5}, GetParam(), -4, 4, 1);
    x.data[0] = 0;  // relu(0) = 0, sigmoid(0) = 0.5, ...
    x.data[1] = -0.0;
    auto out = OpTester(c.op).Input("X", "x", x).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, x.dims);
    EXPECT_EQ(out["out"].dtype, GetParam());
    ExpectNear(out["out"], Apply(x, c.f), Tol(GetParam()), Tol(GetParam()));
  }
}

TEST_P(ActivationTest, SaturatingInputsStayFinite) {
  // sigmoid and tanh far out in the tails: exactly 0/1 or -1/1 in the limit, never NaN.
  TestTensor x = Values({6}, {-50, -20, -8, 8, 20, 50}, GetParam());
  for (const char* op : {"sigmoid", "tanh"}) {
    auto out = OpTester(op).Input("X", "x", x).Output("Out", "out").Run();
    for (double v : out["out"].data) EXPECT_TRUE(std::isfinite(v)) << op;
    const Fn& f = std::string(op) == "sigmoid" ? kCases[1].f : kCases[2].f;
    ExpectNear(out["out"], Apply(x, f), Tol(GetParam()), Tol(GetParam()));
  }
}

TEST_P(ActivationTest, GradsMatchFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.op);
    // Away from 0 by more than delta, so no difference straddles relu's kink.
    OpTester(c.op)
        .Input("X", "x", AwayFromZero({2, 3, 4}, GetParam(), 0.1, 2))
        .Output("Out", "out")
        .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
  }
}

TEST_P(ActivationTest, ReluGradIsExactlyZeroOrOne) {
  // relu's grad reads Out: d/dx is 1 where x > 0 and exactly 0 where x < 0 (a tight atol, so a
  // leak on the negative side shows).
  TestTensor x = Values({6}, {-3, -0.5, -0.05, 0.05, 0.5, 3}, GetParam());
  OpTester("relu")
      .Input("X", "x", x)
      .Output("Out", "out")
      .CheckGrad({"x"}, "out", 1e-3, 1e-12, GradTol(GetParam()).delta);
}

TEST_P(ActivationTest, Scale) {
  TestTensor x = Random({4, 5}, GetParam(), -3, 3, 3);
  for (bool after : {true, false}) {
    SCOPED_TRACE(after ? "bias after scale" : "bias before scale");
    auto out = OpTester("scale")
                   .Input("X", "x", x)
                   .Output("Out", "out")
                   .Attr("scale", 2.5f)
                   .Attr("bias", -0.75f)
                   .Attr("bias_after_scale", after)
                   .Run();
    EXPECT_EQ(out["out"].dims, x.dims);
    EXPECT_EQ(out["out"].dtype, GetParam());
    ExpectNear(out["out"],
               Apply(x, [&](double v) { return after ? 2.5 * v - 0.75 : 2.5 * (v - 0.75); }),
               Tol(GetParam()), Tol(GetParam()));
  }
  // Defaults: scale 1, bias 0, i.e. a copy.
  auto out = OpTester("scale").Input("X", "x", x).Output("Out", "out").Run();
  ExpectNear(out["out"], x.data, 0, 0);
}

TEST_P(ActivationTest, ScaleGradIgnoresBias) {
  GradTolerance g = GradTol(GetParam());
  for (bool after : {true, false})
    OpTester("scale")
        .Input("X", "x", Random({3, 4}, GetParam(), -1, 1, 4))
        .Output("Out", "out")
        .Attr("scale", -1.5f)
        .Attr("bias", 3.0f)
        .Attr("bias_after_scale", after)
        .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
}

class IntScaleTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(IntScaleTest, IntegerScaleAndBias) {
  TestTensor x = Random({3, 7}, GetParam(), -100, 100, 5);
  for (bool after : {true, false}) {
    SCOPED_TRACE(after ? "bias after scale" : "bias before scale");
    auto out = OpTester("scale")
                   .Input("X", "x", x)
                   .Output("Out", "out")
                   .Attr("scale", -3.0f)
                   .Attr("bias", 7.0f)
                   .Attr("bias_after_scale", after)
                   .Run();
    EXPECT_EQ(out["out"].dtype, GetParam());
    EXPECT_EQ(out["out"].dims, x.dims);
    ExpectNear(out["out"], Apply(x, [&](double v) { return after ? -3 * v + 7 : -3 * (v + 7); }), 0,
               0);
  }
}

TEST(IntScale, Int64KeepsValuesBeyondInt32) {
  const double big = static_cast<double>(int64_t(1) << 40),
               neg = -static_cast<double>(int64_t(1) << 35);
  TestTensor x = Values({3}, {big, neg, 5}, TIDE_INT64);
  auto out = OpTester("scale")
                 .Input("X", "x", x)
                 .Output("Out", "out")
                 .Attr("scale", 4.0f)
                 .Attr("bias", 1.0f)
                 .Run();
  ExpectNear(out["out"], {4 * big + 1, 4 * neg + 1, 21}, 0, 0);
}

TEST(ActivationErrors, FloatOnlyActivationsRejectIntegersByName) {
  // relu has float kernels only: an int32 input names the op and the missing kernel.
  ExpectError(
      [] {
        OpTester("relu")
            .Input("X", "x", Values({2}, {1, -1}, TIDE_INT32))
            .Output("Out", "out")
            .Run();
      },
      {"relu", "no kernel", "int32"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ActivationTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, IntScaleTest, ::testing::Values(TIDE_INT32, TIDE_INT64),
                         DtypeParamName);

}  // namespace
}  // namespace tide::test
