// nn_cross_entropy_test.cc: softmax_with_cross_entropy (hard/soft labels, ignore_index, large
// logits, class axis) and cross_entropy (hard/soft, ignore_index, log(0) guard) against float64
// loops; grads against finite differences.
#include <cmath>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

// Rows of [n, k] (class axis last).
struct SwceRef {
  std::vector<double> softmax, loss;
};
SwceRef RefSwce(const TestTensor& logits, const TestTensor& label, bool soft, int64_t ignore) {
  int64_t k = logits.dims.back(), n = logits.numel() / k;
  SwceRef r;
  for (int64_t i = 0; i < n; ++i) {
    double mx = -1e300;
    for (int64_t c = 0; c < k; ++c) mx = std::max(mx, logits.data[i * k + c]);
    double sum = 0;
    for (int64_t c = 0; c < k; ++c) sum += std::exp(logits.data[i * k + c] - mx);
    double loss = 0;
    for (int64_t c = 0; c < k; ++c) {
      double logp = logits.data[i * k + c] - mx - std::log(sum);
      r.softmax.push_back(std::exp(logp));
      if (soft)
        loss -= label.data[i * k + c] * logp;
      else if (static_cast<int64_t>(label.data[i]) == c)
        loss = -logp;
    }
    if (!soft && static_cast<int64_t>(label.data[i]) == ignore) loss = 0;
    r.loss.push_back(loss);
  }
  return r;
}

// Rows that sum to 1.
TestTensor Distribution(std::vector<int64_t> dims, TideDataType dt, unsigned seed) {
  TestTensor t = Random(dims, dt, 0.05, 1, seed);
  int64_t k = dims.back();
  for (size_t i = 0; i < t.data.size(); i += k) {
    double s = 0;
    for (int64_t c = 0; c < k; ++c) s += t.data[i + c];
    for (int64_t c = 0; c < k; ++c) {
      t.data[i + c] /= s;
      if (dt == TIDE_FP32) t.data[i + c] = static_cast<float>(t.data[i + c]);
    }
  }
  return t;
}

NnOp SwceOp(const TestTensor& logits, const TestTensor& label, bool soft, int32_t ignore = -100) {
  return NnOp("softmax_with_cross_entropy")
      .In("Logits", "logits", logits)
      .In("Label", "label", label)
      .Out("Softmax", "softmax")
      .Out("Loss", "loss")
      .Attr("soft_label", soft)
      .Attr("ignore_index", ignore);
}

class NnSoftmaxCrossEntropyTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnSoftmaxCrossEntropyTest, HardLabels) {
  TestTensor logits = Random({5, 7}, GetParam(), -3, 3, 1);
  TestTensor label = Ints({5, 1}, {0, 6, 3, 3, 2});
  auto out = SwceOp(logits, label, false).Run();
  SwceRef r = RefSwce(logits, label, false, -100);
  EXPECT_EQ(out["loss"].dims, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(out["softmax"].dims, (std::vector<int64_t>{5, 7}));
  ExpectNear(out["softmax"], r.softmax, FwdTol(GetParam()), FwdTol(GetParam()));
  ExpectNear(out["loss"], r.loss, FwdTol(GetParam()), FwdTol(GetParam()));
}

TEST_P(NnSoftmaxCrossEntropyTest, IgnoreIndexGivesZeroLossAndGrad) {
  TestTensor logits = Random({4, 3}, GetParam(), -3, 3, 2);
  TestTensor label = Ints({4, 1}, {1, 5, 0, 5});
  auto out = SwceOp(logits, label, false, 5).Run();
  SwceRef r = RefSwce(logits, label, false, 5);
  ExpectNear(out["loss"], r.loss, FwdTol(GetParam()), FwdTol(GetParam()));
  EXPECT_EQ(out["loss"].data[1], 0.0);
  EXPECT_GT(out["loss"].data[0], 0.0);
  GradTolerances t = GradTols(GetParam());
  SwceOp(logits, label, false, 5).CheckGrad({"logits"}, {"loss"}, t.rtol, t.atol, t.delta);
}

TEST_P(NnSoftmaxCrossEntropyTest, SoftLabels) {
  TestTensor logits = Random({4, 6}, GetParam(), -3, 3, 3);
  TestTensor label = Distribution({4, 6}, GetParam(), 4);
  auto out = SwceOp(logits, label, true).Run();
  SwceRef r = RefSwce(logits, label, true, -100);
  ExpectNear(out["softmax"], r.softmax, FwdTol(GetParam()), FwdTol(GetParam()));
  ExpectNear(out["loss"], r.loss, FwdTol(GetParam()), FwdTol(GetParam()));
}

TEST_P(NnSoftmaxCrossEntropyTest, LargeLogitsStayFinite) {
  TestTensor logits = Values({2, 3}, {1000, 0, -1000, -500, 500, 499}, GetParam());
  TestTensor label = Ints({2, 1}, {1, 2});
  auto out = SwceOp(logits, label, false).Run();
  // Row 0: loss = 1000 (class 1 is 1000 below the max); row 1: log(1 + e^-1 + e^-1000) + 1.
  ExpectNear(out["loss"], {1000.0, std::log1p(std::exp(-1.0)) + 1.0}, 1e-6, 1e-6);
  for (double v : out["softmax"].data) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(out["softmax"].data[0], 1.0, 1e-7);
}

TEST_P(NnSoftmaxCrossEntropyTest, ClassAxisNotLast) {
  // Logits [2, 3, 2] with classes on axis 1: row (i, j) is logits[i, :, j].
  TestTensor logits = Random({2, 3, 2}, GetParam(), -2, 2, 5);
  TestTensor label = Ints({2, 1, 2}, {0, 2, 1, 1});
  auto out = SwceOp(logits, label, false).Attr("axis", int32_t(1)).Run();
  TestTensor moved;  // [2, 2, 3], classes last
  moved.dims = {2, 2, 3};
  moved.dtype = GetParam();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int c = 0; c < 3; ++c) moved.data.push_back(logits.data[(i * 3 + c) * 2 + j]);
  SwceRef r = RefSwce(moved, label, false, -100);
  EXPECT_EQ(out["loss"].dims, (std::vector<int64_t>{2, 1, 2}));
  ExpectNear(out["loss"], r.loss, FwdTol(GetParam()), FwdTol(GetParam()));
  GradTolerances t = GradTols(GetParam());
  SwceOp(logits, label, false)
      .Attr("axis", int32_t(1))
      .CheckGrad({"logits"}, {"loss"}, t.rtol, t.atol, t.delta);
}

TEST_P(NnSoftmaxCrossEntropyTest, GradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  TestTensor logits = Random({4, 5}, GetParam(), -2, 2, 6);
  SwceOp(logits, Ints({4, 1}, {4, 0, 2, 2}), false)
      .CheckGrad({"logits"}, {"loss"}, t.rtol, t.atol, t.delta);
  SwceOp(logits, Distribution({4, 5}, GetParam(), 7), true)
      .CheckGrad({"logits"}, {"loss"}, t.rtol, t.atol, t.delta);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnSoftmaxCrossEntropyTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeName);

TEST(NnSoftmaxCrossEntropyErrors, LabelsAndShapes) {
  TestTensor logits = Random({3, 4}, TIDE_FP32);
  ExpectThrows(
      [&] {
        SwceOp(logits, Ints({3, 1}, {0, 4, 1}), false).Run();
      },
      {"softmax_with_cross_entropy", "Label ('label')[1] = 4", "[0, 4)"});
  ExpectThrows(
      [&] {
        SwceOp(logits, Ints({3, 2}, {0, 1, 1, 1, 2, 2}), false).Run();
      },
      {"softmax_with_cross_entropy", "Label [3, 2]", "Logits [3, 4]"});
  ExpectThrows(
      [&] {
        SwceOp(logits, Values({3, 1}, {0, 1, 2}, TIDE_FP32), false).Run();
      },
      {"softmax_with_cross_entropy", "must be int64"});
  auto got = CompileInfer("softmax_with_cross_entropy",
                          {{"Logits", "x", {-1, 10}}, {"Label", "l", {-1, 1}, TIDE_INT64}},
                          {{"Softmax", "s"}, {"Loss", "loss"}});
  EXPECT_EQ(got["loss"].dims, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(got["s"].dims, (std::vector<int64_t>{-1, 10}));
  EXPECT_EQ(got["loss"].dtype, TIDE_FP32);
}

// ------------------------------------------------------------------------------------------
NnOp XeOp(const TestTensor& x, const TestTensor& label, bool soft, int32_t ignore = -100) {
  return NnOp("cross_entropy")
      .In("X", "x", x)
      .In("Label", "label", label)
      .Out("Y", "y")
      .Attr("soft_label", soft)
      .Attr("ignore_index", ignore);
}

class NnCrossEntropyTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnCrossEntropyTest, HardAndSoftLabels) {
  TestTensor x = Distribution({4, 5}, GetParam(), 8);
  TestTensor hard = Ints({4, 1}, {1, 4, 0, 7});
  auto out = XeOp(x, hard, false, 7).Run();
  EXPECT_EQ(out["y"].dims, (std::vector<int64_t>{4, 1}));
  std::vector<double> want{-std::log(x.data[1]), -std::log(x.data[5 + 4]), -std::log(x.data[10]),
                           0.0};
  ExpectNear(out["y"], want, FwdTol(GetParam()), FwdTol(GetParam()));
  TestTensor soft = Distribution({4, 5}, GetParam(), 9);
  out = XeOp(x, soft, true).Run();
  want.clear();
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 5; ++j) s -= soft.data[i * 5 + j] * std::log(x.data[i * 5 + j]);
    want.push_back(s);
  }
  ExpectNear(out["y"], want, FwdTol(GetParam()), FwdTol(GetParam()));
}

TEST_P(NnCrossEntropyTest, LogOfZeroIsFinite) {
  TestTensor x = Values({2, 3}, {0.0, 0.5, 0.5, 0.2, 0.8, 0.0}, GetParam());
  auto hard = XeOp(x, Ints({2, 1}, {0, 1}), false).Run();
  EXPECT_EQ(hard["y"].data[0], GetParam() == TIDE_FP32 ? double(1e20f) : 1e20);  // -log(0) -> 1e20
  EXPECT_NEAR(hard["y"].data[1], -std::log(0.8), 1e-6);
  TestTensor label = Values({2, 3}, {0.0, 0.5, 0.5, 0.5, 0.5, 0.0}, GetParam());
  auto soft = XeOp(x, label, true).Run();
  ExpectNear(soft["y"], {std::log(2.0), -0.5 * std::log(0.2) - 0.5 * std::log(0.8)}, 1e-6, 1e-6);
  // The grad at X = 0 stays finite as well.
  NnOp op = XeOp(x, label, true);
  core::OpDesc fwd;
  core::ProgramDesc prog = op.Build(&fwd);
  core::BlockDesc* b = prog.MutableBlock(0);
  core::VarDesc* dv = b->Var("y@GRAD");
  dv->set_dtype(GetParam());
  dv->set_shape({2, 1});
  for (const auto& g : core::MakeGradOps(fwd, {})) AppendChecked(b, g);
  auto feeds = op.feeds();
  feeds["y@GRAD"] = Values({2, 1}, {1.0, 1.0}, GetParam());
  auto got = RunProgram(prog, feeds, {"x@GRAD"});
  for (double v : got["x@GRAD"].data) EXPECT_TRUE(std::isfinite(v));
  ExpectNear(got["x@GRAD"], {0.0, -1.0, -1.0, -2.5, -0.625, 0.0}, 1e-6, 1e-6);
}

TEST_P(NnCrossEntropyTest, GradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  TestTensor x = Random({4, 5}, GetParam(), 0.3, 1, 10);
  XeOp(x, Ints({4, 1}, {3, 0, -100, 4}), false).CheckGrad({"x"}, {"y"}, t.rtol, t.atol, t.delta);
  XeOp(x, Distribution({4, 5}, GetParam(), 11), true)
      .CheckGrad({"x"}, {"y"}, t.rtol, t.atol, t.delta);
  // Rank 3: rows are the leading dims.
  XeOp(Random({2, 2, 3}, GetParam(), 0.3, 1, 12), Ints({2, 2, 1}, {0, 2, 1, 1}), false)
      .CheckGrad({"x"}, {"y"}, t.rtol, t.atol, t.delta);
}

// Fluid 1.x's Y is Label's dims: a hard Label of rank(X) - 1 gives Y without the trailing 1.
TEST_P(NnCrossEntropyTest, LabelWithoutTheLastDimGivesYWithoutIt) {
  TestTensor x = Distribution({4, 5}, GetParam(), 8);
  TestTensor label = Ints({4}, {1, 4, 0, 2});
  const std::vector<double> want{-std::log(x.data[1]), -std::log(x.data[5 + 4]),
                                 -std::log(x.data[10]), -std::log(x.data[15 + 2])};
  auto out = XeOp(x, label, false).Run();
  EXPECT_EQ(out["y"].dims, (std::vector<int64_t>{4}));
  ExpectNear(out["y"], want, FwdTol(GetParam()), FwdTol(GetParam()));
  NnOp xe2 = NnOp("cross_entropy2")
                 .In("X", "x", x)
                 .In("Label", "label", label)
                 .Out("Y", "y")
                 .Out("MatchX", "match")
                 .Out("XShape", "xs");
  out = xe2.Run();
  EXPECT_EQ(out["y"].dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(out["match"].dims, (std::vector<int64_t>{4, 1}));
  ExpectNear(out["y"], want, FwdTol(GetParam()), FwdTol(GetParam()));
  GradTolerances t = GradTols(GetParam());
  XeOp(Random({4, 5}, GetParam(), 0.3, 1, 10), label, false)
      .CheckGrad({"x"}, {"y"}, t.rtol, t.atol, t.delta);
  const std::vector<std::pair<std::string, std::string>> xe_outs{{"Y", "y"}},
      xe2_outs{{"Y", "y"}, {"MatchX", "m"}, {"XShape", "xs"}};
  for (const char* op : {"cross_entropy", "cross_entropy2"}) {
    auto got =
        CompileInfer(op, {{"X", "x", {-1, 3, 10}, TIDE_FP64}, {"Label", "l", {-1, 3}, TIDE_INT64}},
                     std::string(op) == "cross_entropy" ? xe_outs : xe2_outs);
    EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 3})) << op;
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, NnCrossEntropyTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeName);

TEST(NnCrossEntropyErrors, LabelsAndShapes) {
  TestTensor x = Random({3, 4}, TIDE_FP64, 0.1, 1);
  ExpectThrows(
      [&] {
        XeOp(x, Ints({3, 1}, {0, -1, 1}), false).Run();
      },
      {"cross_entropy", "Label ('label')[1] = -1", "[0, 4)"});
  ExpectThrows(
      [&] {
        XeOp(x, Random({3, 3}, TIDE_FP64), true).Run();
      },
      {"cross_entropy", "Label [3, 3]", "X [3, 4]"});
  auto got = CompileInfer("cross_entropy",
                          {{"X", "x", {-1, 10}, TIDE_FP64}, {"Label", "l", {-1, 1}, TIDE_INT64}},
                          {{"Y", "y"}});
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(got["y"].dtype, TIDE_FP64);
}

}  // namespace
}  // namespace tide::test::nn
