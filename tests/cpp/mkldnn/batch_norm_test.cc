// batch_norm_test.cc: the oneDNN batch_norm kernel and its grad against the plain kernel:
// training (batch statistics, running statistics updated with momentum, SavedMean and
// SavedVariance = 1 / sqrt(var + eps)), in place as Fluid binds MeanOut to Mean, is_test,
// use_global_stats, rank 2 (after an fc) and channel counts that do and do not divide into
// oneDNN's blocks. Inputs are fed plain and blocked.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct BnCase {
  const char* name;
  std::vector<int64_t> x;
  bool is_test, use_global_stats;
  float momentum, epsilon;
};

std::ostream& operator<<(std::ostream& os, const BnCase& c) { return os << c.name; }

const BnCase kCases[] = {
    {"train_c16", {2, 16, 5, 5}, false, false, 0.9f, 1e-5f},
    {"train_c8_momentum", {4, 8, 3, 3}, false, false, 0.5f, 1e-3f},
    {"train_c3", {2, 3, 4, 5}, false, false, 0.9f, 1e-5f},
    {"train_rank2", {6, 10}, false, false, 0.9f, 1e-5f},
    {"test_c16", {2, 16, 4, 4}, true, false, 0.9f, 1e-5f},
    {"test_rank2", {5, 7}, true, false, 0.9f, 1e-5f},
    {"global_stats_train", {2, 8, 3, 4}, false, true, 0.9f, 1e-5f},
};

// Separate running-stat outputs, so the updates can be compared with the inputs intact.
OneOp BnOp(const BnCase& k) {
  const int64_t c = k.x[1];
  return OneOp("batch_norm")
      .Input("X", "x", Random(k.x, TIDE_FP32, -2, 3, 21))
      .Input("Scale", "scale", Random({c}, TIDE_FP32, 0.5, 1.5, 22))
      .Input("Bias", "bias", Random({c}, TIDE_FP32, -1, 1, 23))
      .Input("Mean", "mean", Random({c}, TIDE_FP32, -0.5, 0.5, 24))
      .Input("Variance", "variance", Random({c}, TIDE_FP32, 0.5, 2, 25))
      .Output("Y", "y")
      .Output("MeanOut", "mean_out")
      .Output("VarianceOut", "variance_out")
      .Output("SavedMean", "saved_mean")
      .Output("SavedVariance", "saved_variance")
      .Attr("is_test", k.is_test)
      .Attr("use_global_stats", k.use_global_stats)
      .Attr("momentum", k.momentum)
      .Attr("epsilon", k.epsilon);
}

class MkldnnBatchNorm : public ::testing::TestWithParam<BnCase> {};

TEST_P(MkldnnBatchNorm, ForwardMatchesPlain) {
  const BnCase& k = GetParam();
  OneOp op = BnOp(k);
  op.CheckForward(1e-4, 1e-5);
  if (k.x.size() == 4 && k.x[1] % 8 == 0)
    EXPECT_EQ(op.last().layouts.at("y"), TIDE_LAYOUT_ONEDNN) << "Y keeps a blocked X's format";
}

TEST_P(MkldnnBatchNorm, GradMatchesPlain) {
  const BnCase& k = GetParam();
  BnOp(k).CheckGrad({"x", "scale", "bias"}, "y", Random(k.x, TIDE_FP32, -1, 1, 26), 2e-4, 2e-4);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnBatchNorm, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BnCase>& i) {
                           return std::string(i.param.name);
                         });

// Fluid binds MeanOut / VarianceOut to the Mean / Variance variables: the update is in place.
TEST(MkldnnBatchNorm, InPlaceRunningStatistics) {
  const int64_t c = 16;
  OneOp op = OneOp("batch_norm")
                 .Input("X", "x", Random({3, c, 4, 4}, TIDE_FP32, -2, 3, 31))
                 .Input("Scale", "scale", Random({c}, TIDE_FP32, 0.5, 1.5, 32))
                 .Input("Bias", "bias", Random({c}, TIDE_FP32, -1, 1, 33))
                 .Input("Mean", "mean", Random({c}, TIDE_FP32, -0.5, 0.5, 34))
                 .Input("Variance", "variance", Random({c}, TIDE_FP32, 0.5, 2, 35))
                 .Output("Y", "y")
                 .Output("MeanOut", "mean")
                 .Output("VarianceOut", "variance")
                 .Output("SavedMean", "saved_mean")
                 .Output("SavedVariance", "saved_variance");
  op.CheckForward(1e-4, 1e-5);
  // And the update really moved the statistics (momentum 0.9 towards the batch's).
  std::map<std::string, TestTensor> want = op.Reference().Run();
  TestTensor old_mean = Random({c}, TIDE_FP32, -0.5, 0.5, 34);
  double moved = 0;
  for (int64_t i = 0; i < c; ++i) moved += std::fabs(want.at("mean").data[i] - old_mean.data[i]);
  EXPECT_GT(moved, 1e-3);
}

// MomentumTensor gives the momentum (read by tide/ops/batch_norm.hpp, as the plain kernel reads
// it; the core hands the float32 kernel a float64 one cast).
TEST(MkldnnBatchNorm, MomentumTensor) {
  BnCase k{"momentum_tensor", {2, 16, 3, 3}, false, false, 0.9f, 1e-5f};
  OneOp op = BnOp(k).Input("MomentumTensor", "momentum", Values({1}, {0.25}, TIDE_FP64), false);
  op.CheckForward(1e-4, 1e-5);
}

}  // namespace
}  // namespace tide::test::mkldnn
