// nn_pool_test.cc: pool2d (max/avg, paddings, global, ceil_mode, exclusive, adaptive) against a
// float64 loop written from Fluid 1.x's window rules, grads against finite differences.
#include <algorithm>
#include <array>
#include <numeric>
#include <random>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

struct PoolCase {
  const char* name;
  const char* type;  // "max" / "avg"
  int64_t n, c, h, w;
  int32_t kh, kw, sh, sw, ph, pw;
  bool global, ceil_mode, exclusive, adaptive;
  std::vector<int64_t> out_hw;  // the expected output size
};

const PoolCase kCases[] = {
    {"max2x2", "max", 2, 3, 6, 6, 2, 2, 2, 2, 0, 0, false, false, true, false, {3, 3}},
    {"max3x3_pad", "max", 1, 2, 7, 6, 3, 3, 2, 2, 1, 1, false, false, true, false, {4, 3}},
    {"avg_exclusive", "avg", 1, 2, 7, 6, 3, 3, 2, 2, 1, 1, false, false, true, false, {4, 3}},
    {"avg_inclusive", "avg", 1, 2, 7, 6, 3, 3, 2, 2, 1, 1, false, false, false, false, {4, 3}},
    {"avg_asym", "avg", 2, 1, 5, 8, 2, 3, 1, 2, 1, 0, false, false, true, false, {6, 3}},
    {"max_global", "max", 2, 3, 5, 4, 1, 1, 1, 1, 1, 1, true, false, true, false, {1, 1}},
    {"avg_global", "avg", 2, 3, 5, 4, -1, -1, 1, 1, 0, 0, true, false, false, false, {1, 1}},
    {"max_ceil", "max", 1, 2, 7, 7, 2, 2, 2, 2, 0, 0, false, true, true, false, {4, 4}},
    {"avg_ceil_exclusive", "avg", 1, 2, 7, 6, 3, 3, 2, 2, 0, 0, false, true, true, false, {3, 3}},
    {"avg_ceil_inclusive", "avg", 1, 2, 7, 6, 3, 3, 2, 2, 0, 0, false, true, false, false, {3, 3}},
    {"avg_adaptive", "avg", 1, 2, 7, 5, 3, 2, 1, 1, 0, 0, false, false, true, true, {3, 2}},
    {"max_adaptive", "max", 1, 2, 7, 5, 3, 2, 1, 1, 0, 0, false, false, true, true, {3, 2}},
    // 2x2 / 2 with a last row and column outside every window; 5 outputs a row (4 at once + 1).
    {"max2x2_odd", "max", 2, 3, 7, 11, 2, 2, 2, 2, 0, 0, false, false, true, false, {3, 5}},
    {"max2x2_wide", "max", 1, 2, 4, 20, 2, 2, 2, 2, 0, 0, false, false, true, false, {2, 10}},
    // ResNet's stem pool (3x3 / 2, padded) over odd sizes: the row-wise max's clipped edges.
    {"max3x3_pad_wide", "max", 1, 3, 13, 17, 3, 3, 2, 2, 1, 1, false, false, true, false, {7, 9}},
};

// Fluid 1.x: window [i*s - p, i*s - p + k) clipped to the image; avg divides by the clipped
// size (exclusive) or k*k; adaptive windows [floor(i*H/o), ceil((i+1)*H/o)).
std::vector<double> RefPool(const PoolCase& k, const TestTensor& x) {
  int64_t kh = k.global ? k.h : k.kh, kw = k.global ? k.w : k.kw;
  int64_t ph = k.global ? 0 : k.ph, pw = k.global ? 0 : k.pw;
  int64_t oh = k.out_hw[0], ow = k.out_hw[1];
  std::vector<double> out;
  for (int64_t p = 0; p < k.n * k.c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t y0, y1, x0, x1;
        if (k.adaptive) {
          y0 = (i * k.h) / oh;
          y1 = static_cast<int64_t>(std::ceil(double((i + 1) * k.h) / oh));
          x0 = (j * k.w) / ow;
          x1 = static_cast<int64_t>(std::ceil(double((j + 1) * k.w) / ow));
        } else {
          y0 = i * k.sh - ph;
          x0 = j * k.sw - pw;
          y1 = std::min(y0 + kh, k.h);
          x1 = std::min(x0 + kw, k.w);
          y0 = std::max<int64_t>(y0, 0);
          x0 = std::max<int64_t>(x0, 0);
        }
        double mx = -1e300, sum = 0;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t xx = x0; xx < x1; ++xx) {
            double v = x.data[(p * k.h + y) * k.w + xx];
            mx = std::max(mx, v);
            sum += v;
          }
        double div = (k.exclusive || k.adaptive) ? double((y1 - y0) * (x1 - x0)) : double(kh * kw);
        out.push_back(std::string(k.type) == "max" ? mx : sum / div);
      }
  return out;
}

// Values spaced `gap` apart in random order: no max-pool window has near-ties, so a finite
// difference step never changes which element wins.
TestTensor Distinct(std::vector<int64_t> dims, TideDataType dt, double gap, unsigned seed) {
  TestTensor t = Random(dims, dt, 0, 1, seed);
  std::vector<double> v(t.data.size());
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (size_t i = 0; i < v.size(); ++i) t.data[i] = (v[i] - double(v.size()) / 2) * gap;
  return t;
}

NnOp PoolOp(const PoolCase& k, TestTensor x) {
  return NnOp("pool2d")
      .In("X", "x", std::move(x))
      .Out("Out", "out")
      .Attr("pooling_type", std::string(k.type))
      .Attr("ksize", std::vector<int32_t>{k.kh, k.kw})
      .Attr("strides", std::vector<int32_t>{k.sh, k.sw})
      .Attr("paddings", std::vector<int32_t>{k.ph, k.pw})
      .Attr("global_pooling", k.global)
      .Attr("ceil_mode", k.ceil_mode)
      .Attr("exclusive", k.exclusive)
      .Attr("adaptive", k.adaptive);
}

// pool2d's Out and X@GRAD (keys "out", "x@GRAD") for x, with Out@GRAD = dout.
std::map<std::string, TestTensor> RunPoolWithGrad(const PoolCase& k, TestTensor x,
                                                  TestTensor dout) {
  const NnOp op = PoolOp(k, std::move(x));
  auto got = op.Run();
  got["x@GRAD"] = op.RunGrad(core::Place("cpu", 0), {"x"}, {{"out", std::move(dout)}})["x"];
  return got;
}

class NnPool2dTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnPool2dTest, ForwardMatchesReference) {
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    TestTensor x = Random({k.n, k.c, k.h, k.w}, GetParam(), -1, 1, 5);
    auto out = PoolOp(k, x).Run();
    EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{k.n, k.c, k.out_hw[0], k.out_hw[1]}));
    ExpectNear(out["out"], RefPool(k, x), FwdTol(GetParam()), FwdTol(GetParam()));
  }
}

TEST_P(NnPool2dTest, ExclusiveChangesOnlyPaddedWindows) {
  // 3x3 windows, padding 1: the corner window holds 4 image cells, an interior one 9.
  PoolCase k = kCases[2];
  TestTensor ones = Values({1, 1, 3, 3}, std::vector<double>(9, 1.0), GetParam());
  k.n = k.c = 1;
  k.h = k.w = 3;
  k.sh = k.sw = 1;
  k.out_hw = {3, 3};
  auto excl = PoolOp(k, ones).Run()["out"];
  ExpectNear(excl, std::vector<double>(9, 1.0));
  k.exclusive = false;
  auto incl = PoolOp(k, ones).Run()["out"];
  ExpectNear(incl, {4 / 9., 6 / 9., 4 / 9., 6 / 9., 1., 6 / 9., 4 / 9., 6 / 9., 4 / 9.},
             FwdTol(GetParam()), FwdTol(GetParam()));
}

TEST_P(NnPool2dTest, GradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    PoolCase small = k;
    small.n = 1;
    TestTensor x = Distinct({1, k.c, k.h, k.w}, GetParam(), 0.05, 7);
    PoolOp(small, x).CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
  }
}

TEST_P(NnPool2dTest, MaxGradGoesToTheFirstMaximum) {
  // Equal values in one window: Fluid routes the gradient to the first in scan order.
  PoolCase k = kCases[0];
  k.n = k.c = 1;
  k.h = k.w = 2;
  k.out_hw = {1, 1};
  auto got = RunPoolWithGrad(k, Values({1, 1, 2, 2}, {0.5, 2.0, 2.0, -1.0}, GetParam()),
                             Values({1, 1, 1, 1}, {3.0}, GetParam()));
  ExpectNear(got["out"], {2.0});
  ExpectNear(got["x@GRAD"], {0.0, 3.0, 0.0, 0.0});
}

TEST_P(NnPool2dTest, Max2x2TiesGoToTheFirstMaximum) {
  // 2x2 windows at stride 2 (pool_max2x2.h's loops, 4 windows at once and then one by one):
  // each window's gradient to its first maximum in scan order (a b / c d), whatever ties.
  const std::vector<std::array<double, 4>> windows = {
      {1, 1, 1, 1}, {0, 2, 2, 1},     {0, 1, 2, 2},
      {0, 1, 2, 3}, {3, 1, 3, 0},     {-0.0, 0.0, 0.0, -0.0},
      {1, 2, 1, 2}, {-5, -4, -3, -6}, {-1e30, -2e30, -1e30, -1e30}};
  const int64_t ow = static_cast<int64_t>(windows.size()), w = 2 * ow;
  std::vector<double> x(2 * w), go(ow), want_out(ow), want_dx(2 * w, 0.0);
  for (int64_t i = 0; i < ow; ++i) {
    const auto& v = windows[i];
    x[2 * i] = v[0];
    x[2 * i + 1] = v[1];
    x[w + 2 * i] = v[2];
    x[w + 2 * i + 1] = v[3];
    go[i] = 1.5 + i;
    int first = 0;
    for (int k = 1; k < 4; ++k)
      if (v[k] > v[first]) first = k;
    want_out[i] = v[first];
    want_dx[(first / 2) * w + 2 * i + first % 2] = go[i];
  }
  PoolCase k = kCases[0];
  k.n = k.c = 1;
  k.h = 2;
  k.w = w;
  k.out_hw = {1, ow};
  auto got = RunPoolWithGrad(k, Values({1, 1, 2, w}, x, GetParam()),
                             Values({1, 1, 1, ow}, go, GetParam()));
  ExpectNear(got["out"], want_out);
  ExpectNear(got["x@GRAD"], want_dx);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnPool2dTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnPool2dShape, CompileTimeShapes) {
  core::AttributeMap a{{"ksize", std::vector<int32_t>{2, 2}},
                       {"strides", std::vector<int32_t>{2, 2}}};
  auto got = CompileInfer("pool2d", {{"X", "x", {-1, 8, 7, -1}}}, {{"Out", "y"}}, a);
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 8, 3, -1}));
  a["ceil_mode"] = true;
  got = CompileInfer("pool2d", {{"X", "x", {-1, 8, 7, 9}, TIDE_FP64}}, {{"Out", "y"}}, a);
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 8, 4, 5}));
  EXPECT_EQ(got["y"].dtype, TIDE_FP64);
  a["global_pooling"] = true;
  got = CompileInfer("pool2d", {{"X", "x", {-1, 8, -1, -1}}}, {{"Out", "y"}}, a);
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 8, 1, 1}));
}

TEST(NnPool2dShape, Errors) {
  ExpectThrows(
      [] {
        CompileInfer("pool2d", {{"X", "x", {1, 8, 7, 7}}}, {{"Out", "y"}});
      },
      {"pool2d", "ksize"});
  ExpectThrows(
      [] {
        CompileInfer("pool2d", {{"X", "x", {1, 8, 7}}}, {{"Out", "y"}},
                     {{"ksize", std::vector<int32_t>{2, 2}}});
      },
      {"pool2d", "X must be 4-D", "[1, 8, 7]"});
  ExpectThrows(
      [] {
        CompileInfer("pool2d", {{"X", "x", {1, 8, 2, 2}}}, {{"Out", "y"}},
                     {{"ksize", std::vector<int32_t>{3, 3}}});
      },
      {"pool2d", "empty", "X [1, 8, 2, 2]", "ksize [3, 3]"});
  ExpectThrows(
      [] {
        CompileInfer("pool2d", {{"X", "x", {1, 8, 4, 4}}}, {{"Out", "y"}},
                     {{"ksize", std::vector<int32_t>{2, 2}}, {"pooling_type", std::string("sum")}});
      },
      {"pool2d", "pooling_type", "sum"});
}

}  // namespace
}  // namespace tide::test::nn
