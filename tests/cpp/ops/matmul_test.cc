// matmul_test.cc: mul (Fluid's flatten-to-2D product) and matmul (transposes, batches, a
// broadcast rank-2 side, 1-D operands, alpha) against float64 triple loops, their shape errors,
// and their grads against finite differences.
#include <string>

#include "op_tester.h"

namespace tide::test {
namespace {

// One operand as the reference sees it: batch `b` of a row-major [rows, cols] matrix stored at
// b * stride (stride 0: the same matrix for every batch), used transposed when `trans`.
struct Mat {
  const TestTensor* t;
  int64_t stride, rows, cols;
  bool trans = false;
  // Element (i, j) of op(M) in batch b.
  double at(int64_t b, int64_t i, int64_t j) const {
    return t->data[b * stride + (trans ? j * cols + i : i * cols + j)];
  }
  int64_t op_rows() const { return trans ? cols : rows; }
  int64_t op_cols() const { return trans ? rows : cols; }
};

// out[b, i, j] = alpha * sum_p op(X)[b, i, p] * op(Y)[b, p, j], in float64.
std::vector<double> Reference(const Mat& x, const Mat& y, int64_t batch, double alpha = 1) {
  const int64_t m = x.op_rows(), k = x.op_cols(), n = y.op_cols();
  EXPECT_EQ(k, y.op_rows()) << "bad reference case";
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += x.at(b, i, p) * y.at(b, p, j);
        out.push_back(alpha * s);
      }
  return out;
}

class MulTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(MulTest, Rank2) {
  TestTensor x = Random({3, 4}, GetParam(), -1, 1, 1), y = Random({4, 5}, GetParam(), -1, 1, 2);
  auto out = OpTester("mul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(out["out"].dtype, GetParam());
  ExpectNear(out["out"], Reference({&x, 0, 3, 4}, {&y, 0, 4, 5}, 1), Tol(GetParam()),
             Tol(GetParam()));
}

TEST_P(MulTest, NumColDimsFlattenRank3And4) {
  {  // [2, 3, 4] at 2 -> [6, 4]; [4, 5] at 1 -> [4, 5]; Out [2, 3, 5]
    TestTensor x = Random({2, 3, 4}, GetParam(), -1, 1, 3),
               y = Random({4, 5}, GetParam(), -1, 1, 4);
    auto out = OpTester("mul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("x_num_col_dims", int32_t(2))
                   .Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 5}));
    ExpectNear(out["out"], Reference({&x, 0, 6, 4}, {&y, 0, 4, 5}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [2, 3, 4, 5] at 2 -> [6, 20]; [4, 5, 3] at 2 -> [20, 3]; Out [2, 3, 3]
    TestTensor x = Random({2, 3, 4, 5}, GetParam(), -1, 1, 5),
               y = Random({4, 5, 3}, GetParam(), -1, 1, 6);
    auto out = OpTester("mul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("x_num_col_dims", int32_t(2))
                   .Attr("y_num_col_dims", int32_t(2))
                   .Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 3}));
    ExpectNear(out["out"], Reference({&x, 0, 6, 20}, {&y, 0, 20, 3}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [2, 3, 2, 5] at 3 -> [12, 5]; [5, 2, 3] at 1 -> [5, 6]; Out [2, 3, 2, 2, 3]
    TestTensor x = Random({2, 3, 2, 5}, GetParam(), -1, 1, 7),
               y = Random({5, 2, 3}, GetParam(), -1, 1, 8);
    auto out = OpTester("mul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("x_num_col_dims", int32_t(3))
                   .Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 2, 2, 3}));
    ExpectNear(out["out"], Reference({&x, 0, 12, 5}, {&y, 0, 5, 6}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
}

TEST_P(MulTest, GradsMatchFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  OpTester("mul")
      .Input("X", "x", Random({3, 4}, GetParam(), -1, 1, 9))
      .Input("Y", "y", Random({4, 2}, GetParam(), -1, 1, 10))
      .Output("Out", "out")
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  OpTester("mul")
      .Input("X", "x", Random({2, 2, 3}, GetParam(), -1, 1, 11))
      .Input("Y", "y", Random({3, 2, 2}, GetParam(), -1, 1, 12))
      .Output("Out", "out")
      .Attr("x_num_col_dims", int32_t(2))
      .Attr("y_num_col_dims", int32_t(1))
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  OpTester("mul")
      .Input("X", "x", Random({2, 3, 2}, GetParam(), -1, 1, 13))
      .Input("Y", "y", Random({3, 2, 2}, GetParam(), -1, 1, 14))
      .Output("Out", "out")
      .Attr("x_num_col_dims", int32_t(1))
      .Attr("y_num_col_dims", int32_t(2))
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
}

TEST(MulErrors, IncompatibleInnerDimsNameOpAndBothShapes) {
  ExpectError(
      [] {
        OpTester("mul")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({4, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"mul", "[2, 3]", "[4, 5]"});
  // Flattening changes the inner dims: [2, 3, 4] at 1 is [2, 12], which [4, 5] does not fit.
  ExpectError(
      [] {
        OpTester("mul")
            .Input("X", "x", Random({2, 3, 4}, TIDE_FP32))
            .Input("Y", "y", Random({4, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"mul", "[2, 3, 4]", "[4, 5]", "12"});
}

TEST(MulErrors, NumColDimsOutOfRange) {
  ExpectError(
      [] {
        OpTester("mul")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({3, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Attr("x_num_col_dims", int32_t(3))
            .Run();
      },
      {"mul", "x_num_col_dims", "[2, 3]"});
  ExpectError(
      [] {
        OpTester("mul")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({3, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Attr("y_num_col_dims", int32_t(0))
            .Run();
      },
      {"mul", "y_num_col_dims"});
}

class MatmulTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(MatmulTest, AllTransposeCombinations) {
  const int64_t m = 3, k = 4, n = 2;
  for (bool tx : {false, true})
    for (bool ty : {false, true}) {
      TestTensor x = Random(tx ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k},
                            GetParam(), -1, 1, 20);
      TestTensor y = Random(ty ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                            GetParam(), -1, 1, 21);
      auto out = OpTester("matmul")
                     .Input("X", "x", x)
                     .Input("Y", "y", y)
                     .Output("Out", "out")
                     .Attr("transpose_X", tx)
                     .Attr("transpose_Y", ty)
                     .Run();
      EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{m, n})) << "tx=" << tx << " ty=" << ty;
      ExpectNear(out["out"],
                 Reference({&x, 0, x.dims[0], x.dims[1], tx}, {&y, 0, y.dims[0], y.dims[1], ty}, 1),
                 Tol(GetParam()), Tol(GetParam()));
    }
}

TEST_P(MatmulTest, Batched3Dx3D) {
  for (bool tx : {false, true})
    for (bool ty : {false, true}) {
      // op(X)[b] is [3, 4] and op(Y)[b] is [4, 5] whichever way they are stored.
      TestTensor x = Random(tx ? std::vector<int64_t>{2, 4, 3} : std::vector<int64_t>{2, 3, 4},
                            GetParam(), -1, 1, 22);
      TestTensor y = Random(ty ? std::vector<int64_t>{2, 5, 4} : std::vector<int64_t>{2, 4, 5},
                            GetParam(), -1, 1, 23);
      Mat mx{&x, 12, x.dims[1], x.dims[2], tx}, my{&y, 20, y.dims[1], y.dims[2], ty};
      auto out = OpTester("matmul")
                     .Input("X", "x", x)
                     .Input("Y", "y", y)
                     .Output("Out", "out")
                     .Attr("transpose_X", tx)
                     .Attr("transpose_Y", ty)
                     .Run();
      EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 5})) << "tx=" << tx << " ty=" << ty;
      ExpectNear(out["out"], Reference(mx, my, 2), Tol(GetParam()), Tol(GetParam()));
    }
}

TEST_P(MatmulTest, BatchedTimesBroadcastRank2) {
  {  // [3, 2, 4] x [4, 5]: the same Y for every batch
    TestTensor x = Random({3, 2, 4}, GetParam(), -1, 1, 24),
               y = Random({4, 5}, GetParam(), -1, 1, 25);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3, 2, 5}));
    ExpectNear(out["out"], Reference({&x, 8, 2, 4}, {&y, 0, 4, 5}, 3), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [2, 4] x [3, 4, 5]: the same X for every batch
    TestTensor x = Random({2, 4}, GetParam(), -1, 1, 26),
               y = Random({3, 4, 5}, GetParam(), -1, 1, 27);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3, 2, 5}));
    ExpectNear(out["out"], Reference({&x, 0, 2, 4}, {&y, 20, 4, 5}, 3), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // rank 4 batch with a transposed broadcast Y: [2, 3, 2, 4] x [5, 4]^T
    TestTensor x = Random({2, 3, 2, 4}, GetParam(), -1, 1, 28),
               y = Random({5, 4}, GetParam(), -1, 1, 29);
    auto out = OpTester("matmul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("transpose_Y", true)
                   .Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 2, 5}));
    ExpectNear(out["out"], Reference({&x, 8, 2, 4}, {&y, 0, 5, 4, true}, 6), Tol(GetParam()),
               Tol(GetParam()));
  }
}

TEST_P(MatmulTest, OneDimensionalOperands) {
  {  // [4] x [4, 3] -> [3]: X is a row
    TestTensor x = Random({4}, GetParam(), -1, 1, 30), y = Random({4, 3}, GetParam(), -1, 1, 31);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3}));
    ExpectNear(out["out"], Reference({&x, 0, 1, 4}, {&y, 0, 4, 3}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [3, 4] x [4] -> [3]: Y is a column
    TestTensor x = Random({3, 4}, GetParam(), -1, 1, 32), y = Random({4}, GetParam(), -1, 1, 33);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3}));
    ExpectNear(out["out"], Reference({&x, 0, 3, 4}, {&y, 0, 4, 1}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [4, 3]^T x [4] -> [3]
    TestTensor x = Random({4, 3}, GetParam(), -1, 1, 34), y = Random({4}, GetParam(), -1, 1, 35);
    auto out = OpTester("matmul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("transpose_X", true)
                   .Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{3}));
    ExpectNear(out["out"], Reference({&x, 0, 4, 3, true}, {&y, 0, 4, 1}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [4] x [2, 4, 3] -> [2, 3]: a row against each batch
    TestTensor x = Random({4}, GetParam(), -1, 1, 44), y = Random({2, 4, 3}, GetParam(), -1, 1, 45);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3}));
    ExpectNear(out["out"], Reference({&x, 0, 1, 4}, {&y, 12, 4, 3}, 2), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [2, 3, 4] x [4] -> [2, 3]
    TestTensor x = Random({2, 3, 4}, GetParam(), -1, 1, 46), y = Random({4}, GetParam(), -1, 1, 47);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3}));
    ExpectNear(out["out"], Reference({&x, 12, 3, 4}, {&y, 0, 4, 1}, 2), Tol(GetParam()),
               Tol(GetParam()));
  }
  {  // [4] x [4] -> [1]: the dot product
    TestTensor x = Random({4}, GetParam(), -1, 1, 36), y = Random({4}, GetParam(), -1, 1, 37);
    auto out = OpTester("matmul").Input("X", "x", x).Input("Y", "y", y).Output("Out", "out").Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{1}));
    ExpectNear(out["out"], Reference({&x, 0, 1, 4}, {&y, 0, 4, 1}, 1), Tol(GetParam()),
               Tol(GetParam()));
  }
}

TEST_P(MatmulTest, Alpha) {
  TestTensor x = Random({2, 3, 4}, GetParam(), -1, 1, 38),
             y = Random({2, 4, 2}, GetParam(), -1, 1, 39);
  for (float alpha : {2.5f, -0.75f, 0.0f}) {
    auto out = OpTester("matmul")
                   .Input("X", "x", x)
                   .Input("Y", "y", y)
                   .Output("Out", "out")
                   .Attr("alpha", alpha)
                   .Run();
    ExpectNear(out["out"], Reference({&x, 12, 3, 4}, {&y, 8, 4, 2}, 2, alpha), Tol(GetParam()),
               Tol(GetParam()));
  }
  // alpha with transposes and a broadcast side
  TestTensor xt = Random({4, 3}, GetParam(), -1, 1, 40);
  auto out = OpTester("matmul")
                 .Input("X", "x", xt)
                 .Input("Y", "y", y)
                 .Output("Out", "out")
                 .Attr("transpose_X", true)
                 .Attr("alpha", 0.5f)
                 .Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 2}));
  ExpectNear(out["out"], Reference({&xt, 0, 4, 3, true}, {&y, 8, 4, 2}, 2, 0.5), Tol(GetParam()),
             Tol(GetParam()));
}

TEST_P(MatmulTest, LargeEnoughForTheThreadedGemm) {
  // m * n * k >= 2^18 takes Gemm's tensor-contraction path on the CPU pool.
  TestTensor x = Random({64, 80}, GetParam(), -1, 1, 41),
             y = Random({80, 72}, GetParam(), -1, 1, 42);
  for (bool ty : {false, true}) {
    TestTensor yy = ty ? Random({72, 80}, GetParam(), -1, 1, 43) : y;
    auto out = OpTester("matmul")
                   .Input("X", "x", x)
                   .Input("Y", "y", yy)
                   .Output("Out", "out")
                   .Attr("transpose_Y", ty)
                   .Attr("alpha", 1.5f)
                   .Run();
    ExpectNear(out["out"], Reference({&x, 0, 64, 80}, {&yy, 0, yy.dims[0], yy.dims[1], ty}, 1, 1.5),
               GetParam() == TIDE_FP64 ? 1e-10 : 1e-4, GetParam() == TIDE_FP64 ? 1e-10 : 1e-4);
  }
}

TEST_P(MatmulTest, GradsOfAllTransposeCombinations) {
  GradTolerance g = GradTol(GetParam());
  for (bool tx : {false, true})
    for (bool ty : {false, true}) {
      SCOPED_TRACE(testing::Message() << "tx=" << tx << " ty=" << ty);
      OpTester("matmul")
          .Input("X", "x",
                 Random(tx ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, GetParam(),
                        -1, 1, 50))
          .Input("Y", "y",
                 Random(ty ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, GetParam(),
                        -1, 1, 51))
          .Output("Out", "out")
          .Attr("transpose_X", tx)
          .Attr("transpose_Y", ty)
          .Attr("alpha", 1.5f)
          .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
    }
}

TEST_P(MatmulTest, GradsOfBatched) {
  GradTolerance g = GradTol(GetParam());
  for (bool tx : {false, true})
    for (bool ty : {false, true}) {
      SCOPED_TRACE(testing::Message() << "tx=" << tx << " ty=" << ty);
      OpTester("matmul")
          .Input("X", "x",
                 Random(tx ? std::vector<int64_t>{2, 3, 2} : std::vector<int64_t>{2, 2, 3},
                        GetParam(), -1, 1, 52))
          .Input("Y", "y",
                 Random(ty ? std::vector<int64_t>{2, 2, 3} : std::vector<int64_t>{2, 3, 2},
                        GetParam(), -1, 1, 53))
          .Output("Out", "out")
          .Attr("transpose_X", tx)
          .Attr("transpose_Y", ty)
          .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
    }
}

// The broadcast side's grad must sum over the batch (not keep only the last batch's).
TEST_P(MatmulTest, GradsOfBroadcastBatchSumOverTheBatch) {
  GradTolerance g = GradTol(GetParam());
  for (bool t : {false, true}) {
    SCOPED_TRACE(testing::Message() << "transposed broadcast side: " << t);
    OpTester("matmul")
        .Input("X", "x", Random({3, 2, 3}, GetParam(), -1, 1, 54))
        .Input("Y", "y",
               Random(t ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2}, GetParam(), -1,
                      1, 55))
        .Output("Out", "out")
        .Attr("transpose_Y", t)
        .Attr("alpha", 0.5f)
        .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
    OpTester("matmul")
        .Input("X", "x",
               Random(t ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, GetParam(), -1,
                      1, 56))
        .Input("Y", "y", Random({3, 3, 2}, GetParam(), -1, 1, 57))
        .Output("Out", "out")
        .Attr("transpose_X", t)
        .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
    // Two batch dims: Y's grad sums over all 2 * 2 batches.
    OpTester("matmul")
        .Input("X", "x", Random({2, 2, 2, 3}, GetParam(), -1, 1, 66))
        .Input("Y", "y",
               Random(t ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2}, GetParam(), -1,
                      1, 67))
        .Output("Out", "out")
        .Attr("transpose_Y", t)
        .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  }
}

TEST_P(MatmulTest, GradsOfOneDimensionalOperands) {
  GradTolerance g = GradTol(GetParam());
  OpTester("matmul")
      .Input("X", "x", Random({3}, GetParam(), -1, 1, 58))
      .Input("Y", "y", Random({3, 2}, GetParam(), -1, 1, 59))
      .Output("Out", "out")
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  OpTester("matmul")
      .Input("X", "x", Random({2, 3}, GetParam(), -1, 1, 60))
      .Input("Y", "y", Random({3}, GetParam(), -1, 1, 61))
      .Output("Out", "out")
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  OpTester("matmul")
      .Input("X", "x", Random({3}, GetParam(), -1, 1, 62))
      .Input("Y", "y", Random({3}, GetParam(), -1, 1, 63))
      .Output("Out", "out")
      .Attr("alpha", 2.0f)
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
  // A 1-D operand against a batched one: its grad sums over the batch too.
  OpTester("matmul")
      .Input("X", "x", Random({3}, GetParam(), -1, 1, 64))
      .Input("Y", "y", Random({2, 3, 2}, GetParam(), -1, 1, 65))
      .Output("Out", "out")
      .CheckGrad({"x", "y"}, "out", g.rtol, g.atol, g.delta);
}

// Grads big enough for Gemm's threaded contraction path (m * n * k >= 2^18), where the broadcast
// side accumulates over the batch with beta = 1; checked against float64 loops (finite
// differences would be too slow at this size).
TEST_P(MatmulTest, LargeGradsOfBroadcastBatch) {
  const int64_t batch = 3, m = 64, k = 64, n = 64;
  for (bool ty : {false, true}) {
    SCOPED_TRACE(testing::Message() << "transpose_Y=" << ty);
    TestTensor x = Random({batch, m, k}, GetParam(), -1, 1, 70),
               y = Random({k, n}, GetParam(), -1, 1, 71);
    TestTensor dout = Random({batch, m, n}, GetParam(), -1, 1, 72);
    auto g = OpTester("matmul")
                 .Input("X", "x", x)
                 .Input("Y", "y", y)
                 .Output("Out", "out")
                 .Attr("transpose_Y", ty)
                 .Attr("alpha", 0.5f)
                 .RunGrad({"x", "y"}, "out", dout);
    // dX[b] = alpha dOut[b] op(Y)^T; dY = alpha sum_b X[b]^T dOut[b] (transposed when ty).
    Mat gm{&dout, m * n, m, n}, xm{&x, m * k, m, k}, ym{&y, 0, y.dims[0], y.dims[1], !ty};
    std::vector<double> dx = Reference(gm, ym, batch, 0.5);
    std::vector<double> dy(k * n, 0.0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t i = 0; i < m; ++i) s += xm.at(b, i, p) * gm.at(b, i, j);
          dy[ty ? j * k + p : p * n + j] += 0.5 * s;
        }
    const double tol = GetParam() == TIDE_FP64 ? 1e-10 : 1e-4;
    EXPECT_EQ(g["x"].dims, x.dims);
    EXPECT_EQ(g["y"].dims, y.dims);
    ExpectNear(g["x"], dx, tol, tol);
    ExpectNear(g["y"], dy, tol, tol);
  }
}

TEST(MatmulErrors, ShapeErrorsNameOpAndShapes) {
  ExpectError(
      [] {
        OpTester("matmul")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({4, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"matmul", "[2, 3]", "[4, 5]"});
  ExpectError(
      [] {  // fits only without the transpose
        OpTester("matmul")
            .Input("X", "x", Random({2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({3, 5}, TIDE_FP32))
            .Output("Out", "out")
            .Attr("transpose_X", true)
            .Run();
      },
      {"matmul", "[2, 3]", "[3, 5]", "transposed"});
  ExpectError(
      [] {
        OpTester("matmul")
            .Input("X", "x", Random({2, 2, 3}, TIDE_FP32))
            .Input("Y", "y", Random({3, 3, 4}, TIDE_FP32))
            .Output("Out", "out")
            .Run();
      },
      {"matmul", "batch", "[2, 2, 3]", "[3, 3, 4]"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MulTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, MatmulTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);

}  // namespace
}  // namespace tide::test
