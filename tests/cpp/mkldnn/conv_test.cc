// conv_test.cc: the oneDNN conv2d / depthwise_conv2d kernels and their grads against the plain
// (im2col + GEMM) kernels, on LeNet- and ResNet-like shapes: 3x3 pad 1 stride 1 and 2, 1x1
// stride 1 and 2, 5x5, the 7x7 stride-2 stem, groups, depthwise, dilation, asymmetric
// attributes. Inputs are fed plain and blocked. fused_conv2d (Bias, ResidualData, relu) against
// its plain kernel, as one convolution primitive with post-ops; and with each of Paddle's fused
// activations (fuse_alpha / fuse_beta) against a float64 loop written here, both kernels.
#include <cmath>
#include <dnnl.hpp>
#include <functional>

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

// The speed rules of conv_kernels.cc (DeclineWhereThePlainKernelWins): a 1x1 stride-1 unpadded
// conv2d of plain data, and NCHW Input@GRAD of fewer than 8 channels (groups 1), run the plain
// kernel.
bool PlainPointwise(const char* type, const ConvCase& k) {
  return std::string(type) != "fused_conv2d" && k.kh == 1 && k.kw == 1 && k.sh == 1 && k.sw == 1 &&
         k.ph == 0 && k.pw == 0 && k.dh == 1 && k.dw == 1 && k.groups == 1;
}

OneOp ConvOp(const char* type, const ConvCase& k) {
  return OneOp(type)
      .DeclinesFedPlain(PlainPointwise(type, k))
      .GradDeclines(k.groups == 1 && k.c < 8)
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
  EXPECT_EQ(got.DnnlCount("reorder", conv + 1),
            got.layouts.at("output") == TIDE_LAYOUT_ONEDNN ? 1 : 0)
      << "the output is stored as the convolution wrote it (reordered only to be fetched plain)";
}

TEST_P(MkldnnConv, GradMatchesPlain) {
  const ConvCase& k = GetParam();
  ConvOp("conv2d", k)
      .CheckGrad({"input", "filter"}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4,
                 2e-4);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnConv, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ConvCase>& i) {
                           return std::string(i.param.name);
                         });

// LeNet's second convolution, 20 -> 50 channels: where oneDNN keeps its activations in a format
// without padding (nhwc on AVX-512) the grad runs on oneDNN; where its channel blocks would pad
// them (AVX2's 8, SSE4.1's) the grad declines to the plain kernel, which was faster there.
TEST(MkldnnConv, GradDeclinesPaddedChannelBlocks) {
  const ConvCase k{"lenet_conv2_full", 4, 20, 12, 12, 50, 5, 5, 1, 1, 0, 0, 1, 1, 1};
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  auto any = [](dnnl::memory::dims d) {
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
  };
  const dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          any({4, 20, 12, 12}), any({50, 20, 5, 5}), any({4, 50, 8, 8}), {1, 1}, {0, 0}, {0, 0}),
      eng);
  auto padded = [](const dnnl::memory::desc& md) {
    int64_t n = 1;
    for (auto d : md.dims()) n *= d;
    return md.get_size() > static_cast<size_t>(n) * sizeof(float);
  };
  const bool declines = padded(fwd.src_desc()) || padded(fwd.dst_desc());
  ConvOp("conv2d", k)
      .GradDeclines(declines)
      .CheckGrad({"input", "filter"}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4,
                 2e-4);
}

TEST(MkldnnConv, DepthwiseConv2dOp) {
  const ConvCase k{"depthwise_s2", 2, 16, 8, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 16};
  OneOp op = ConvOp("depthwise_conv2d", k);
  op.CheckForward(1e-4, 1e-4);
  op.CheckGrad({"input", "filter"}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4, 2e-4);
}

TEST(MkldnnConv, OnlyInputGradOrOnlyFilterGrad) {
  const ConvCase k = kCases[2];
  for (const char* wrt : {"input", "filter"}) {
    SCOPED_TRACE(wrt);
    ConvOp("conv2d", k)
        .CheckGrad({wrt}, "output", Random(OutDims(k), TIDE_FP32, -1, 1, 9), 2e-4, 2e-4);
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
    // 49 output tiles of 2x2: Winograd where oneDNN has it (AVX-512)
    {{"winograd_bias_relu", 1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1}, true, false, true},
    {{"winograd_residual", 2, 32, 10, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1}, true, true, false},
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

// fused_conv2d's inference-only choice (conv_kernels.cc, InferenceBlockedPd): with AVX-512, a
// 3x3 stride-1 convolution with at least 48 output tiles of 2x2 runs Winograd, a smaller one and
// every other shape oneDNN's direct kernels, all writing 16-channel blocks; without AVX-512 no
// Winograd. conv2d (which trains) never runs Winograd.
bool HasAvx512() {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}
std::string ConvImpl(const Result& r) {
  const size_t i = r.DnnlFind("convolution");
  return i < r.dnnl_impls.size() ? r.dnnl_impls[i] : "none";
}
bool IsWinograd(const std::string& impl) { return impl.find("wino") != std::string::npos; }

TEST(MkldnnFusedConv, WinogradWhereItPays) {
  const FusedCase big{
      {"tiles_49", 1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1}, true, false, true};
  const FusedCase small{
      {"tiles_16", 1, 16, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1}, true, false, true};
  const FusedCase strided{
      {"stride_2", 2, 16, 28, 28, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1}, true, false, true};
  for (const FusedCase* c : {&big, &small, &strided}) {
    OneOp op = FusedOp(*c);
    op.CheckForward(1e-4, 1e-4);
    const std::string impl = ConvImpl(op.last());
    EXPECT_EQ(IsWinograd(impl), c == &big && HasAvx512()) << c->conv.name << ": " << impl;
  }
  OneOp conv = ConvOp("conv2d", big.conv);
  conv.CheckForward(1e-4, 1e-4);
  EXPECT_FALSE(IsWinograd(ConvImpl(conv.last()))) << ConvImpl(conv.last());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnFusedConv, ::testing::ValuesIn(kFusedCases),
                         [](const ::testing::TestParamInfo<FusedCase>& i) {
                           return std::string(i.param.conv.name);
                         });

// fused_conv2d's activations: Paddle's fuse_activation with its fuse_alpha / fuse_beta, and the
// float64 formula they mean (Fluid's activation ops' formulas).
struct ActCase {
  const char* id;
  const char* name;
  float alpha, beta;
  std::function<double(double)> f;
};

std::ostream& operator<<(std::ostream& os, const ActCase& c) { return os << c.id; }

double Sigmoid(double v) { return 1 / (1 + std::exp(-v)); }
double Clip(double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }

const ActCase kActCases[] = {
    {"relu", "relu", 0, 0, [](double v) { return v > 0 ? v : 0; }},
    {"leaky_relu", "leaky_relu", 0.1f, 0, [](double v) { return v > 0 ? v : 0.1f * v; }},
    {"relu6", "relu6", 0, 6, [](double v) { return Clip(v, 0, 6); }},
    {"relu6_threshold", "relu6", 0, 0.5f, [](double v) { return Clip(v, 0, 0.5); }},
    {"relu6_older_paddle", "relu6", 0.5f, 0, [](double v) { return Clip(v, 0, 0.5); }},
    {"clip", "clip", -0.25f, 0.5f, [](double v) { return Clip(v, -0.25, 0.5); }},
    {"swish", "swish", 1, 0, [](double v) { return v * Sigmoid(v); }},
    {"swish_beta", "swish", 2.5f, 0, [](double v) { return v * Sigmoid(2.5 * v); }},
    {"hard_sigmoid", "hard_sigmoid", 0.25f, 0.375f,
     [](double v) { return Clip(0.25 * v + 0.375, 0, 1); }},
    {"hard_swish", "hard_swish", 1.0f / 6, 0.5f,
     [](double v) { return v * Clip(v + 3, 0, 6) / 6; }},
    {"hard_swish_older_paddle", "hard_swish", 0, 0,
     [](double v) { return v * Clip(v + 3, 0, 6) / 6; }},
    {"sigmoid", "sigmoid", 0, 0, Sigmoid},
    {"tanh", "tanh", 0, 0, [](double v) { return std::tanh(v); }},
    {"abs", "abs", 0, 0, [](double v) { return std::fabs(v); }},
    {"mish", "mish", 0, 0,
     [](double v) {
       return v * std::tanh(std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))));
     }},
    {"gelu", "gelu", 0, 0, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
    {"gelu_tanh", "gelu_tanh", 0, 0,
     [](double v) {
       return 0.5 * v *
              (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
     }},
    {"sqrt", "sqrt", 0, 0, [](double v) { return std::sqrt(v); }},
};

// act(conv(x, f) + bias + residual) in float64 (NCHW, symmetric paddings).
TestTensor FusedReference(const ConvCase& k, const TestTensor& x, const TestTensor& f,
                          const TestTensor& bias, const TestTensor& residual,
                          const std::function<double(double)>& act) {
  const std::vector<int64_t> od = OutDims(k);
  TestTensor out;
  out.dims = od;
  out.data.assign(od[0] * od[1] * od[2] * od[3], 0.0);
  const int64_t cg = k.c / k.groups, mg = k.m / k.groups;
  size_t i = 0;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t oy = 0; oy < od[2]; ++oy)
        for (int64_t ox = 0; ox < od[3]; ++ox, ++i) {
          double v = bias.data[m] + residual.data[i];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t b = 0; b < k.kw; ++b) {
                const int64_t iy = oy * k.sh - k.ph + a * k.dh, ix = ox * k.sw - k.pw + b * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                const int64_t ci = (m / mg) * cg + c;
                v += x.data[((n * k.c + ci) * k.h + iy) * k.w + ix] *
                     f.data[((m * cg + c) * k.kh + a) * k.kw + b];
              }
          out.data[i] = act(v);
        }
  return out;
}

class MkldnnFusedConvActivation : public ::testing::TestWithParam<ActCase> {};

TEST_P(MkldnnFusedConvActivation, BothKernelsMatchFloat64) {
  const ActCase& a = GetParam();
  const bool sqrt = std::string(a.name) == "sqrt";
  const double lo = sqrt ? 0 : -1;  // sqrt: a sum of non-negative terms
  for (const ConvCase& k :
       {ConvCase{"bias_residual_3x3", 2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
        ConvCase{"depthwise_s2", 1, 16, 9, 9, 16, 3, 3, 2, 2, 1, 1, 1, 1, 16}}) {
    SCOPED_TRACE(k.name);
    const TestTensor x = Random({k.n, k.c, k.h, k.w}, TIDE_FP32, lo, 1, 3);
    const TestTensor f = Random({k.m, k.c / k.groups, k.kh, k.kw}, TIDE_FP32, lo, 0.5, 4);
    const TestTensor b = Random({k.m}, TIDE_FP32, lo, 1, 5);
    const TestTensor r = Random(OutDims(k), TIDE_FP32, lo, 1, 6);
    OneOp op("fused_conv2d");
    op.Input("Input", "input", x)
        .Input("Filter", "filter", f, /*blockable=*/false)
        .Input("Bias", "bias", b, /*blockable=*/false)
        .Input("ResidualData", "residual", r)
        .Output("Output", "output")
        .Attr("strides", std::vector<int32_t>{k.sh, k.sw})
        .Attr("paddings", std::vector<int32_t>{k.ph, k.pw})
        .Attr("dilations", std::vector<int32_t>{k.dh, k.dw})
        .Attr("groups", k.groups)
        .Attr("fuse_residual_connection", true)
        .Attr("fuse_activation", std::string(a.name))
        .Attr("fuse_alpha", a.alpha)
        .Attr("fuse_beta", a.beta);
    const TestTensor want = FusedReference(k, x, f, b, r, a.f);
    EXPECT_TRUE(Close(op.Reference().Run().at("output"), want, 1e-5, 1e-5)) << "plain kernel";
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(FeedName(feed));
      Result got = op.MakeNet().RecordingDnnl().Run({"output"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(RanMkldnn(got, "fused_conv2d"));
      EXPECT_TRUE(Close(got.values.at("output"), want, 1e-5, 2e-5)) << "oneDNN kernel";
      // The activation is a post-op of the one convolution: no eltwise primitive runs.
      EXPECT_EQ(got.DnnlCount("convolution"), 1);
      EXPECT_EQ(got.DnnlCount("eltwise"), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, MkldnnFusedConvActivation, ::testing::ValuesIn(kActCases),
                         [](const ::testing::TestParamInfo<ActCase>& i) {
                           return std::string(i.param.id);
                         });

// hard_swish other than Fluid's defaults has no oneDNN 2.6 form: the oneDNN kernel declines it
// (UNIMPLEMENTED, before writing anything), so the op runs on the plain kernel, never a
// different result.
TEST(MkldnnFusedConvActivation, DeclinesWhatOneDnnCannotCompute) {
  const ConvCase k{"declined", 1, 8, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  OneOp op = ConvOp("fused_conv2d", k);
  op.Attr("fuse_activation", std::string("hard_swish"))
      .Attr("fuse_alpha", 0.25f)
      .Attr("fuse_beta", 0.4f);
  const TestTensor plain = op.Reference().Run().at("output");
  Result got = op.MakeNet().RecordingDnnl().Run({"output"}, /*mkldnn=*/true);
  EXPECT_EQ(got.DnnlCount("convolution"), 0) << "the oneDNN kernel ran";
  EXPECT_TRUE(Close(got.values.at("output"), plain, 0, 0)) << "not the plain kernel's result";
}

}  // namespace
}  // namespace tide::test::mkldnn
