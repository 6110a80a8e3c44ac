// elementwise_test.cc: elementwise_add/sub/mul/div kernels (same shape and Fluid broadcast)
// against float64 loops, and their grads against finite differences.
#include <cmath>
#include <functional>

#include "op_tester.h"

namespace tide::test {
namespace {

using Fn = std::function<double(double, double)>;

struct Case {
  const char* op;
  Fn f;
};
const Case kCases[] = {{"elementwise_add", [](double a, double b) { return a + b; }},
                       {"elementwise_sub", [](double a, double b) { return a - b; }},
                       {"elementwise_mul", [](double a, double b) { return a * b; }},
                       {"elementwise_div", [](double a, double b) { return a / b; }}};

// out[i, j, k] = f(x[i, j, k], y[j]) for x viewed as [pre, n, post].
std::vector<double> Reference(const TestTensor& x, const TestTensor& y, int64_t pre, int64_t n,
                              int64_t post, const Fn& f) {
  std::vector<double> out(x.data.size());
  for (int64_t i = 0; i < pre; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < post; ++k) {
        int64_t e = (i * n + j) * post + k;
        out[e] = f(x.data[e], y.data[j]);
      }
  return out;
}

class ElementwiseTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(ElementwiseTest, SameShape) {
  for (const auto& c : kCases) {
    TestTensor x = Random({3, 4}, GetParam(), -1, 1, 1), y = Random({3, 4}, GetParam(), 0.5, 2, 2);
    auto out = OpTester(c.op).Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, x.dims) << c.op;
    ExpectNear(out["out"], Reference(x, y, 1, 12, 1, c.f), Tol(GetParam()));
  }
}

TEST_P(ElementwiseTest, BroadcastAtAxis) {
  for (const auto& c : kCases) {
    TestTensor x = Random({2, 3, 4, 5}, GetParam(), -1, 1, 3),
               y = Random({3, 4}, GetParam(), 0.5, 2, 4);
    auto out = OpTester(c.op)
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("axis", int32_t(1))
                   .Run();
    ExpectNear(out["out"], Reference(x, y, 2, 12, 5, c.f), Tol(GetParam()));
  }
}

TEST_P(ElementwiseTest, BroadcastTrailingAndScalar) {
  for (const auto& c : kCases) {
    TestTensor x = Random({4, 5}, GetParam(), -1, 1, 5), y = Random({5}, GetParam(), 0.5, 2, 6);
    auto out = OpTester(c.op).Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    ExpectNear(out["out"], Reference(x, y, 4, 5, 1, c.f), Tol(GetParam()));
    TestTensor s = Random({1}, GetParam(), 0.5, 2, 7);
    out = OpTester(c.op).Input("X", "x", x).Input("Y", "y", s).Output("Out", "out").Run();
    ExpectNear(out["out"], Reference(x, s, 1, 1, 20, c.f), Tol(GetParam()));
  }
}

TEST_P(ElementwiseTest, GradsMatchFiniteDifferences) {
  for (const auto& c : kCases) {
    double rtol = GetParam() == TIDE_FP64 ? 1e-6 : 5e-3,
           delta = GetParam() == TIDE_FP64 ? 1e-6 : 1e-2;
    OpTester(c.op)
        .Input("X", "x", Random({2, 3, 4}, GetParam(), -1, 1, 8))
        .Input("Y", "y", Random({3}, GetParam(), 0.5, 2, 9))
        .Output("Out", "out")
        .Attr("axis", int32_t(1))
        .CheckGrad({"x", "y"}, "out", rtol, 1e-4, delta);
    // A conv bias's shape: dY sums runs of 19 (8-lane partial sums, then a tail of 3).
    OpTester(c.op)
        .Input("X", "x", Random({2, 3, 19}, GetParam(), -1, 1, 12))
        .Input("Y", "y", Random({3}, GetParam(), 0.5, 2, 13))
        .Output("Out", "out")
        .Attr("axis", int32_t(1))
        .CheckGrad({"x", "y"}, "out", rtol, 1e-4, delta);
    OpTester(c.op)
        .Input("X", "x", Random({2, 3}, GetParam(), -1, 1, 10))
        .Input("Y", "y", Random({2, 3}, GetParam(), 0.5, 2, 11))
        .Output("Out", "out")
        .CheckGrad({"x", "y"}, "out", rtol, 1e-4, delta);
  }
}

TEST(ElementwiseErrors, IncompatibleBroadcastNamesOpAndDims) {
  try {
    OpTester("elementwise_add")
        .Input("X", "x", Random({2, 3}, TIDE_FP32))
        .Input("Y", "y", Random({4}, TIDE_FP32))
        .Output("Out", "out")
        .Run();
    FAIL() << "expected an error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("elementwise_add"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
}

TEST(ElementwiseErrors, IntegerDivisionByZeroIsAnError) {
  EXPECT_THROW(OpTester("elementwise_div")
                   .Input("X", "x", Values({2}, {4, 6}, TIDE_INT32))
                   .Input("Y", "y", Values({2}, {2, 0}, TIDE_INT32))
                   .Output("Out", "out")
                   .Run(),
               core::Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ElementwiseTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         [](const auto& info) {
                           return std::string(info.param == TIDE_FP32 ? "fp32" : "fp64");
                         });

}  // namespace
}  // namespace tide::test
