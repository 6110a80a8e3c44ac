// pool_test.cc: the oneDNN pool2d kernel and its grad against the plain kernel: max / avg
// (exclusive and not), LeNet's 2x2 stride 2, ResNet's 3x3 stride 2 pad 1, global pooling,
// ceil_mode, adaptive pooling (even windows on oneDNN, uneven ones on the fallback loop) and
// windows wholly in the padding (fallback). Inputs are fed plain and blocked.
#include <dnnl.hpp>

#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct PoolCase {
  const char* name;
  int64_t n, c, h, w;
  const char* type;
  int32_t kh, kw, sh, sw, ph, pw;
  bool global, exclusive, ceil_mode, adaptive;
  std::vector<int64_t> out;  // expected output dims
};

std::ostream& operator<<(std::ostream& os, const PoolCase& c) { return os << c.name; }

const PoolCase kCases[] = {
    {"lenet_max2x2", 2, 6, 8, 8, "max", 2, 2, 2, 2, 0, 0, false, true, false, false, {2, 6, 4, 4}},
    {"lenet_avg2x2",
     2,
     16,
     8,
     8,
     "avg",
     2,
     2,
     2,
     2,
     0,
     0,
     false,
     true,
     false,
     false,
     {2, 16, 4, 4}},
    {"resnet_max3x3_s2_p1",
     2,
     16,
     9,
     9,
     "max",
     3,
     3,
     2,
     2,
     1,
     1,
     false,
     true,
     false,
     false,
     {2, 16, 5, 5}},
    {"avg3x3_s1_p1_exclusive",
     1,
     16,
     6,
     7,
     "avg",
     3,
     3,
     1,
     1,
     1,
     1,
     false,
     true,
     false,
     false,
     {1, 16, 6, 7}},
    {"avg3x3_s1_p1_inclusive",
     1,
     16,
     6,
     7,
     "avg",
     3,
     3,
     1,
     1,
     1,
     1,
     false,
     false,
     false,
     false,
     {1, 16, 6, 7}},
    {"global_avg", 2, 32, 7, 7, "avg", 1, 1, 1, 1, 0, 0, true, true, false, false, {2, 32, 1, 1}},
    {"global_max", 2, 8, 5, 6, "max", 1, 1, 1, 1, 0, 0, true, true, false, false, {2, 8, 1, 1}},
    {"ceil_max3x3_s2",
     1,
     16,
     8,
     8,
     "max",
     3,
     3,
     2,
     2,
     0,
     0,
     false,
     true,
     true,
     false,
     {1, 16, 4, 4}},
    {"ceil_avg3x3_s2_inclusive",
     1,
     8,
     8,
     7,
     "avg",
     3,
     3,
     2,
     2,
     1,
     1,
     false,
     false,
     true,
     false,
     {1, 8, 5, 4}},
    {"ceil_avg2x2_s2_exclusive",
     2,
     3,
     7,
     7,
     "avg",
     2,
     2,
     2,
     2,
     0,
     0,
     false,
     true,
     true,
     false,
     {2, 3, 4, 4}},
    {"floor_uneven_s2",
     1,
     16,
     7,
     6,
     "max",
     3,
     3,
     2,
     2,
     0,
     0,
     false,
     true,
     false,
     false,
     {1, 16, 3, 2}},
    {"adaptive_even",
     2,
     16,
     8,
     6,
     "avg",
     2,
     3,
     1,
     1,
     0,
     0,
     false,
     true,
     false,
     true,
     {2, 16, 2, 3}},
    {"adaptive_uneven_fallback",
     1,
     8,
     7,
     5,
     "max",
     3,
     2,
     1,
     1,
     0,
     0,
     false,
     true,
     false,
     true,
     {1, 8, 3, 2}},
    {"window_in_padding_fallback",
     1,
     8,
     4,
     4,
     "avg",
     2,
     2,
     2,
     2,
     2,
     2,
     false,
     true,
     false,
     false,
     {1, 8, 4, 4}},
};

// oneDNN pools plain NCHW data with its reference implementation on some ISAs (simple_nchw on
// AVX2 and SSE4.1): the kernel declines those runs, so plain-fed runs (and channel counts no
// blocked format takes, which stay plain) check only the values.
OneOp PoolOp(const PoolCase& k) {
  return OneOp("pool2d")
      .MayDecline(true, k.c % 8 != 0)
      .Input("X", "x", Random({k.n, k.c, k.h, k.w}, TIDE_FP32, -1, 1, 5))
      .Output("Out", "out")
      .Attr("pooling_type", std::string(k.type))
      .Attr("ksize", std::vector<int32_t>{k.kh, k.kw})
      .Attr("strides", std::vector<int32_t>{k.sh, k.sw})
      .Attr("paddings", std::vector<int32_t>{k.ph, k.pw})
      .Attr("global_pooling", k.global)
      .Attr("exclusive", k.exclusive)
      .Attr("ceil_mode", k.ceil_mode)
      .Attr("adaptive", k.adaptive);
}

class MkldnnPool : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MkldnnPool, ForwardMatchesPlain) {
  const PoolCase& k = GetParam();
  OneOp op = PoolOp(k);
  op.CheckForward(1e-5, 1e-6);
  // The case's shape is what Fluid's rules give (so ceil_mode etc. are really exercised).
  EXPECT_EQ(op.Reference().Run().at("out").dims, k.out);
}

TEST_P(MkldnnPool, GradMatchesPlain) {
  const PoolCase& k = GetParam();
  PoolOp(k).CheckGrad({"x"}, "out", Random(k.out, TIDE_FP32, -1, 1, 8), 1e-5, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnPool, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<PoolCase>& i) {
                           return std::string(i.param.name);
                         });

TEST(MkldnnPool, BlockedInputGivesBlockedOutput) {
  OneOp op = PoolOp(kCases[2]);
  op.CheckForward(1e-5, 1e-6);  // the last run fed X blocked
  EXPECT_EQ(op.last().layouts.at("out"), TIDE_LAYOUT_ONEDNN);
}

// Once a max pooling's grad has run, its forward keeps the workspace (each window's argmax) and the
// grad reads it instead of running the forward again: one forward and one backward pooling per
// step, with the plain kernels' results.
TEST(MkldnnPool, MaxPoolGradReusesTheForwardsWorkspace) {
  Net net;
  net.Feed("x", Random({2, 16, 8, 8}, TIDE_FP32, -1, 1, 71));
  net.Op("pool2d", {{"X", {"x"}}}, {{"Out", {"out"}}},
         {{"pooling_type", std::string("max")},
          {"ksize", std::vector<int32_t>{2, 2}},
          {"strides", std::vector<int32_t>{2, 2}}});
  net.Backward("out", Random({2, 16, 4, 4}, TIDE_FP32, -1, 1, 72));
  const Result want = net.Run({"out", "x@GRAD"}, /*mkldnn=*/false);
  // Fed blocked: oneDNN's jit pooling on every ISA (plain data may decline, see PoolOp).
  const Result got =
      net.RecordingDnnl().Run({"out", "x@GRAD"}, true, InputLayout::kBlocked, /*runs=*/2);
  EXPECT_TRUE(RanMkldnn(got, "pool2d_grad"));
  EXPECT_EQ(got.DnnlCount("pooling_v2") + got.DnnlCount("pooling"), 2)
      << "the second step: one forward keeping its workspace, one backward reading it";
  for (const char* v : {"out", "x@GRAD"})
    EXPECT_TRUE(Close(got.values.at(v), want.values.at(v), 1e-6, 1e-6)) << v;
}

// On plain NCHW data oneDNN's pooling is its reference loop on some ISAs (simple_nchw: the
// tide_mkldnn_tests_sse41 / _avx2 runs), a jit kernel on others: the kernel declines the first
// (the plain kernel runs) and runs the second, with the same values either way.
TEST(MkldnnPool, DeclinesWhereOneDnnWouldRunItsReference) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const dnnl::memory::dims src{2, 16, 8, 8}, dst{2, 16, 4, 4};
  const dnnl::pooling_forward::primitive_desc pd(
      dnnl::pooling_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
          {src, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw},
          {dst, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any}, {2, 2}, {2, 2},
          {0, 0}, {0, 0}),
      eng);
  const std::string impl = pd.impl_info_str();
  const bool reference = impl.rfind("ref", 0) == 0 || impl.rfind("simple", 0) == 0;
  OneOp op = PoolOp(kCases[1]);  // 2x16x8x8 avg 2x2
  Net net = op.MakeNet();
  const Result got = net.Run({"out"}, /*mkldnn=*/true, InputLayout::kPlain);
  EXPECT_TRUE(reference ? RanPlain(got, "pool2d") : RanMkldnn(got, "pool2d")) << impl;
  EXPECT_TRUE(Close(got.values.at("out"), op.Reference().Run().at("out"), 1e-5, 1e-6));
}

}  // namespace
}  // namespace tide::test::mkldnn
