// concat_lrn_test.cc: the oneDNN concat and lrn kernels against the plain ones (ops_nn), fed
// plain and blocked; the plain lrn_grad on the oneDNN lrn's MidOut. Skipped while no loaded op
// pack defines the op.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct ConcatCase {
  const char* name;
  std::vector<std::vector<int64_t>> xs;
  int32_t axis;
};

std::ostream& operator<<(std::ostream& os, const ConcatCase& c) { return os << c.name; }

const ConcatCase kConcatCases[] = {
    {"channels_blocked", {{2, 8, 4, 4}, {2, 16, 4, 4}, {2, 8, 4, 4}}, 1},
    {"channels_odd", {{2, 3, 4, 4}, {2, 5, 4, 4}}, 1},
    {"channels_mixed", {{1, 16, 3, 3}, {1, 3, 3, 3}}, 1},
    {"batch", {{1, 8, 2, 2}, {3, 8, 2, 2}}, 0},
    {"width_negative_axis", {{2, 8, 3, 2}, {2, 8, 3, 5}}, -1},
    {"fc_features", {{4, 3}, {4, 7}}, 1},
    {"with_empty", {{2, 0, 3, 3}, {2, 8, 3, 3}}, 1},
};

class MkldnnConcat : public ::testing::TestWithParam<ConcatCase> {};

TEST_P(MkldnnConcat, ForwardMatchesPlain) {
  TIDE_SKIP_WITHOUT_OP("concat");
  const ConcatCase& k = GetParam();
  OneOp op("concat");
  unsigned seed = 61;
  for (size_t i = 0; i < k.xs.size(); ++i)
    op.Input("X", "x" + std::to_string(i), Random(k.xs[i], TIDE_FP32, -1, 1, seed++));
  op.Output("Out", "out").Attr("axis", k.axis);
  op.CheckForward(0, 0);  // a concat moves values: exact
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnConcat, ::testing::ValuesIn(kConcatCases),
                         [](const ::testing::TestParamInfo<ConcatCase>& i) {
                           return std::string(i.param.name);
                         });

struct LrnCase {
  const char* name;
  std::vector<int64_t> x;
  int32_t n;
  float k, alpha, beta;
};

std::ostream& operator<<(std::ostream& os, const LrnCase& c) { return os << c.name; }

const LrnCase kLrnCases[] = {
    {"fluid_defaults", {2, 16, 4, 4}, 5, 2.0f, 1e-4f, 0.75f},
    {"strong", {2, 16, 3, 3}, 5, 1.0f, 0.5f, 0.75f},
    {"n3_c3", {1, 3, 4, 5}, 3, 2.0f, 0.3f, 0.5f},
    {"n7_wider_than_c", {2, 6, 2, 3}, 7, 1.5f, 0.2f, 0.9f},
};

class MkldnnLrn : public ::testing::TestWithParam<LrnCase> {};

TEST_P(MkldnnLrn, ForwardMatchesPlain) {
  TIDE_SKIP_WITHOUT_OP("lrn");
  const LrnCase& c = GetParam();
  OneOp("lrn")
      .Input("X", "x", Random(c.x, TIDE_FP32, -2, 2, 71))
      .Output("Out", "out")
      .Output("MidOut", "mid")
      .Attr("n", c.n)
      .Attr("k", c.k)
      .Attr("alpha", c.alpha)
      .Attr("beta", c.beta)
      .CheckForward(1e-5, 1e-6);
}

// The plain lrn_grad reads the oneDNN kernel's MidOut.
TEST_P(MkldnnLrn, PlainGradOfOneDnnForwardMatchesPlain) {
  TIDE_SKIP_WITHOUT_OP("lrn");
  const LrnCase& c = GetParam();
  Net net;
  net.Feed("x", Random(c.x, TIDE_FP32, -2, 2, 72));
  net.Op("lrn", {{"X", {"x"}}}, {{"Out", {"out"}}, {"MidOut", {"mid"}}},
         {{"n", c.n}, {"k", c.k}, {"alpha", c.alpha}, {"beta", c.beta}});
  net.Backward("out", Random(c.x, TIDE_FP32, -1, 1, 73));
  Result want = net.Run({"x@GRAD"}, false);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = net.Run({"x@GRAD"}, true, feed);
    EXPECT_TRUE(RanMkldnn(got, "lrn"));
    EXPECT_TRUE(Close(got.values.at("x@GRAD"), want.values.at("x@GRAD"), 1e-4, 1e-6));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnLrn, ::testing::ValuesIn(kLrnCases),
                         [](const ::testing::TestParamInfo<LrnCase>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace tide::test::mkldnn
