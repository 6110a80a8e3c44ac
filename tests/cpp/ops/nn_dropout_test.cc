// nn_dropout_test.cc: dropout with a fixed seed against Fluid's generator (minstd_rand, uniform
// float < p drops), both implementations, inference scaling, Mask semantics and dX = dOut * Mask.
#include <random>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

// Fluid's mask for `n` elements: 0 where dropped, `keep` elsewhere.
std::vector<double> RefMask(int64_t n, float p, int seed, double keep) {
  std::minstd_rand engine;
  engine.seed(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> dist(0, 1);
  std::vector<double> m;
  for (int64_t i = 0; i < n; ++i) m.push_back(dist(engine) < p ? 0.0 : keep);
  return m;
}

NnOp DropoutOp(const TestTensor& x, float p, bool is_test, const std::string& impl, int seed = 7,
               bool fix_seed = true) {
  return NnOp("dropout")
      .In("X", "x", x)
      .Out("Out", "out")
      .Out("Mask", "mask")
      .Attr("dropout_prob", p)
      .Attr("is_test", is_test)
      .Attr("fix_seed", fix_seed)
      .Attr("seed", int32_t(seed))
      .Attr("dropout_implementation", impl);
}

std::vector<double> Times(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size(); ++i) r.push_back(a[i] * b[i]);
  return r;
}

class NnDropoutTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnDropoutTest, DowngradeInInferTrainingMask) {
  TestTensor x = Random({40, 50}, GetParam(), -1, 1, 3);
  auto out = DropoutOp(x, 0.3f, false, "downgrade_in_infer").Run();
  std::vector<double> mask = RefMask(2000, 0.3f, 7, 1.0);
  ExpectNear(out["mask"], mask, 0, 0);
  ExpectNear(out["out"], Times(x.data, mask), 0, 0);
  double dropped = 0;
  for (double m : out["mask"].data) dropped += m == 0.0;
  EXPECT_NEAR(dropped / 2000, 0.3, 0.04);
  EXPECT_EQ(out["mask"].dims, x.dims);
  EXPECT_EQ(out["mask"].dtype, GetParam());
}

TEST_P(NnDropoutTest, UpscaleInTrainTrainingMask) {
  TestTensor x = Random({30, 20}, GetParam(), -1, 1, 4);
  const float p = 0.25f;
  double keep = GetParam() == TIDE_FP32 ? double(1.0f / (1.0f - p)) : 1.0 / (1.0 - double(p));
  auto out = DropoutOp(x, p, false, "upscale_in_train", 11).Run();
  std::vector<double> mask = RefMask(600, p, 11, keep);
  ExpectNear(out["mask"], mask, 1e-7, 0);
  ExpectNear(out["out"], Times(x.data, mask), 1e-6, 1e-7);
}

TEST_P(NnDropoutTest, SeedsAreDeterministicAndDiffer) {
  TestTensor x = Random({1000}, GetParam(), 0.5, 1, 5);
  auto a = DropoutOp(x, 0.5f, false, "downgrade_in_infer", 1).Run();
  auto b = DropoutOp(x, 0.5f, false, "downgrade_in_infer", 1).Run();
  auto c = DropoutOp(x, 0.5f, false, "downgrade_in_infer", 2).Run();
  EXPECT_EQ(a["mask"].data, b["mask"].data);
  EXPECT_NE(a["mask"].data, c["mask"].data);
  // Unseeded runs draw fresh masks.
  auto u1 = DropoutOp(x, 0.5f, false, "downgrade_in_infer", 1, false).Run();
  auto u2 = DropoutOp(x, 0.5f, false, "downgrade_in_infer", 1, false).Run();
  EXPECT_NE(u1["mask"].data, u2["mask"].data);
}

TEST_P(NnDropoutTest, InferenceScalesOrPassesThrough) {
  TestTensor x = Random({4, 5}, GetParam(), -1, 1, 6);
  auto down = DropoutOp(x, 0.4f, true, "downgrade_in_infer").Run();
  std::vector<double> want;
  for (double v : x.data) want.push_back(v * double(1.0f - 0.4f));
  ExpectNear(down["out"], want, FwdTol(GetParam()), 0);
  ExpectNear(down["mask"], std::vector<double>(20, double(1.0f - 0.4f)), FwdTol(GetParam()), 0);
  auto up = DropoutOp(x, 0.4f, true, "upscale_in_train").Run();
  ExpectNear(up["out"], x.data, 0, 0);
}

TEST_P(NnDropoutTest, ProbabilityOneAndZero) {
  TestTensor x = Random({3, 7}, GetParam(), -1, 1, 7);
  auto all = DropoutOp(x, 1.0f, false, "upscale_in_train").Run();
  ExpectNear(all["out"], std::vector<double>(21, 0.0), 0, 0);
  ExpectNear(all["mask"], std::vector<double>(21, 0.0), 0, 0);
  auto none = DropoutOp(x, 0.0f, false, "downgrade_in_infer").Run();
  ExpectNear(none["out"], x.data, 0, 0);
}

TEST_P(NnDropoutTest, GradIsDOutTimesMask) {
  GradTolerances t = GradTols(GetParam());
  for (const char* impl : {"downgrade_in_infer", "upscale_in_train"}) {
    SCOPED_TRACE(impl);
    DropoutOp(Random({6, 5}, GetParam(), -1, 1, 8), 0.5f, false, impl, 3)
        .CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
    DropoutOp(Random({6, 5}, GetParam(), -1, 1, 8), 0.5f, true, impl, 3)
        .CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
  }
  // Explicitly: with dOut = g, dX = g * Mask.
  NnOp op = DropoutOp(Random({50}, GetParam(), -1, 1, 9), 0.5f, false, "upscale_in_train", 5);
  core::OpDesc fwd;
  core::ProgramDesc prog = op.Build(&fwd);
  core::BlockDesc* b = prog.MutableBlock(0);
  core::VarDesc* dv = b->Var("out@GRAD");
  dv->set_dtype(GetParam());
  dv->set_shape({50});
  for (const auto& g : core::MakeGradOps(fwd, {})) AppendChecked(b, g);
  auto feeds = op.feeds();
  feeds["out@GRAD"] = Random({50}, GetParam(), -1, 1, 10);
  auto got = RunProgram(prog, feeds, {"x@GRAD", "mask"});
  ExpectNear(got["x@GRAD"], Times(feeds["out@GRAD"].data, got["mask"].data), 1e-6, 0);
  double zeros = 0;
  for (double m : got["mask"].data) zeros += m == 0;
  EXPECT_GT(zeros, 5);
  EXPECT_LT(zeros, 45);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnDropoutTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnDropoutErrors, ProbabilityOutOfRange) {
  ExpectThrows([] { DropoutOp(Random({3}, TIDE_FP32), 1.5f, false, "downgrade_in_infer").Run(); },
               {"dropout", "dropout_prob", "[0, 1]"});
  ExpectThrows([] { DropoutOp(Random({3}, TIDE_FP32), 0.5f, false, "scale").Run(); },
               {"dropout", "dropout_implementation", "scale"});
}

}  // namespace
}  // namespace tide::test::nn
