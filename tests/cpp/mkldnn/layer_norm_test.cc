// layer_norm_test.cc: the oneDNN layer_norm kernel and its grad (layer_norm_kernels.cc) against a
// float64 loop of Fluid's formulas: begin_norm_axis 1 and inner, Scale and Bias each given or
// not, fed plain and blocked; Mean / Variance also against the plain kernel's; X smaller than
// the speed rule's bound runs the plain kernel.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct LnCase {
  const char* name;
  std::vector<int64_t> x;
  int32_t axis;
  bool scale, bias;
};

std::ostream& operator<<(std::ostream& os, const LnCase& c) { return os << c.name; }

const LnCase kCases[] = {
    {"rows_of_1024", {8, 16, 64}, 1, true, true},
    {"rows_of_64", {8, 16, 64}, 2, true, true},
    {"feature_maps", {2, 16, 16, 16}, 1, true, true},
    {"inner_axis_4d", {2, 16, 16, 16}, 3, true, true},
    {"scale_only", {64, 128}, 1, true, false},
    {"bias_only", {64, 128}, 1, false, true},
    {"no_affine", {64, 128}, 1, false, false},
};

struct Split {
  int64_t left = 1, right = 1;
};

Split SplitOf(const LnCase& k) {
  Split s;
  for (size_t i = 0; i < k.x.size(); ++i)
    (static_cast<int>(i) < k.axis ? s.left : s.right) *= k.x[i];
  return s;
}

constexpr double kEps = 1e-5;

struct Inputs {
  TestTensor x, scale, bias;
};

Inputs InputsOf(const LnCase& k, unsigned seed) {
  const Split s = SplitOf(k);
  Inputs in;
  in.x = Random(k.x, TIDE_FP32, -2, 3, seed);
  in.scale = Random({s.right}, TIDE_FP32, 0.5, 1.5, seed + 1);
  in.bias = Random({s.right}, TIDE_FP32, -1, 1, seed + 2);
  return in;
}

// Y, Mean and Variance of Fluid's layer_norm, in float64.
struct Forward {
  TestTensor y, mean, var;
};

Forward Reference(const LnCase& k, const Inputs& in) {
  const Split s = SplitOf(k);
  Forward f{in.x, Values({s.left}, std::vector<double>(s.left)),
            Values({s.left}, std::vector<double>(s.left))};
  for (int64_t r = 0; r < s.left; ++r) {
    const double* x = &in.x.data[r * s.right];
    double m = 0, v = 0;
    for (int64_t i = 0; i < s.right; ++i) m += x[i];
    m /= s.right;
    for (int64_t i = 0; i < s.right; ++i) v += (x[i] - m) * (x[i] - m);
    v /= s.right;
    f.mean.data[r] = m;
    f.var.data[r] = v;
    for (int64_t i = 0; i < s.right; ++i)
      f.y.data[r * s.right + i] =
          (x[i] - m) / std::sqrt(v + kEps) * (k.scale ? in.scale.data[i] : 1.0) +
          (k.bias ? in.bias.data[i] : 0.0);
  }
  return f;
}

// dX, dScale, dBias of Fluid's layer_norm for Y@GRAD `dy`, in float64.
std::map<std::string, TestTensor> ReferenceGrad(const LnCase& k, const Inputs& in,
                                                const TestTensor& dy) {
  const Split s = SplitOf(k);
  const Forward f = Reference(k, in);
  TestTensor dx = in.x, ds = in.scale, db = in.bias;
  std::fill(ds.data.begin(), ds.data.end(), 0.0);
  std::fill(db.data.begin(), db.data.end(), 0.0);
  for (int64_t r = 0; r < s.left; ++r) {
    const double rstd = 1 / std::sqrt(f.var.data[r] + kEps);
    double m1 = 0, m2 = 0;  // means of dy * scale and dy * scale * xhat
    for (int64_t i = 0; i < s.right; ++i) {
      const int64_t e = r * s.right + i;
      const double xhat = (in.x.data[e] - f.mean.data[r]) * rstd;
      const double g = dy.data[e] * (k.scale ? in.scale.data[i] : 1.0);
      m1 += g / s.right;
      m2 += g * xhat / s.right;
      ds.data[i] += dy.data[e] * xhat;
      db.data[i] += dy.data[e];
    }
    for (int64_t i = 0; i < s.right; ++i) {
      const int64_t e = r * s.right + i;
      const double xhat = (in.x.data[e] - f.mean.data[r]) * rstd;
      const double g = dy.data[e] * (k.scale ? in.scale.data[i] : 1.0);
      dx.data[e] = rstd * (g - m1 - xhat * m2);
    }
  }
  return {{"x", dx}, {"scale", ds}, {"bias", db}};
}

OneOp LnOp(const LnCase& k, const Inputs& in) {
  OneOp op("layer_norm");
  op.Input("X", "x", in.x);
  if (k.scale) op.Input("Scale", "scale", in.scale);
  if (k.bias) op.Input("Bias", "bias", in.bias);
  return op.Output("Y", "y")
      .Output("Mean", "mean")
      .Output("Variance", "variance")
      .Attr("begin_norm_axis", k.axis)
      .Attr("epsilon", static_cast<float>(kEps));
}

class MkldnnLayerNorm : public ::testing::TestWithParam<LnCase> {};

TEST_P(MkldnnLayerNorm, ForwardMatchesFloat64ReferenceAndPlainStatistics) {
  const LnCase& k = GetParam();
  const Inputs in = InputsOf(k, 31);
  const Forward want = Reference(k, in);
  OneOp op = LnOp(k, in);
  op.CheckForward(1e-5,
                  1e-5);  // every output, Mean and Variance included, against the plain kernel's
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = op.MakeNet().Run(op.OutVars(), /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanMkldnn(got, "layer_norm"));
    EXPECT_TRUE(Close(got.values.at("y"), want.y, 1e-5, 2e-5));
    EXPECT_TRUE(Close(got.values.at("mean"), want.mean, 1e-5, 1e-6));
    EXPECT_TRUE(Close(got.values.at("variance"), want.var, 1e-5, 1e-6));
  }
}

TEST_P(MkldnnLayerNorm, GradMatchesFloat64Reference) {
  const LnCase& k = GetParam();
  const Inputs in = InputsOf(k, 32);
  const TestTensor dy = Random(k.x, TIDE_FP32, -1, 1, 35);
  const auto want = ReferenceGrad(k, in, dy);
  std::vector<std::string> wrt = {"x"};
  if (k.scale) wrt.push_back("scale");
  if (k.bias) wrt.push_back("bias");
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Net net = LnOp(k, in).MakeNet();
    net.Backward("y", dy);
    std::vector<std::string> fetch;
    for (const auto& w : wrt) fetch.push_back(core::GradVarName(w));
    Result got = net.Run(fetch, /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanMkldnn(got, "layer_norm_grad"));
    for (const auto& w : wrt) {
      EXPECT_EQ(got.layouts.at(core::GradVarName(w)), TIDE_LAYOUT_ANY);
      // dScale / dBias sum over the rows: their absolute error grows with the row count.
      EXPECT_TRUE(Close(got.values.at(core::GradVarName(w)), want.at(w), 1e-4, 1e-4)) << w;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnLayerNorm, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<LnCase>& i) {
                           return std::string(i.param.name);
                         });

// Below 4096 elements (README.md, "Speed") the oneDNN kernels decline and the plain ones run,
// with the same results.
TEST(MkldnnLayerNorm, SmallXRunsThePlainKernels) {
  const LnCase k{"small", {16, 64}, 1, true, true};
  const Inputs in = InputsOf(k, 33);
  const TestTensor dy = Random(k.x, TIDE_FP32, -1, 1, 34);
  Net net = LnOp(k, in).MakeNet();
  net.Backward("y", dy);
  Result got = net.Run({"y", "x@GRAD"}, /*mkldnn=*/true);
  EXPECT_TRUE(RanPlain(got, "layer_norm"));
  EXPECT_TRUE(RanPlain(got, "layer_norm_grad"));
  EXPECT_TRUE(Close(got.values.at("y"), Reference(k, in).y, 1e-5, 2e-5));
  EXPECT_TRUE(Close(got.values.at("x@GRAD"), ReferenceGrad(k, in, dy).at("x"), 1e-4, 1e-4));
}

}  // namespace
}  // namespace tide::test::mkldnn
