// fluid_semantics_test.cc: the CUDA kernels of issue 14's Fluid semantics against the same ops on
// the CPU, float32 and float64, outputs and grads: lrn, bilinear_interp / nearest_interp and
// group_norm in NHWC (also checked against their NCHW runs transposed), maxout on either axis,
// uniform_random / gaussian_random's ShapeTensor and ShapeTensorList, top_k's K input.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

// [N, C, H, W] -> [N, H, W, C].
TestTensor ToNhwc(const TestTensor& t) {
  const int64_t n = t.dims[0], c = t.dims[1], h = t.dims[2], w = t.dims[3];
  TestTensor out = t;
  out.dims = {n, h, w, c};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out.data[((b * h + y) * w + x) * c + ch] = t.data[((b * c + ch) * h + y) * w + x];
  return out;
}

::testing::AssertionResult Says(const std::exception& e, const std::string& text) {
  if (std::string(e.what()).find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the error \"" << e.what() << "\" does not say \"" << text << "\"";
}

class GpuFluidSemanticsTest : public GpuDtypeTest {
 protected:
  // `nhwc` (X fed as ToNhwc of `nchw`'s X) on the GPU gives `nchw`'s CPU outputs transposed.
  void ExpectNhwcIsNchwTransposed(const OpCase& nchw, const OpCase& nhwc,
                                  const std::vector<std::string>& outs) const {
    auto want = nchw.Run(Cpu());
    auto got = nhwc.Run(Gpu());
    for (const auto& o : outs) ExpectClose(got[o], ToNhwc(want[o]), Loose(), nhwc.type() + " " + o);
  }
};

TEST_P(GpuFluidSemanticsTest, LrnNhwcMatchesCpu) {
  TIDE_REQUIRE_OP("lrn");
  for (int32_t n : {1, 3, 5})
    for (const char* format : {"NCHW", "NHWC"}) {
      SCOPED_TRACE(std::string(format) + " n " + std::to_string(n));
      const TestTensor x = R({2, 7, 3, 4}, 11, -2, 2);
      auto lrn = [&](const TestTensor& in, const char* f) {
        OpCase c("lrn");
        c.In("X", "x", in)
            .Out("Out", "out")
            .Out("MidOut", "mid")
            .Attr("n", n)
            .Attr("k", 1.5f)
            .Attr("alpha", 0.2f)
            .Attr("beta", 0.75f)
            .Attr("data_format", std::string(f));
        return c;
      };
      const OpCase c = lrn(std::string(format) == "NHWC" ? ToNhwc(x) : x, format);
      Both(c, {"x"}, {"out"});
      if (std::string(format) == "NHWC")
        ExpectNhwcIsNchwTransposed(lrn(x, "NCHW"), c, {"out", "mid"});
    }
}

TEST_P(GpuFluidSemanticsTest, InterpolationsNhwcMatchCpu) {
  TIDE_REQUIRE_OP("bilinear_interp");
  for (const char* op : {"bilinear_interp", "nearest_interp"})
    for (bool corners : {true, false})
      for (bool out_size : {false, true}) {
        SCOPED_TRACE(std::string(op) + (corners ? " align_corners" : "") +
                     (out_size ? " OutSize" : ""));
        const TestTensor x = R({2, 3, 4, 5}, 7);
        auto interp = [&](const TestTensor& in, const char* layout) {
          OpCase c(op);
          c.In("X", "x", in)
              .Out("Out", "out")
              .Attr("out_h", int32_t(7))
              .Attr("out_w", int32_t(3))
              .Attr("align_corners", corners)
              .Attr("align_mode", int32_t(corners ? 1 : 0))
              .Attr("data_layout", std::string(layout));
          if (out_size) c.In("OutSize", "size", Values({2}, {5, 6}, TIDE_INT32));
          return c;
        };
        const OpCase c = interp(ToNhwc(x), "NHWC");
        Both(c, {"x"}, {"out"});
        ExpectNhwcIsNchwTransposed(interp(x, "NCHW"), c, {"out"});
      }
}

TEST_P(GpuFluidSemanticsTest, GroupNormNhwcMatchesCpu) {
  TIDE_REQUIRE_OP("group_norm");
  for (int32_t groups : {1, 2, 6})
    for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 3, 4, 6}, {3, 5, 6}, {4, 6}}) {
      SCOPED_TRACE("groups " + std::to_string(groups) + " X " + DimsStr(dims));
      OpCase c("group_norm");
      c.In("X", "x", R(dims, 3))
          .In("Scale", "scale", R({6}, 4, 0.5, 1.5))
          .In("Bias", "bias", R({6}, 5))
          .Out("Y", "y")
          .Out("Mean", "mean")
          .Out("Variance", "var")
          .Attr("groups", groups)
          .Attr("epsilon", 1e-5f)
          .Attr("data_layout", std::string("NHWC"));
      Both(c, {"x", "scale", "bias"}, {"y"});
    }
  const TestTensor x = R({2, 6, 3, 4}, 6);
  OpCase nchw("group_norm"), nhwc("group_norm");
  nchw.In("X", "x", x)
      .Out("Y", "y")
      .Out("Mean", "m", false)
      .Out("Variance", "v", false)
      .Attr("groups", int32_t(3));
  nhwc.In("X", "x", ToNhwc(x))
      .Out("Y", "y")
      .Out("Mean", "m", false)
      .Out("Variance", "v", false)
      .Attr("groups", int32_t(3))
      .Attr("data_layout", std::string("NHWC"));
  ExpectNhwcIsNchwTransposed(nchw, nhwc, {"y"});
}

TEST_P(GpuFluidSemanticsTest, MaxoutOnEitherAxisMatchesCpu) {
  TIDE_REQUIRE_OP("maxout");
  for (int32_t axis : {1, 3, -1})
    for (int32_t groups : {1, 2, 3}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + " groups " + std::to_string(groups));
      const std::vector<int64_t> dims =
          axis == 1 ? std::vector<int64_t>{2, 6, 3, 5} : std::vector<int64_t>{2, 3, 5, 6};
      OpCase c("maxout");
      c.In("X", "x", R(dims, 9)).Out("Out", "out").Attr("groups", groups).Attr("axis", axis);
      Both(c, {"x"}, {"out"});
    }
  // Ties: the gradient goes to the first channel of the group holding the max.
  OpCase tie("maxout");
  tie.In("X", "x", Values({1, 1, 1, 4}, {3, 3, 2, 2}, t()))
      .Out("Out", "out")
      .Attr("groups", int32_t(2))
      .Attr("axis", int32_t(3));
  Both(tie, {"x"}, {"out"});
  auto grads = tie.RunGrad(Gpu(), {"x"}, {{"out", Values({1, 1, 1, 2}, {5, 7}, t())}});
  EXPECT_EQ(grads["x"].data, (std::vector<double>{5, 0, 7, 0}));
}

TEST_P(GpuFluidSemanticsTest, RandomOpsTakeShapeTensors) {
  TIDE_REQUIRE_OP("uniform_random");
  for (const char* op : {"uniform_random", "gaussian_random"})
    for (int source = 0; source < 3; ++source) {  // ShapeTensor, ShapeTensorList, both
      SCOPED_TRACE(std::string(op) + " source " + std::to_string(source));
      OpCase c(op);
      c.Out("Out", "out")
          .Attr("shape", std::vector<int64_t>{3, 3})
          .Attr("seed", int32_t(9))
          .Attr("dtype", int32_t(t()));
      if (source != 1) c.In("ShapeTensor", "shape", Values({2}, {40, 50}, TIDE_INT64));
      if (source != 0) {
        c.In("ShapeTensorList", "d0", Values({1}, {6}, TIDE_INT32));
        c.In("ShapeTensorList", "d1", Values({1}, {70}, TIDE_INT64));
      }
      const std::vector<int64_t> want =
          source == 1 ? std::vector<int64_t>{6, 70} : std::vector<int64_t>{40, 50};
      TestTensor a = c.Run(Gpu())["out"];
      EXPECT_EQ(a.dims, want);
      EXPECT_EQ(a.data, c.Run(Gpu())["out"].data) << "a seeded op must repeat its numbers";
      const double mean = std::accumulate(a.data.begin(), a.data.end(), 0.0) / a.data.size();
      if (std::string(op) == "uniform_random") {
        for (double v : a.data) ASSERT_TRUE(v >= -1 && v < 1) << v;
        EXPECT_NEAR(mean, 0.0, 0.1);
      } else {
        EXPECT_NEAR(mean, 0.0, 0.15);
      }
    }
  OpCase negative("uniform_random");
  negative.Out("Out", "out").In("ShapeTensor", "shape", Values({2}, {4, -2}, TIDE_INT32));
  try {
    negative.Run(Gpu());
    ADD_FAILURE() << "a negative dim must be refused";
  } catch (const std::exception& e) {
    EXPECT_TRUE(Says(e, "op 'uniform_random': ShapeTensor [4, -2] has a negative dim"));
  }
}

TEST_P(GpuFluidSemanticsTest, TopKTakesK) {
  TIDE_REQUIRE_OP("top_k");
  for (TideDataType kt : {TIDE_INT32, TIDE_INT64})
    for (int64_t k : {1, 4, 9}) {
      SCOPED_TRACE("k " + std::to_string(k));
      OpCase c("top_k");
      c.In("X", "x", R({3, 2, 9}, 13))
          .In("K", "k", Values({1}, {double(k)}, kt))
          .Out("Out", "out")
          .Out("Indices", "idx")
          .Attr("k", int32_t(2));  // K wins
      ExpectGpuMatchesCpu(c, Loose());
      ExpectGpuGradsMatchCpu(c, {"x"}, {"out"}, Loose());
      EXPECT_EQ(c.Run(Gpu())["out"].dims, (std::vector<int64_t>{3, 2, k}));
    }
  OpCase big("top_k");
  big.In("X", "x", R({2, 3}, 1))
      .In("K", "k", Values({1}, {4}, TIDE_INT32))
      .Out("Out", "out")
      .Out("Indices", "idx");
  try {
    big.Run(Gpu());
    ADD_FAILURE() << "k beyond the last dim must be refused";
  } catch (const std::exception& e) {
    EXPECT_TRUE(Says(e, "op 'top_k': k = 4 must be in [1, the last dim of X [2, 3]]"));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuFluidSemanticsTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
