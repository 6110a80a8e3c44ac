// nn_batch_norm_test.cc: batch_norm in training (batch statistics, in-place running-stat update
// with momentum, SavedVariance = 1/sqrt(var+eps)) and test mode, NCHW / NHWC / rank 2, against a
// float64 loop; grads in both modes against finite differences.
#include <cmath>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

struct BnRef {
  std::vector<double> y, mean_out, var_out, saved_mean, saved_inv_std;
};

// x viewed as [outer, C, inner].
BnRef RefBn(const TestTensor& x, const TestTensor& scale, const TestTensor& bias,
            const TestTensor& mean, const TestTensor& var, int64_t outer, int64_t c, int64_t inner,
            bool train, double momentum, double eps) {
  BnRef r;
  r.y.resize(x.data.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mu = mean.data[ch], v = var.data[ch];
    if (train) {
      double s = 0, sq = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) s += x.data[(o * c + ch) * inner + i];
      mu = s / double(outer * inner);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          double d = x.data[(o * c + ch) * inner + i] - mu;
          sq += d * d;
        }
      v = sq / double(outer * inner);
      r.mean_out.push_back(mean.data[ch] * momentum + mu * (1 - momentum));
      r.var_out.push_back(var.data[ch] * momentum + v * (1 - momentum));
    } else {
      r.mean_out.push_back(mean.data[ch]);
      r.var_out.push_back(var.data[ch]);
    }
    double inv = 1 / std::sqrt(v + eps);
    r.saved_mean.push_back(mu);
    r.saved_inv_std.push_back(inv);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t e = (o * c + ch) * inner + i;
        r.y[e] = (x.data[e] - mu) * inv * scale.data[ch] + bias.data[ch];
      }
  }
  return r;
}

struct BnCase {
  const char* name;
  std::vector<int64_t> dims;
  const char* layout;
  int64_t outer, c, inner;
};
const BnCase kCases[] = {
    {"nchw", {2, 3, 4, 5}, "NCHW", 2, 3, 20},
    {"rank2", {6, 4}, "NCHW", 6, 4, 1},
    {"nhwc", {2, 3, 2, 4}, "NHWC", 12, 4, 1},
    {"rank5", {2, 2, 2, 3, 2}, "NCHW", 2, 2, 12},
};

// In place, as Fluid programs bind them: MeanOut is "mean", VarianceOut is "variance".
NnOp BnOp(const BnCase& k, TideDataType dt, bool is_test, float momentum = 0.9f,
          float eps = 1e-5f) {
  return NnOp("batch_norm")
      .In("X", "x", Random(k.dims, dt, -2, 2, 11))
      .In("Scale", "scale", Random({k.c}, dt, 0.5, 1.5, 12))
      .In("Bias", "bias", Random({k.c}, dt, -1, 1, 13))
      .In("Mean", "mean", Random({k.c}, dt, -0.5, 0.5, 14))
      .In("Variance", "variance", Random({k.c}, dt, 0.5, 2, 15))
      .Out("Y", "y")
      .Out("MeanOut", "mean")
      .Out("VarianceOut", "variance")
      .Out("SavedMean", "saved_mean")
      .Out("SavedVariance", "saved_variance")
      .Attr("is_test", is_test)
      .Attr("momentum", momentum)
      .Attr("epsilon", eps)
      .Attr("data_layout", std::string(k.layout));
}

class NnBatchNormTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnBatchNormTest, TrainingUsesBatchStatsAndUpdatesRunningStatsInPlace) {
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    NnOp op = BnOp(k, GetParam(), false, 0.8f, 1e-4f);
    const auto& f = op.feeds();
    BnRef r = RefBn(f.at("x"), f.at("scale"), f.at("bias"), f.at("mean"), f.at("variance"), k.outer,
                    k.c, k.inner, true, double(0.8f), double(1e-4f));
    auto out = op.Run();
    double tol = GetParam() == TIDE_FP64 ? 1e-9 : 1e-4;
    EXPECT_EQ(out["y"].dims, k.dims);
    ExpectNear(out["y"], r.y, tol, tol);
    ExpectNear(out["mean"], r.mean_out, tol, tol);
    ExpectNear(out["variance"], r.var_out, tol, tol);
    ExpectNear(out["saved_mean"], r.saved_mean, tol, tol);
    ExpectNear(out["saved_variance"], r.saved_inv_std, tol, tol);
  }
}

TEST_P(NnBatchNormTest, TestModeUsesRunningStatsAndChangesNothing) {
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    NnOp op = BnOp(k, GetParam(), true);
    const auto& f = op.feeds();
    BnRef r = RefBn(f.at("x"), f.at("scale"), f.at("bias"), f.at("mean"), f.at("variance"), k.outer,
                    k.c, k.inner, false, double(0.9f), double(1e-5f));
    auto out = op.Run();
    double tol = GetParam() == TIDE_FP64 ? 1e-9 : 1e-4;
    ExpectNear(out["y"], r.y, tol, tol);
    ExpectNear(out["mean"], f.at("mean").data, 0, 0);
    ExpectNear(out["variance"], f.at("variance").data, 0, 0);
  }
}

TEST_P(NnBatchNormTest, SeparateRunningStatOutputs) {
  // MeanOut / VarianceOut bound to fresh variables: Mean / Variance stay as fed.
  const BnCase& k = kCases[0];
  NnOp op = NnOp("batch_norm")
                .In("X", "x", Random(k.dims, GetParam(), -2, 2, 11))
                .In("Scale", "scale", Random({k.c}, GetParam(), 0.5, 1.5, 12))
                .In("Bias", "bias", Random({k.c}, GetParam(), -1, 1, 13))
                .In("Mean", "mean", Random({k.c}, GetParam(), -0.5, 0.5, 14))
                .In("Variance", "variance", Random({k.c}, GetParam(), 0.5, 2, 15))
                .Out("Y", "y")
                .Out("MeanOut", "mean_out")
                .Out("VarianceOut", "var_out")
                .Out("SavedMean", "saved_mean")
                .Out("SavedVariance", "saved_variance")
                .Out("MeanOut", "mean_out");
  const auto& f = op.feeds();
  BnRef r = RefBn(f.at("x"), f.at("scale"), f.at("bias"), f.at("mean"), f.at("variance"), k.outer,
                  k.c, k.inner, true, double(0.9f), double(1e-5f));
  // (A duplicate MeanOut binding is an error: the parameter takes one variable.)
  ExpectThrows([&] { op.Run(); }, {"batch_norm", "MeanOut", "takes one variable"});
  NnOp ok = NnOp("batch_norm")
                .In("X", "x", f.at("x"))
                .In("Scale", "scale", f.at("scale"))
                .In("Bias", "bias", f.at("bias"))
                .In("Mean", "mean", f.at("mean"))
                .In("Variance", "variance", f.at("variance"))
                .Out("Y", "y")
                .Out("MeanOut", "mean_out")
                .Out("VarianceOut", "var_out")
                .Out("SavedMean", "saved_mean")
                .Out("SavedVariance", "saved_variance");
  auto out = RunProgram(ok.Build(), f, {"y", "mean_out", "var_out", "mean"});
  double tol = GetParam() == TIDE_FP64 ? 1e-9 : 1e-4;
  ExpectNear(out["mean_out"], r.mean_out, tol, tol);
  ExpectNear(out["var_out"], r.var_out, tol, tol);
  ExpectNear(out["mean"], f.at("mean").data, 0, 0);
}

TEST_P(NnBatchNormTest, TrainingGradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    BnOp(k, GetParam(), false).CheckGrad({"x", "scale", "bias"}, {"y"}, t.rtol, t.atol, t.delta);
  }
}

TEST_P(NnBatchNormTest, TestModeGradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  for (int i : {0, 2}) {
    SCOPED_TRACE(kCases[i].name);
    BnOp(kCases[i], GetParam(), true)
        .CheckGrad({"x", "scale", "bias"}, {"y"}, t.rtol, t.atol, t.delta);
    BnOp(kCases[i], GetParam(), false)
        .Attr("use_global_stats", true)
        .CheckGrad({"x", "scale", "bias"}, {"y"}, t.rtol, t.atol, t.delta);
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, NnBatchNormTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnBatchNormShape, CompileTimeShapesAndErrors) {
  std::vector<std::pair<std::string, std::string>> outs{{"Y", "y"},
                                                        {"MeanOut", "m"},
                                                        {"VarianceOut", "v"},
                                                        {"SavedMean", "sm"},
                                                        {"SavedVariance", "sv"}};
  auto got = CompileInfer("batch_norm",
                          {{"X", "x", {-1, 8, 5, 5}},
                           {"Scale", "s", {8}},
                           {"Bias", "b", {8}},
                           {"Mean", "m", {8}},
                           {"Variance", "v", {8}}},
                          outs);
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 8, 5, 5}));
  EXPECT_EQ(got["sv"].dims, (std::vector<int64_t>{8}));
  EXPECT_EQ(got["sm"].dtype, TIDE_FP32);
  ExpectThrows(
      [&] {
        CompileInfer("batch_norm",
                     {{"X", "x", {-1, 8, 5, 5}},
                      {"Scale", "s", {7}},
                      {"Bias", "b", {8}},
                      {"Mean", "m", {8}},
                      {"Variance", "v", {8}}},
                     outs);
      },
      {"batch_norm", "Scale must be [C] = [8]", "[7]"});
  ExpectThrows(
      [&] {
        CompileInfer("batch_norm",
                     {{"X", "x", {8}},
                      {"Scale", "s", {8}},
                      {"Bias", "b", {8}},
                      {"Mean", "m", {8}},
                      {"Variance", "v", {8}}},
                     outs);
      },
      {"batch_norm", "rank 2 to 5", "[8]"});
}

}  // namespace
}  // namespace tide::test::nn
