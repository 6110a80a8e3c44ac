// fill_test.cc: the ops that make or copy tensors: fill_constant, fill_zeros_like, assign (and
// its grad), cast (values as C++'s static_cast gives them, and its grad), uniform_random and
// gaussian_random (ranges, moments, seeds).
#include <cmath>
#include <string>

#include "op_tester.h"

namespace tide::test {
namespace {

std::string TypeName(TideDataType t) { return core::DataTypeName(t); }

std::vector<double> Constant(size_t n, double v) { return std::vector<double>(n, v); }

// ---- fill_constant, fill_zeros_like ----

class FillTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(FillTest, FillConstantTakesShapeAndDtypeFromAttrs) {
  const bool is_int = GetParam() == TIDE_INT32 || GetParam() == TIDE_INT64;
  const float value = is_int ? -7.0f : 3.25f;
  auto out = OpTester("fill_constant")
                 .Output("Out", "out")
                 .Attr("shape", std::vector<int64_t>{2, 3, 4})
                 .Attr("dtype", int32_t(GetParam()))
                 .Attr("value", value)
                 .Run();
  EXPECT_EQ(out["out"].dtype, GetParam());
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 4}));
  ExpectNear(out["out"], Constant(24, value), 0, 0);
  // Shape as an int list (what Python hands over), and the default value 0.
  out = OpTester("fill_constant")
            .Output("Out", "out")
            .Attr("shape", std::vector<int32_t>{5})
            .Attr("dtype", int32_t(GetParam()))
            .Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{5}));
  EXPECT_EQ(out["out"].dtype, GetParam());
  ExpectNear(out["out"], Constant(5, 0), 0, 0);
}

TEST(FillConstant, IntegerDtypesTruncateTheFloatValue) {
  auto out = OpTester("fill_constant")
                 .Output("Out", "out")
                 .Attr("shape", std::vector<int64_t>{2})
                 .Attr("dtype", int32_t(TIDE_INT32))
                 .Attr("value", -2.75f)
                 .Run();
  ExpectNear(out["out"], {-2, -2}, 0, 0);
}

TEST(FillConstant, LargeFillUsesThePool) {
  auto out = OpTester("fill_constant")
                 .Output("Out", "out")
                 .Attr("shape", std::vector<int64_t>{300, 200})
                 .Attr("dtype", int32_t(TIDE_FP64))
                 .Attr("value", 0.5f)
                 .Run();
  ExpectNear(out["out"], Constant(60000, 0.5), 0, 0);
}

TEST_P(FillTest, FillZerosLikeCopiesDimsAndDtype) {
  TestTensor x = Random({3, 1, 4}, GetParam(), 1, 5, 1);
  auto out = OpTester("fill_zeros_like").Input("X", "x", x).Output("Out", "out").Run();
  EXPECT_EQ(out["out"].dims, x.dims);
  EXPECT_EQ(out["out"].dtype, GetParam());
  ExpectNear(out["out"], Constant(12, 0), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FillTest,
                         ::testing::Values(TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64),
                         DtypeParamName);

// ---- assign ----

class AssignTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(AssignTest, CopiesValuesDimsAndDtype) {
  TestTensor x;
  switch (GetParam()) {
    case TIDE_BOOL:
      x = Values({2, 3}, {1, 0, 0, 1, 1, 0}, TIDE_BOOL);
      break;
    case TIDE_UINT8:
      x = Values({2, 3}, {0, 1, 17, 128, 200, 255}, TIDE_UINT8);
      break;
    default:
      x = Random({2, 3}, GetParam(), -100, 100, 2);
  }
  x.lod = {{0, 1, 2}};
  auto out = OpTester("assign").Input("X", "x", x).Output("Out", "out").Run();
  EXPECT_EQ(out["out"].dims, x.dims);
  EXPECT_EQ(out["out"].dtype, GetParam());
  EXPECT_EQ(out["out"].lod, x.lod);
  ExpectNear(out["out"], x.data, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AssignTest,
                         ::testing::Values(TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64, TIDE_BOOL,
                                           TIDE_UINT8),
                         DtypeParamName);

class FloatFillTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(FloatFillTest, AssignGradMatchesFiniteDifferences) {
  GradTolerance g = GradTol(GetParam());
  OpTester("assign")
      .Input("X", "x", Random({3, 4}, GetParam(), -1, 1, 3))
      .Output("Out", "out")
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
}

// ---- cast ----

template <typename To, typename From>
double As(From v) {
  return static_cast<double>(static_cast<To>(v));
}

template <typename From>
double CastFrom(From v, TideDataType to) {
  switch (to) {
    case TIDE_FP32:
      return As<float>(v);
    case TIDE_FP64:
      return As<double>(v);
    case TIDE_INT32:
      return As<int32_t>(v);
    case TIDE_INT64:
      return As<int64_t>(v);
    case TIDE_BOOL:
      return As<bool>(v);
    default:
      ADD_FAILURE() << "no reference cast to " << TypeName(to);
      return 0;
  }
}

// What static_cast<to>(static_cast<from>(v)) gives.
double CastRef(double v, TideDataType from, TideDataType to) {
  switch (from) {
    case TIDE_FP32:
      return CastFrom(static_cast<float>(v), to);
    case TIDE_FP64:
      return CastFrom(v, to);
    case TIDE_INT32:
      return CastFrom(static_cast<int32_t>(v), to);
    case TIDE_INT64:
      return CastFrom(static_cast<int64_t>(v), to);
    case TIDE_BOOL:
      return CastFrom(static_cast<bool>(v), to);
    default:
      ADD_FAILURE() << "no reference cast from " << TypeName(from);
      return 0;
  }
}

TEST(Cast, EveryPairAsStaticCast) {
  const TideDataType kTypes[] = {TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64, TIDE_BOOL};
  for (TideDataType from : kTypes) {
    TestTensor x;
    if (from == TIDE_FP32 || from == TIDE_FP64)  // fractions of both signs: truncation toward 0
      x = Values({2, 4}, {-2.75, -1.5, -0.4, 0, 0.6, 1.9, 2.5, 100.25}, from);
    else if (from == TIDE_BOOL)
      x = Values({2, 4}, {0, 1, 1, 0, 1, 0, 0, 1}, from);
    else
      x = Values({2, 4}, {-7, -1, 0, 1, 2, 300, 41, -5}, from);
    for (TideDataType to : kTypes) {
      SCOPED_TRACE(TypeName(from) + " -> " + TypeName(to));
      auto out = OpTester("cast")
                     .Input("X", "x", x)
                     .Output("Out", "out")
                     .Attr("in_dtype", int32_t(from))
                     .Attr("out_dtype", int32_t(to))
                     .Run();
      EXPECT_EQ(out["out"].dtype, to);
      EXPECT_EQ(out["out"].dims, x.dims);
      std::vector<double> want;
      for (double v : x.data) want.push_back(CastRef(v, from, to));
      ExpectNear(out["out"], want, 0, 0);
    }
  }
}

TEST(Cast, Float64ToFloat32Rounds) {
  auto out = OpTester("cast")
                 .Input("X", "x", Values({2}, {0.1, 1e-50}, TIDE_FP64))
                 .Output("Out", "out")
                 .Attr("in_dtype", int32_t(TIDE_FP64))
                 .Attr("out_dtype", int32_t(TIDE_FP32))
                 .Run();
  ExpectNear(out["out"], {static_cast<double>(0.1f), 0}, 0, 0);
}

TEST(Cast, GradCastsBack) {
  for (auto [from, to] : {std::pair{TIDE_FP32, TIDE_FP64}, std::pair{TIDE_FP64, TIDE_FP32}}) {
    SCOPED_TRACE(TypeName(from) + " -> " + TypeName(to));
    // The looser dtype of the two sets the tolerance.
    GradTolerance g = GradTol(TIDE_FP32);
    OpTester("cast")
        .Input("X", "x", Random({2, 3}, from, -1, 1, 4))
        .Output("Out", "out")
        .Attr("in_dtype", int32_t(from))
        .Attr("out_dtype", int32_t(to))
        .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
  }
  GradTolerance g = GradTol(TIDE_FP64);
  OpTester("cast")
      .Input("X", "x", Random({2, 3}, TIDE_FP64, -1, 1, 5))
      .Output("Out", "out")
      .Attr("in_dtype", int32_t(TIDE_FP64))
      .Attr("out_dtype", int32_t(TIDE_FP64))
      .CheckGrad({"x"}, "out", g.rtol, g.atol, g.delta);
}

// ---- uniform_random, gaussian_random ----

constexpr int64_t kSamples = 10000;

TestTensor Draw(const char* op, TideDataType dtype, int32_t seed, float a, float b) {
  bool uniform = std::string(op) == "uniform_random";
  return OpTester(op)
      .Output("Out", "out")
      .Attr("shape", std::vector<int64_t>{100, kSamples / 100})
      .Attr("dtype", int32_t(dtype))
      .Attr("seed", seed)
      .Attr(uniform ? "min" : "mean", a)
      .Attr(uniform ? "max" : "std", b)
      .Run()["out"];
}

struct Moments {
  double mean, stddev;
};
Moments MomentsOf(const std::vector<double>& v) {
  double s = 0, s2 = 0;
  for (double x : v) s += x;
  double mean = s / static_cast<double>(v.size());
  for (double x : v) s2 += (x - mean) * (x - mean);
  return {mean, std::sqrt(s2 / static_cast<double>(v.size() - 1))};
}

size_t CountEqual(const std::vector<double>& a, const std::vector<double>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] == b[i];
  return n;
}

TEST_P(FloatFillTest, UniformRandomRangeAndMoments) {
  const double lo = -2, hi = 5;
  TestTensor t = Draw("uniform_random", GetParam(), 123, lo, hi);
  EXPECT_EQ(t.dtype, GetParam());
  EXPECT_EQ(t.dims, (std::vector<int64_t>{100, kSamples / 100}));
  ASSERT_EQ(t.numel(), kSamples);
  for (size_t i = 0; i < t.data.size(); ++i)
    ASSERT_TRUE(t.data[i] >= lo && t.data[i] < hi) << "sample " << i << " = " << t.data[i];
  // mean ~ (lo + hi) / 2 within 5 sigma, sigma = (hi - lo) / sqrt(12 n); std ~ (hi - lo) /
  // sqrt(12).
  Moments m = MomentsOf(t.data);
  const double sd = (hi - lo) / std::sqrt(12.0);
  EXPECT_NEAR(m.mean, (lo + hi) / 2, 5 * sd / std::sqrt(double(kSamples)));
  EXPECT_NEAR(m.stddev, sd, 0.05 * sd);
}

TEST_P(FloatFillTest, UniformRandomNeverReturnsMaxOnACoarseGrid) {
  // Near 10000 float's grid is ~1e-3 wide: lo + u * (hi - lo) rounds to hi for u close to 1
  // (about 1 draw in 2000 before the kernel redrew those).
  TestTensor t = Draw("uniform_random", GetParam(), 3, 10000, 10001);
  for (size_t i = 0; i < t.data.size(); ++i)
    ASSERT_TRUE(t.data[i] >= 10000 && t.data[i] < 10001) << "sample " << i << " = " << t.data[i];
  EXPECT_NEAR(MomentsOf(t.data).mean, 10000.5, 5 / std::sqrt(12.0 * kSamples));
}

TEST(UniformRandom, RangeTooWideForFloat32IsAnError) {
  // max - min overflows float32 (values would be inf / NaN).
  ExpectError([] { Draw("uniform_random", TIDE_FP32, 1, -3e38f, 3e38f); },
              {"uniform_random", "too wide", "float32"});
  // float64 holds it.
  TestTensor t = Draw("uniform_random", TIDE_FP64, 1, -3e38f, 3e38f);
  for (double v : t.data) ASSERT_TRUE(v >= -3e38f && v < 3e38f) << v;
}

TEST_P(FloatFillTest, UniformRandomSeeds) {
  TestTensor a = Draw("uniform_random", GetParam(), 7, 0, 1),
             b = Draw("uniform_random", GetParam(), 7, 0, 1);
  EXPECT_EQ(a.data, b.data) << "the same seed must repeat the same numbers";
  TestTensor c = Draw("uniform_random", GetParam(), 8, 0, 1);
  EXPECT_LT(CountEqual(a.data, c.data), size_t(10))
      << "different seeds gave (nearly) the same numbers";
  // Seed 0: a fresh seed on every run.
  TestTensor d = Draw("uniform_random", GetParam(), 0, 0, 1),
             e = Draw("uniform_random", GetParam(), 0, 0, 1);
  EXPECT_LT(CountEqual(d.data, e.data), size_t(10)) << "seed 0 repeated the same numbers";
}

TEST_P(FloatFillTest, UniformRandomMinNotBelowMaxIsAnError) {
  ExpectError([&] { Draw("uniform_random", GetParam(), 1, 2, 2); },
              {"uniform_random", "min", "max"});
  ExpectError([&] { Draw("uniform_random", GetParam(), 1, 3, -3); },
              {"uniform_random", "min", "max"});
}

TEST_P(FloatFillTest, GaussianRandomMoments) {
  const double mean = 1.5, sd = 2.0;
  TestTensor t = Draw("gaussian_random", GetParam(), 99, mean, sd);
  EXPECT_EQ(t.dtype, GetParam());
  ASSERT_EQ(t.numel(), kSamples);
  for (double v : t.data) ASSERT_TRUE(std::isfinite(v));
  Moments m = MomentsOf(t.data);
  // 5 sigma: sd / sqrt(n) for the mean, about sd / sqrt(2 n) for the standard deviation.
  EXPECT_NEAR(m.mean, mean, 5 * sd / std::sqrt(double(kSamples)));
  EXPECT_NEAR(m.stddev, sd, 5 * sd / std::sqrt(2.0 * kSamples));
}

TEST_P(FloatFillTest, GaussianRandomSeeds) {
  TestTensor a = Draw("gaussian_random", GetParam(), 5, 0, 1),
             b = Draw("gaussian_random", GetParam(), 5, 0, 1);
  EXPECT_EQ(a.data, b.data) << "the same seed must repeat the same numbers";
  TestTensor c = Draw("gaussian_random", GetParam(), 6, 0, 1);
  EXPECT_LT(CountEqual(a.data, c.data), size_t(10))
      << "different seeds gave (nearly) the same numbers";
}

TEST(GaussianRandom, NegativeStdIsAnError) {
  ExpectError([] { Draw("gaussian_random", TIDE_FP32, 1, 0, -1); }, {"gaussian_random", "std"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FloatFillTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParamName);

}  // namespace
}  // namespace tide::test
