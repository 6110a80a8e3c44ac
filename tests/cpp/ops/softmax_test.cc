// softmax_test.cc: softmax over the last axis and over an inner axis against a stable float64
// reference, its normalisation and overflow safety, and its grad against finite differences.
#include <cmath>

#include "op_tester.h"

namespace tide::test {
namespace {

// Stable softmax of x (viewed as [pre, n, post]) along the middle dim, in float64.
std::vector<double> Reference(const TestTensor& x, int64_t pre, int64_t n, int64_t post) {
  std::vector<double> out(x.data.size());
  for (int64_t i = 0; i < pre; ++i)
    for (int64_t k = 0; k < post; ++k) {
      auto at = [&](int64_t j) { return (i * n + j) * post + k; };
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x.data[at(j)]);
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x.data[at(j)] - mx);
      for (int64_t j = 0; j < n; ++j) out[at(j)] = std::exp(x.data[at(j)] - mx) / sum;
    }
  return out;
}

// Every [pre, :, post] slice of `t` sums to 1 and lies in [0, 1].
void ExpectNormalised(const TestTensor& t, int64_t pre, int64_t n, int64_t post, double tol) {
  for (int64_t i = 0; i < pre; ++i)
    for (int64_t k = 0; k < post; ++k) {
      double s = 0;
      for (int64_t j = 0; j < n; ++j) {
        double v = t.data[(i * n + j) * post + k];
        EXPECT_TRUE(v >= 0 && v <= 1)
            << "value " << v << " at (" << i << ", " << j << ", " << k << ")";
        s += v;
      }
      EXPECT_NEAR(s, 1.0, tol) << "slice (" << i << ", :, " << k << ")";
    }
}

class SoftmaxTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(SoftmaxTest, LastAxis) {
  TestTensor x = Random({4, 7}, GetParam(), -3, 3, 1);
  for (int32_t axis : {-1, 1}) {
    auto out = OpTester("softmax").Input("X", "x", x).Output("Out", "out").Attr("axis", axis).Run();
    EXPECT_EQ(out["out"].dims, x.dims);
    EXPECT_EQ(out["out"].dtype, GetParam());
    ExpectNear(out["out"], Reference(x, 4, 7, 1), Tol(GetParam()), Tol(GetParam()));
    ExpectNormalised(out["out"], 4, 7, 1, Tol(GetParam()));
  }
  // The default axis is the last one, for rank 3 too.
  TestTensor x3 = Random({2, 3, 5}, GetParam(), -3, 3, 2);
  auto out = OpTester("softmax").Input("X", "x", x3).Output("Out", "out").Run();
  ExpectNear(out["out"], Reference(x3, 6, 5, 1), Tol(GetParam()), Tol(GetParam()));
}

TEST_P(SoftmaxTest, InnerAxisOfRank3) {
  TestTensor x = Random({2, 3, 4}, GetParam(), -3, 3, 3);
  for (int32_t axis : {1, -2}) {
    auto out = OpTester("softmax").Input("X", "x", x).Output("Out", "out").Attr("axis", axis).Run();
    EXPECT_EQ(out["out"].dims, x.dims);
    ExpectNear(out["out"], Reference(x, 2, 3, 4), Tol(GetParam()), Tol(GetParam()));
    ExpectNormalised(out["out"], 2, 3, 4, Tol(GetParam()));
  }
  auto out =
      OpTester("softmax").Input("X", "x", x).Output("Out", "out").Attr("axis", int32_t(0)).Run();
  ExpectNear(out["out"], Reference(x, 1, 2, 12), Tol(GetParam()), Tol(GetParam()));
}

TEST_P(SoftmaxTest, LargeInputsDoNotOverflow) {
  // exp(1000) overflows even float64: only the max-subtracted form gets these right.
  TestTensor x = Values({2, 4}, {1000, 1001, 999, 1000.5, -1000, -1001, -999.5, -1000}, GetParam());
  auto out = OpTester("softmax").Input("X", "x", x).Output("Out", "out").Run();
  for (double v : out["out"].data) EXPECT_TRUE(std::isfinite(v)) << v;
  ExpectNear(out["out"], Reference(x, 2, 4, 1), Tol(GetParam()), Tol(GetParam()));
  ExpectNormalised(out["out"], 2, 4, 1, Tol(GetParam()));
  // A row with one huge value is one-hot; equal values give a uniform row.
  TestTensor y = Values({2, 3}, {1e3, 0, -1e3, 1e3, 1e3, 1e3}, GetParam());
  out = OpTester("softmax").Input("X", "x", y).Output("Out", "out").Run();
  ExpectNear(out["out"], {1, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, Tol(GetParam()), Tol(GetParam()));
}

TEST_P(SoftmaxTest, GradMatchesFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  OpTester("softmax")
      .Input("X", "x", Random({3, 5}, GetParam(), -2, 2, 4))
      .Output("Out", "out")
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
  OpTester("softmax")
      .Input("X", "x", Random({2, 3, 4}, GetParam(), -2, 2, 5))
      .Output("Out", "out")
      .Attr("axis", int32_t(1))
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
  OpTester("softmax")
      .Input("X", "x", Random({3, 2, 2}, GetParam(), -2, 2, 6))
      .Output("Out", "out")
      .Attr("axis", int32_t(0))
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
}

TEST(SoftmaxErrors, AxisOutOfRangeNamesOpAndDims) {
  ExpectError(
      [] {
        OpTester("softmax")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Output("Out", "out")
            .Attr("axis", int32_t(2))
            .Run();
      },
      {"softmax", "axis 2", "[2, 3]"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SoftmaxTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);

}  // namespace
}  // namespace tide::test
