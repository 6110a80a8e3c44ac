// conv_test.cc: the oneDNN conv2d / depthwise_conv2d kernels and their grads against the plain
// (im2col + GEMM) kernels, on LeNet- and ResNet-like shapes: 3x3 pad 1 stride 1 and 2, 1x1
// stride 1 and 2, 5x5, the 7x7 stride-2 stem, groups, depthwise, dilation, asymmetric
// attributes. Inputs are fed plain and blocked. fused_conv2d (Bias, ResidualData, relu) against
// its plain kernel, as one convolution primitive with post-ops.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, m, kh, kw;
  int32_t sh, sw, ph, pw, dh, dw, groups;
};

std::ostream& operator<<(std::ostream& os, const ConvCase& c) { return os << c.name; }

const ConvCase kCases[] = {
    {"lenet_conv1", 2, 1, 12, 12, 6, 5, 5, 1, 1, 0, 0, 1, 1, 1},
    {"lenet_conv2", 2, 6, 8, 8, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1},
    {"resnet_3x3_s1", 2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {"resnet_3x3_s2", 2, 16, 9, 9, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {"resnet_1x1_s1", 2, 32, 7, 7, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1},
    {"resnet_1x1_s2", 1, 16, 8, 8, 32, 1, 1, 2, 2, 0, 0, 1, 1, 1},
    {"resnet_stem_7x7_s2", 1, 3, 16, 16, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1},
    {"groups2", 2, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 2},
    {"groups4_odd_channels", 1, 12, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4},
    {"depthwise", 2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16},
    {"dilation2", 1, 8, 9, 9, 8, 3, 3, 1, 1, 2, 2, 2, 2, 1},
    {"asymmetric", 2, 4, 7, 8, 5, 2, 3, 1, 2, 1, 0, 1, 1, 1},
    {"stride3_uneven", 1, 8, 10, 11, 8, 3, 3, 3, 3, 0, 1, 1, 1, 1},
};

OneOp ConvOp(const char* type, const ConvCase& k) {
  return OneOp(type)
      .Input("Input", "input", Random({k.n, k.c, k.h, k.w}, TIDE_FP32, -1, 1, 3))
      .Input("Filter", "filter", Random({k.m, k.c / k.groups, k.kh, k.kw}, TIDE_FP32, -1, 1, 4),
             /*blockable=*/false)
      .Output("Output", "output")
      .Attr("strides", std::vector<int32_t>{k.sh, k.sw})
      .Attr("paddings", std::vector<int32_t>{k.ph, k.pw})
      .Attr("dilations", std::vector<int32_t>{k.dh, k.dw})
      .Attr("groups", k.groups);
}

std::vector<int64_t> OutDims(const ConvCase& k) {
  return {k.n, k.m, (k.h + 2 * k.ph - (k.dh * (k.kh - 1) + 1)) / k.sh + 1,
          (k.w + 2 * k.pw - (k.dw * (k.kw - 1) + 1)) / k.sw + 1};
}

class MkldnnConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(MkldnnConv, ForwardMatchesPlain) {
  const ConvCase& k = GetParam();
  OneOp op = ConvOp("conv2d", k);
  op.CheckForward(1e-4, 1e-4);
  // No needless reorder, whatever formats oneDNN picks for this machine's ISA: the kernel
  // reorders each input at most once (Input, Filter) and writes its output in the format the
  // convolution produced it in; any reorder after the convolution is the core's own conversion
  // of a blocked output for the fetch.
  const Result& got = op.last();
  const size_t conv = got.DnnlFind("convolution");
  ASSERT_LT(conv, got.dnnl_execs.size()) << "no oneDNN convolution ran";
  EXPECT_EQ(got.DnnlCount("convolution"), 1);
  EXPECT_LE(got.DnnlCount("reorder", 0, conv), 2) << "at most one reorder per input";
  EXPECT_EQ(got.DnnlCount("reorder", conv + 1), got.layouts.at("output") == TIDE_LAYOUT_ONEDNN ? 1 : 0)
      << "the output is stored as the convolution wrote it (reordered only to be fetched plain)";
}

TEST_P(MkldnnConv, GradMatchesPlain) {
  const ConvCase& k = GetParam();
  ConvOp("conv2d", k).CheckGrad({"input", "filter"}, "output",
                                Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4, 2e-4);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnConv, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ConvCase>& i) { return std::string(i.param.name); });

TEST(MkldnnConv, DepthwiseConv2dOp) {
  const ConvCase k{"depthwise_s2", 2, 16, 8, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 16};
  OneOp op = ConvOp("depthwise_conv2d", k);
  op.CheckForward(1e-4, 1e-4);
  op.CheckGrad({"input", "filter"}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4,
               2e-4);
}

TEST(MkldnnConv, OnlyInputGradOrOnlyFilterGrad) {
  const ConvCase k = kCases[2];
  for (const char* wrt : {"input", "filter"}) {
    SCOPED_TRACE(wrt);
    ConvOp("conv2d", k).CheckGrad({wrt}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4,
                                  2e-4);
  }
}

TEST(MkldnnConv, RepeatedRunsReuseTheCachedPrimitive) {
  const ConvCase k = kCases[3];
  OneOp op = ConvOp("conv2d", k);
  std::map<std::string, TestTensor> want = op.Reference().Run();
  Result got = op.MakeNet().Run({"output"}, true, InputLayout::kBlocked, /*runs=*/3);
  EXPECT_TRUE(RanMkldnn(got, "conv2d"));
  EXPECT_TRUE(Close(got.values.at("output"), want.at("output"), 1e-4, 1e-4));
}

// fused_conv2d: Output = act(conv + Bias + ResidualData), Paddle's fusion op.
struct FusedCase {
  ConvCase conv;
  bool bias, residual, relu;
};

std::ostream& operator<<(std::ostream& os, const FusedCase& c) { return os << c.conv.name; }

const FusedCase kFusedCases[] = {
    {{"bias", 2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1}, true, false, false},
    {{"bias_relu_s2", 2, 16, 9, 9, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1}, true, false, true},
    {{"bias_residual_relu_1x1", 2, 32, 7, 7, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1}, true, true, true},
    {{"residual_only", 1, 16, 8, 8, 32, 1, 1, 1, 1, 0, 0, 1, 1, 1}, false, true, false},
    {{"stem_relu", 1, 3, 16, 16, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1}, false, false, true},
    {{"depthwise_bias_relu", 2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16}, true, false, true},
};

OneOp FusedOp(const FusedCase& c) {
  const ConvCase& k = c.conv;
  OneOp op = ConvOp("fused_conv2d", k);
  if (c.bias) op.Input("Bias", "bias", Random({k.m}, TIDE_FP32, -1, 1, 5), /*blockable=*/false);
  if (c.residual) op.Input("ResidualData", "residual", Random(OutDims(k), TIDE_FP32, -1, 1, 6));
  op.Attr("fuse_residual_connection", c.residual);
  op.Attr("fuse_activation", std::string(c.relu ? "relu" : ""));
  return op;
}

class MkldnnFusedConv : public ::testing::TestWithParam<FusedCase> {};

TEST_P(MkldnnFusedConv, ForwardMatchesPlainInOnePrimitive) {
  OneOp op = FusedOp(GetParam());
  op.CheckForward(1e-4, 1e-4);
  // The bias, the residual and the relu are post-ops of the one convolution: no eltwise or
  // binary primitive runs, and only the inputs (Input, Filter, ResidualData) may be reordered
  // before it.
  const Result& got = op.last();
  const size_t conv = got.DnnlFind("convolution");
  ASSERT_LT(conv, got.dnnl_execs.size()) << "no oneDNN convolution ran";
  EXPECT_EQ(got.DnnlCount("convolution"), 1);
  EXPECT_EQ(got.DnnlCount("eltwise"), 0);
  EXPECT_EQ(got.DnnlCount("binary"), 0);
  EXPECT_LE(got.DnnlCount("reorder", 0, conv), 3);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnFusedConv, ::testing::ValuesIn(kFusedCases),
                         [](const ::testing::TestParamInfo<FusedCase>& i) {
                           return std::string(i.param.conv.name);
                         });

}  // namespace
}  // namespace tide::test::mkldnn
