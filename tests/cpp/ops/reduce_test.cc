// reduce_test.cc: mean (of all elements) and sum (of a list of tensors) against float64 loops,
// sum's shape error, and the grads of both (sum's maker emits one scale op per input).
#include <string>

#include "op_tester.h"

namespace tide::test {
namespace {

class MeanTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(MeanTest, MeanOfAllElements) {
  for (const auto& dims : {std::vector<int64_t>{1}, std::vector<int64_t>{7},
                           std::vector<int64_t>{3, 4}, std::vector<int64_t>{2, 3, 5}}) {
    TestTensor x = Random(dims, GetParam(), -2, 3, 1);
    auto out = OpTester("mean").Input("X", "x", x).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{1}));
    EXPECT_EQ(out["out"].dtype, GetParam());
    double s = 0;
    for (double v : x.data) s += v;
    ExpectNear(out["out"], {s / static_cast<double>(x.data.size())}, Tol(GetParam()),
               Tol(GetParam()));
  }
}

TEST_P(MeanTest, LargeInputUsesThePool) {
  // 2^16 elements is past the kernels' threshold for evaluating on the CPU pool.
  TestTensor x = Random({256, 256}, GetParam(), 0, 1, 2);
  auto out = OpTester("mean").Input("X", "x", x).Output("Out", "out").Run();
  double s = 0;
  for (double v : x.data) s += v;
  ExpectNear(out["out"], {s / static_cast<double>(x.data.size())},
             GetParam() == TIDE_FP64 ? 1e-12 : 1e-4, 0);
}

TEST_P(MeanTest, GradMatchesFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  OpTester("mean")
      .Input("X", "x", Random({3, 4}, GetParam(), -1, 1, 3))
      .Output("Out", "out")
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
  OpTester("mean")
      .Input("X", "x", Random({2, 3, 2}, GetParam(), -1, 1, 4))
      .Output("Out", "out")
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
}

TEST(MeanErrors, EmptyInputNamesTheVariable) {
  ExpectError(
      [] {
        OpTester("mean")
            .Input("X", "empty_x", Values({0, 3}, {}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"mean", "empty_x"});
}

class SumTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(SumTest, OneToFourInputs) {
  const bool is_int = GetParam() == TIDE_INT32 || GetParam() == TIDE_INT64;
  for (int count = 1; count <= 4; ++count) {
    SCOPED_TRACE(testing::Message() << count << " input(s)");
    OpTester t("sum");
    std::vector<double> want(12, 0.0);
    for (int i = 0; i < count; ++i) {
      TestTensor x = Random({3, 4}, GetParam(), is_int ? -1000 : -1, is_int ? 1000 : 1, 10 + i);
      for (size_t e = 0; e < want.size(); ++e) want[e] += x.data[e];
      t.Input("X", "x" + std::to_string(i), x);
    }
    auto out = t.Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(out["out"].dtype, GetParam());
    if (is_int)
      ExpectNear(out["out"], want, 0, 0);
    else
      ExpectNear(out["out"], want, Tol(GetParam()), Tol(GetParam()));
  }
}

TEST_P(SumTest, SameVariableTwice) {
  // X = [a, a]: out = 2a.
  TestTensor a = Random({5}, GetParam(), -10, 10, 20);
  auto out = OpTester("sum").Input("X", "a", a).Input("X", "a", a).Output("Out", "out").Run();
  std::vector<double> want;
  for (double v : a.data) want.push_back(2 * v);
  ExpectNear(out["out"], want, Tol(GetParam()), 0);
}

TEST_P(SumTest, InPlaceIntoTheFirstInput) {
  // Out = X[0] (gradient accumulation): the kernel must not overwrite X[0] before reading it.
  TestTensor a = Random({4, 3}, GetParam(), -10, 10, 21),
             b = Random({4, 3}, GetParam(), -10, 10, 22),
             c = Random({4, 3}, GetParam(), -10, 10, 23);
  auto out = OpTester("sum")
                 .Input("X", "b", b)
                 .Input("X", "a", a)
                 .Input("X", "c", c)
                 .Output("Out", "a")
                 .Run();
  std::vector<double> want;
  for (size_t i = 0; i < a.data.size(); ++i) want.push_back(a.data[i] + b.data[i] + c.data[i]);
  EXPECT_EQ(out["a"].dims, a.dims);
  ExpectNear(out["a"], want, Tol(GetParam()), Tol(GetParam()));
}

TEST(SumInt64, BeyondInt32Range) {
  const double big = static_cast<double>(int64_t(3) << 40);
  auto out = OpTester("sum")
                 .Input("X", "a", Values({2}, {big, -1}, TIDE_INT64))
                 .Input("X", "b", Values({2}, {big, 2}, TIDE_INT64))
                 .Output("Out", "out")
                 .Run();
  ExpectNear(out["out"], {2 * big, 1}, 0, 0);
}

TEST(SumErrors, MismatchedDimsNameTheInput) {
  ExpectError(
      [] {
        OpTester("sum")
            .Input("X", "first", Random({2, 3}, TIDE_FP32))
            .Input("X", "second", Random({2, 3}, TIDE_FP32))
            .Input("X", "odd_one", Random({3, 2}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"sum", "odd_one", "[3, 2]", "[2, 3]"});
  ExpectError(
      [] {
        OpTester("sum")
            .Input("X", "a", Values({2}, {1, 2}, TIDE_INT32))
            .Input("X", "b", Values({3}, {1, 2, 3}, TIDE_INT32))
            .Output("Out", "out")
            .Run();
      },
      {"sum", "'b'", "[3]", "[2]"});
}

class SumGradTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(SumGradTest, GradOfEveryInputMatchesFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  OpTester("sum")
      .Input("X", "x0", Random({2, 3}, GetParam(), -1, 1, 30))
      .Input("X", "x1", Random({2, 3}, GetParam(), -1, 1, 31))
      .Input("X", "x2", Random({2, 3}, GetParam(), -1, 1, 32))
      .Output("Out", "out")
      .CheckGrad({"x0", "x1", "x2"}, "out", g.rtol, g.atol, g.delta);
  OpTester("sum")
      .Input("X", "only", Random({4}, GetParam(), -1, 1, 33))
      .Output("Out", "out")
      .CheckGrad({"only"}, "out", g.rtol, g.atol, g.delta);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MeanTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, SumTest,
                         ::testing::Values(TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64),
                         DtypeParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, SumGradTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);

}  // namespace
}  // namespace tide::test
