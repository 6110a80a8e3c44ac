// nn_lrn_test.cc: lrn (Out and MidOut) against a float64 loop of Fluid's formula; its grad against
// finite differences.
#include <cmath>

#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

void RefLrn(const TestTensor& x, int n, double k, double alpha, double beta,
            std::vector<double>* out, std::vector<double>* mid) {
  int64_t N = x.dims[0], C = x.dims[1], HW = x.dims[2] * x.dims[3];
  out->assign(x.data.size(), 0);
  mid->assign(x.data.size(), 0);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < HW; ++i) {
        double s = 0;
        for (int64_t cc = c - (n - 1) / 2; cc <= c + (n - 1) / 2; ++cc)
          if (cc >= 0 && cc < C) s += x.data[(b * C + cc) * HW + i] * x.data[(b * C + cc) * HW + i];
        int64_t e = (b * C + c) * HW + i;
        (*mid)[e] = k + alpha * s;
        (*out)[e] = x.data[e] * std::pow((*mid)[e], -beta);
      }
}

NnOp LrnOp(const TestTensor& x, int n, float k, float alpha, float beta) {
  return NnOp("lrn")
      .In("X", "x", x)
      .Out("Out", "out")
      .Out("MidOut", "mid")
      .Attr("n", int32_t(n))
      .Attr("k", k)
      .Attr("alpha", alpha)
      .Attr("beta", beta);
}

class NnLrnTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnLrnTest, ForwardMatchesReference) {
  struct C {
    int n;
    float k, alpha, beta;
  } cases[] = {{5, 2.0f, 1e-4f, 0.75f},
               {3, 1.0f, 0.5f, 0.75f},
               {1, 1.5f, 0.3f, 0.5f},
               {7, 1.0f, 0.2f, 1.0f}};
  TestTensor x = Random({2, 6, 3, 2}, GetParam(), -2, 2, 3);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.n);
    std::vector<double> want_out, want_mid;
    RefLrn(x, c.n, c.k, c.alpha, c.beta, &want_out, &want_mid);
    auto out = LrnOp(x, c.n, c.k, c.alpha, c.beta).Run();
    EXPECT_EQ(out["out"].dims, x.dims);
    ExpectNear(out["mid"], want_mid, FwdTol(GetParam()), FwdTol(GetParam()));
    ExpectNear(out["out"], want_out, FwdTol(GetParam()), FwdTol(GetParam()));
  }
}

TEST_P(NnLrnTest, GradMatchesFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  TestTensor x = Random({2, 5, 2, 2}, GetParam(), -1, 1, 4);
  LrnOp(x, 3, 1.0f, 0.5f, 0.75f).CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
  LrnOp(x, 5, 2.0f, 0.3f, 0.6f).CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnLrnTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnLrnShape, CompileTimeAndErrors) {
  auto got = CompileInfer("lrn", {{"X", "x", {-1, 8, 5, 5}}}, {{"Out", "o"}, {"MidOut", "m"}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 8, 5, 5}));
  EXPECT_EQ(got["m"].dims, (std::vector<int64_t>{-1, 8, 5, 5}));
  ExpectThrows(
      [] {
        CompileInfer("lrn", {{"X", "x", {8, 5, 5}}}, {{"Out", "o"}, {"MidOut", "m"}});
      },
      {"lrn", "4-D", "[8, 5, 5]"});
  ExpectThrows(
      [] {
        CompileInfer("lrn", {{"X", "x", {1, 8, 5, 5}}}, {{"Out", "o"}, {"MidOut", "m"}},
                     {{"n", int32_t(4)}});
      },
      {"lrn", "'n'", "odd", "4"});
}

}  // namespace
}  // namespace tide::test::nn
