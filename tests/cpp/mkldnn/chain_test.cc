// chain_test.cc: oneDNN ops in programs. A ResNet-like block (conv, batch_norm, relu, residual
// add, global pool, fc, softmax) all on oneDNN exchanges blocked tensors with no layout
// transform by the core and matches the plain program; a oneDNN op feeding an op without a
// oneDNN kernel goes through the plugin's ONEDNN -> plain transform; the grads of a LeNet-like
// chain match; --use_mkldnn selects the kernels without the attribute; and programs on oneDNN
// run concurrently from several threads (shared primitive cache, per-thread streams).
#include <thread>

#include "core/platform/flags.h"
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

using core::AttributeMap;
using core::GetFlag;
using core::SetFlag;

Net ResNetBlock() {
  const int64_t c = 16;
  Net net;
  net.Feed("x", Random({2, c, 8, 8}, TIDE_FP32, -1, 1, 81))
      .Feed("w1", Random({c, c, 3, 3}, TIDE_FP32, -0.3, 0.3, 82), false)
      .Feed("w2", Random({c, c, 3, 3}, TIDE_FP32, -0.3, 0.3, 83), false)
      .Feed("fc_w", Random({c, 10}, TIDE_FP32, -1, 1, 84))
      .Feed("fc_b", Random({10}, TIDE_FP32, -1, 1, 85));
  for (const char* bn : {"bn1", "bn2"}) {
    std::string p(bn);
    net.Feed(p + "_scale", Random({c}, TIDE_FP32, 0.5, 1.5, 86))
        .Feed(p + "_bias", Random({c}, TIDE_FP32, -0.5, 0.5, 87))
        .Feed(p + "_mean", Random({c}, TIDE_FP32, -0.1, 0.1, 88))
        .Feed(p + "_var", Random({c}, TIDE_FP32, 0.8, 1.2, 89));
  }
  const AttributeMap pad1{{"paddings", std::vector<int32_t>{1, 1}}};
  auto bn = [&](const std::string& p, const std::string& in, const std::string& out) {
    net.Op("batch_norm",
           {{"X", {in}},
            {"Scale", {p + "_scale"}},
            {"Bias", {p + "_bias"}},
            {"Mean", {p + "_mean"}},
            {"Variance", {p + "_var"}}},
           {{"Y", {out}},
            {"MeanOut", {p + "_mean"}},
            {"VarianceOut", {p + "_var"}},
            {"SavedMean", {p + "_saved_mean"}},
            {"SavedVariance", {p + "_saved_var"}}});
  };
  net.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"w1"}}}, {{"Output", {"c1"}}}, pad1);
  bn("bn1", "c1", "n1");
  net.Op("relu", {{"X", {"n1"}}}, {{"Out", {"r1"}}});
  net.Op("conv2d", {{"Input", {"r1"}}, {"Filter", {"w2"}}}, {{"Output", {"c2"}}}, pad1);
  bn("bn2", "c2", "n2");
  net.Op("elementwise_add", {{"X", {"n2"}}, {"Y", {"x"}}}, {{"Out", {"sum"}}});
  net.Op("relu", {{"X", {"sum"}}}, {{"Out", {"r2"}}});
  net.Op("pool2d", {{"X", {"r2"}}}, {{"Out", {"pooled"}}},
         {{"pooling_type", std::string("avg")},
          {"ksize", std::vector<int32_t>{1, 1}},
          {"global_pooling", true}});
  net.Op("mul", {{"X", {"pooled"}}, {"Y", {"fc_w"}}}, {{"Out", {"fc"}}});
  net.Op("elementwise_add", {{"X", {"fc"}}, {"Y", {"fc_b"}}}, {{"Out", {"logits"}}}, {{"axis", 1}});
  net.Op("softmax", {{"X", {"logits"}}}, {{"Out", {"prob"}}});
  return net;
}

const std::vector<std::string> kBlockFetch = {"c1",   "n1",       "r2",      "pooled",
                                              "prob", "bn1_mean", "bn2_var", "bn1_saved_var"};

TEST(MkldnnChain, ResNetBlockExchangesBlockedTensorsAndMatchesPlain) {
  Net net = ResNetBlock();
  Result want = net.Run(kBlockFetch, /*mkldnn=*/false);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = net.Run(kBlockFetch, /*mkldnn=*/true, feed);
    for (const char* op : {"conv2d", "batch_norm", "relu", "pool2d", "softmax"})
      EXPECT_TRUE(RanMkldnn(got, op));
    EXPECT_TRUE(RanPlain(got, "mul"))
        << "mul is the plain kernel's sgemm (devices/mkldnn/README.md)";
    std::vector<core::OpKernelType> adds;
    for (const auto& [type, key] : got.kernels)
      if (type == "elementwise_add") adds.push_back(key);
    ASSERT_EQ(adds.size(), 2u);
    EXPECT_EQ(adds[0].library, core::LibraryId("mkldnn")) << "the residual add of blocked data";
    EXPECT_EQ(adds[1].library, 0) << "the fc bias add of plain data runs the plain kernel (the "
                                     "oneDNN add's speed rule)";
    EXPECT_LE(got.counts.layouts, 1u)
        << "oneDNN ops read each other's blocked outputs without a transform by the core; only "
           "the globally pooled features may be made plain, for mul (ISAs differ: AVX-512 "
           "stores them plain already)";
    EXPECT_EQ(got.layouts.at("c1"), TIDE_LAYOUT_ONEDNN);
    EXPECT_EQ(got.layouts.at("n1"), TIDE_LAYOUT_ONEDNN);
    EXPECT_EQ(got.layouts.at("r2"), TIDE_LAYOUT_ONEDNN);
    for (const auto& v : kBlockFetch)
      EXPECT_TRUE(Close(got.values.at(v), want.values.at(v), 2e-4, 2e-4)) << v;
  }
}

TEST(MkldnnChain, OneDnnOutputFeedsAPlainKernelThroughTheTransform) {
  Net net;
  net.Feed("x", Random({2, 8, 6, 6}, TIDE_FP32, -1, 1, 91))
      .Feed("w", Random({16, 8, 3, 3}, TIDE_FP32, -1, 1, 92), false);
  net.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"w"}}}, {{"Output", {"c"}}},
         {{"paddings", std::vector<int32_t>{1, 1}}});
  net.Op("scale", {{"X", {"c"}}}, {{"Out", {"s"}}}, {{"scale", 0.5f}, {"bias", 1.0f}});
  net.Op("relu", {{"X", {"s"}}}, {{"Out", {"r"}}});
  net.Op("pool2d", {{"X", {"r"}}}, {{"Out", {"p"}}},
         {{"ksize", std::vector<int32_t>{2, 2}}, {"strides", std::vector<int32_t>{2, 2}}});
  Result want = net.Run({"s", "p"}, false);
  Result got = net.Run({"s", "p"}, true);
  EXPECT_TRUE(RanMkldnn(got, "conv2d"));
  // relu of scale's plain output: the plain kernel, faster there (eltwise_kernels.cc's rule).
  EXPECT_TRUE(RanPlain(got, "relu"));
  // pool2d reads relu's plain output: oneDNN's pooling or, where it would run its reference
  // implementation on plain data (AVX2, SSE4.1), the plain kernel.
  const core::OpKernelType plain{core::PlaceKindId("cpu"), TIDE_FP32, TIDE_LAYOUT_ANY, 0};
  EXPECT_EQ(got.kernels.at(1).first, "scale");
  EXPECT_EQ(got.kernels.at(1).second, plain) << "scale has no oneDNN kernel: the plain one runs";
  EXPECT_EQ(got.counts.layouts, 1u) << "the blocked conv output is reordered once, for scale";
  EXPECT_EQ(got.layouts.at("s"), TIDE_LAYOUT_ANY);
  for (const char* v : {"s", "p"})
    EXPECT_TRUE(Close(got.values.at(v), want.values.at(v), 1e-4, 1e-4)) << v;
}

TEST(MkldnnChain, LeNetGradsMatchPlain) {
  Net net;
  net.Feed("x", Random({2, 8, 10, 10}, TIDE_FP32, -1, 1, 101))  // 8 channels: x@GRAD on oneDNN
      .Feed("w", Random({16, 8, 3, 3}, TIDE_FP32, -0.5, 0.5, 102), false)
      .Feed("fc_w", Random({16 * 4 * 4, 10}, TIDE_FP32, -0.2, 0.2, 103));
  net.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"w"}}}, {{"Output", {"c"}}});
  net.Op("relu", {{"X", {"c"}}}, {{"Out", {"r"}}});
  net.Op("pool2d", {{"X", {"r"}}}, {{"Out", {"p"}}},
         {{"ksize", std::vector<int32_t>{2, 2}}, {"strides", std::vector<int32_t>{2, 2}}});
  net.Op("mul", {{"X", {"p"}}, {"Y", {"fc_w"}}}, {{"Out", {"fc"}}});
  net.Backward("fc", Random({2, 10}, TIDE_FP32, -1, 1, 104));
  const std::vector<std::string> fetch = {"x@GRAD", "w@GRAD", "fc_w@GRAD", "r@GRAD"};
  Result want = net.Run(fetch, false);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = net.Run(fetch, true, feed);
    for (const char* op : {"conv2d", "relu", "pool2d", "pool2d_grad", "relu_grad", "conv2d_grad"})
      EXPECT_TRUE(RanMkldnn(got, op));
    for (const auto& v : fetch)
      EXPECT_TRUE(Close(got.values.at(v), want.values.at(v), 2e-4, 2e-4)) << v;
  }
}

TEST(MkldnnChain, UseMkldnnFlagSelectsTheKernelsWithoutTheAttribute) {
  Net net;
  net.Feed("x", Random({1, 8, 5, 5}, TIDE_FP32, -1, 1, 111))
      .Feed("w", Random({8, 8, 3, 3}, TIDE_FP32, -1, 1, 112), false);
  net.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"w"}}}, {{"Output", {"c"}}});
  net.Op("relu", {{"X", {"c"}}}, {{"Out", {"r"}}});
  Result want = net.Run({"r"}, false);
  std::string old;
  ASSERT_TRUE(GetFlag("use_mkldnn", &old)) << "the mkldnn plugin defines --use_mkldnn";
  SetFlag("use_mkldnn", "true");
  Result got = net.Run({"r"}, /*mkldnn=*/false);  // no use_mkldnn attribute on the ops
  SetFlag("use_mkldnn", old);
  EXPECT_TRUE(RanMkldnn(got, "conv2d"));
  EXPECT_TRUE(RanMkldnn(got, "relu"));
  EXPECT_TRUE(Close(got.values.at("r"), want.values.at("r"), 1e-4, 1e-4));
}

TEST(MkldnnChain, ConcurrentRunsFromSeveralThreads) {
  Net net = ResNetBlock();
  Result want = net.Run({"prob", "r2"}, false);
  std::vector<Result> got(4);
  std::vector<std::string> errors(got.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        got[t] = net.Run({"prob", "r2"}, true, t % 2 ? InputLayout::kBlocked : InputLayout::kPlain,
                         /*runs=*/3);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < got.size(); ++t) ASSERT_EQ(errors[t], "") << "thread " << t;
  for (size_t t = 0; t < got.size(); ++t)
    for (const char* v : {"prob", "r2"})
      EXPECT_TRUE(Close(got[t].values.at(v), want.values.at(v), 2e-4, 2e-4))
          << "thread " << t << " " << v;
}

}  // namespace
}  // namespace tide::test::mkldnn
