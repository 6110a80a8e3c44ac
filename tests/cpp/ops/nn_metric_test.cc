// nn_metric_test.cc: top_k (values, int64 indices, ties, grad) and accuracy (top-k hits).
#include <algorithm>
#include <numeric>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

class NnTopKTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnTopKTest, ValuesAndIndicesPerRow) {
  TestTensor x = Random({2, 3, 6}, GetParam(), -1, 1, 3);
  auto out = NnOp("top_k")
                 .In("X", "x", x)
                 .Out("Out", "out")
                 .Out("Indices", "idx")
                 .Attr("k", int32_t(3))
                 .Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(out["idx"].dims, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(out["idx"].dtype, TIDE_INT64);
  std::vector<double> want_v, want_i;
  for (int r = 0; r < 6; ++r) {
    std::vector<int> order(6);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return x.data[r * 6 + a] > x.data[r * 6 + b]; });
    for (int j = 0; j < 3; ++j) {
      want_v.push_back(x.data[r * 6 + order[j]]);
      want_i.push_back(order[j]);
    }
  }
  ExpectNear(out["out"], want_v, 0, 0);
  ExpectNear(out["idx"], want_i, 0, 0);
}

TEST_P(NnTopKTest, TiesKeepTheLowerIndexFirst) {
  TestTensor x = Values({1, 5}, {1, 3, 2, 3, 3}, GetParam());
  auto out = NnOp("top_k")
                 .In("X", "x", x)
                 .Out("Out", "out")
                 .Out("Indices", "idx")
                 .Attr("k", int32_t(4))
                 .Run();
  ExpectNear(out["out"], {3, 3, 3, 2}, 0, 0);
  ExpectNear(out["idx"], {1, 3, 4, 2}, 0, 0);
}

TEST_P(NnTopKTest, GradScattersToIndices) {
  GradTolerances t = GradTols(GetParam());
  // Spaced values: a finite-difference step never reorders them.
  TestTensor x = Values({2, 4}, {0.1, 0.9, 0.5, -0.3, 0.7, -0.8, 0.2, 0.4}, GetParam());
  NnOp("top_k")
      .In("X", "x", x)
      .Out("Out", "out")
      .Out("Indices", "idx")
      .Attr("k", int32_t(2))
      .CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnTopKTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnTopKShape, CompileTimeAndErrors) {
  auto got = CompileInfer("top_k", {{"X", "x", {-1, 10}}}, {{"Out", "o"}, {"Indices", "i"}},
                          {{"k", int32_t(5)}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 5}));
  EXPECT_EQ(got["i"].dtype, TIDE_INT64);
  EXPECT_EQ(got["o"].dtype, TIDE_FP32);
  ExpectThrows(
      [] {
        CompileInfer("top_k", {{"X", "x", {-1, 3}}}, {{"Out", "o"}, {"Indices", "i"}},
                     {{"k", int32_t(4)}});
      },
      {"top_k", "k = 4", "[-1, 3]"});
}

// ------------------------------------------------------------------------------------------
NnOp AccuracyOp(TideDataType dt, const TestTensor& indices, const TestTensor& label) {
  return NnOp("accuracy")
      .In("Out", "out", Random(indices.dims, dt, 0, 1, 4))
      .In("Indices", "indices", indices)
      .In("Label", "label", label)
      .Out("Accuracy", "acc")
      .Out("Correct", "correct")
      .Out("Total", "total");
}

class NnAccuracyTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnAccuracyTest, CountsTopKHits) {
  TestTensor indices = Ints({5, 2}, {3, 1, 0, 2, 4, 4, 1, 0, 2, 3});
  TestTensor label = Ints({5, 1}, {1, 2, 3, 1, 4});
  // Hits: rows 0 (1 at position 1), 1 (2), 3 (1); row 2's duplicate 4s are no hit for 3; row 4
  // misses.
  auto out = AccuracyOp(GetParam(), indices, label).Run();
  EXPECT_EQ(out["acc"].dtype, TIDE_FP32);
  EXPECT_EQ(out["correct"].dtype, TIDE_INT32);
  EXPECT_EQ(out["total"].dtype, TIDE_INT32);
  EXPECT_EQ(out["acc"].dims, (std::vector<int64_t>{1}));
  ExpectNear(out["acc"], {double(3.0f / 5.0f)}, 0, 0);
  ExpectNear(out["correct"], {3}, 0, 0);
  ExpectNear(out["total"], {5}, 0, 0);
  // Top-1 only.
  out = AccuracyOp(GetParam(), Ints({4, 1}, {1, 2, 3, 0}), Ints({4, 1}, {1, 0, 3, 3})).Run();
  ExpectNear(out["acc"], {0.5}, 0, 0);
  ExpectNear(out["correct"], {2}, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnAccuracyTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnAccuracyShape, CompileTimeAndErrors) {
  auto got = CompileInfer("accuracy",
                          {{"Out", "o", {-1, 5}},
                           {"Indices", "i", {-1, 5}, TIDE_INT64},
                           {"Label", "l", {-1, 1}, TIDE_INT64}},
                          {{"Accuracy", "a"}, {"Correct", "c"}, {"Total", "t"}});
  EXPECT_EQ(got["a"].dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(got["a"].dtype, TIDE_FP32);
  EXPECT_EQ(got["c"].dtype, TIDE_INT32);
  ExpectThrows(
      [] {
        CompileInfer("accuracy",
                     {{"Out", "o", {4, 5}},
                      {"Indices", "i", {4, 5}, TIDE_INT64},
                      {"Label", "l", {3, 1}, TIDE_INT64}},
                     {{"Accuracy", "a"}, {"Correct", "c"}, {"Total", "t"}});
      },
      {"accuracy", "Label must be [N, 1]", "[3, 1]"});
  ExpectThrows(
      [] {
        CompileInfer("accuracy",
                     {{"Out", "o", {4, 5}},
                      {"Indices", "i", {4, 5}, TIDE_INT32},
                      {"Label", "l", {4, 1}, TIDE_INT64}},
                     {{"Accuracy", "a"}, {"Correct", "c"}, {"Total", "t"}});
      },
      {"accuracy", "Indices ('i') must be int64", "int32"});
}

}  // namespace
}  // namespace tide::test::nn
