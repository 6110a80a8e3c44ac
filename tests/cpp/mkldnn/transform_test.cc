// transform_test.cc: the device_mkldnn plugin loads after device_cpu, registers its kernels under
// {cpu, float32, ONEDNN, mkldnn}, and its layout transforms (oneDNN reorders) round-trip data
// exactly: NCHW -> ONEDNN picks a channel-blocked format when the channels divide, and
// ONEDNN -> NCHW / ANY give back the dense data.
#include <dnnl_types.h>

#include "core/host/initialize.h"
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

TEST(MkldnnPlugin, RegistersKernelsForEveryOp) {
  core::Initialize();
  const core::OpKernelType key{core::PlaceKindId("cpu"), TIDE_FP32, TIDE_LAYOUT_ONEDNN,
                               core::LibraryId("mkldnn")};
  for (const char* op : {"conv2d",
                         "conv2d_grad",
                         "depthwise_conv2d",
                         "depthwise_conv2d_grad",
                         "pool2d",
                         "pool2d_grad",
                         "relu",
                         "relu_grad",
                         "tanh",
                         "sigmoid",
                         "softmax",
                         "batch_norm",
                         "batch_norm_grad",
                         "lrn",
                         "elementwise_add",
                         "concat",
                         "tanh_grad",
                         "sigmoid_grad",
                         "abs",
                         "exp",
                         "log",
                         "sqrt",
                         "square",
                         "reciprocal",
                         "rsqrt",
                         "leaky_relu",
                         "elu",
                         "relu6",
                         "brelu",
                         "swish",
                         "gelu",
                         "logsigmoid",
                         "softplus",
                         "pow",
                         "gelu_grad",
                         "pow_grad",
                         "relu6_grad",
                         "brelu_grad",
                         "hard_swish",
                         "hard_swish_grad",
                         "layer_norm",
                         "layer_norm_grad",
                         "prelu",
                         "prelu_grad",
                         "reduce_sum",
                         "reduce_mean",
                         "reduce_max",
                         "reduce_min",
                         "reduce_prod",
                         "bilinear_interp",
                         "nearest_interp",
                         "nearest_interp_grad"}) {
    const core::KernelEntry* k = core::Registry::Global().FindKernel(op, key);
    ASSERT_NE(k, nullptr) << op;
    EXPECT_EQ(k->plugin, "device_mkldnn") << op;
  }
  // float32 only: no other data type.
  EXPECT_EQ(core::Registry::Global().FindKernel(
                "conv2d", {key.place_kind, TIDE_FP64, TIDE_LAYOUT_ONEDNN, key.library}),
            nullptr);
  // No oneDNN 2.6 algorithm computes Fluid's round (halves away from 0); oneDNN has no backward
  // reduction; its linear resampling backward is never faster than the plain kernel.
  for (const char* op : {"round", "reduce_sum_grad", "bilinear_interp_grad"})
    EXPECT_EQ(core::Registry::Global().FindKernel(op, key), nullptr) << op;
}

TEST(MkldnnPlugin, RegistersLayoutTransforms) {
  core::Initialize();
  const int32_t cpu = core::PlaceKindId("cpu");
  for (auto [from, to] : {std::pair{TIDE_LAYOUT_ONEDNN, TIDE_LAYOUT_NCHW},
                          std::pair{TIDE_LAYOUT_ONEDNN, TIDE_LAYOUT_ANY},
                          std::pair{TIDE_LAYOUT_NCHW, TIDE_LAYOUT_ONEDNN}}) {
    const core::TransformEntry* e = core::Registry::Global().FindLayoutTransform(cpu, from, to);
    ASSERT_NE(e, nullptr) << core::LayoutName(from) << " -> " << core::LayoutName(to);
    EXPECT_EQ(e->plugin, "device_mkldnn");
  }
}

struct RoundTrip {
  std::vector<int64_t> dims;
  std::vector<int64_t> blocked_tags;  // acceptable format codes after NCHW -> ONEDNN
};

class MkldnnTransform : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(MkldnnTransform, RoundTripsExactly) {
  core::Initialize();
  const RoundTrip& c = GetParam();
  TestTensor t = Random(c.dims, TIDE_FP32, -5, 5, 11);
  core::LoDTensor plain = ToLoD(t);
  core::LoDTensor blocked = Transform(plain, TIDE_LAYOUT_NCHW, TIDE_LAYOUT_ONEDNN);
  EXPECT_EQ(blocked.layout(), TIDE_LAYOUT_ONEDNN);
  EXPECT_EQ(blocked.dims(), plain.dims()) << "dims stay the logical NCHW dims";
  EXPECT_NE(std::find(c.blocked_tags.begin(), c.blocked_tags.end(), blocked.format()),
            c.blocked_tags.end())
      << "format tag " << blocked.format();
  for (TideLayout to : {TIDE_LAYOUT_NCHW, TIDE_LAYOUT_ANY}) {
    core::LoDTensor back = Transform(blocked, TIDE_LAYOUT_ONEDNN, to);
    EXPECT_EQ(back.layout(), to);
    EXPECT_EQ(back.format(), 0);
    TestTensor got = FromLoD(back);
    EXPECT_EQ(got.dims, t.dims);
    EXPECT_EQ(got.data, t.data) << "a reorder moves values, it must not change them";
  }
  // A blocked tensor really is reordered (not copied as is) when the format is a blocked one.
  if (blocked.format() != dnnl_abcd && c.dims.size() == 4) {
    const float* b = blocked.data<float>();
    const int64_t hw = c.dims[2] * c.dims[3];
    // In nChw{8,16}c, element (0, 1, 0, 0) sits right after (0, 0, 0, 0).
    EXPECT_EQ(b[1], static_cast<float>(t.data[hw]));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MkldnnTransform,
    ::testing::Values(RoundTrip{{2, 16, 5, 3}, {dnnl_aBcd16b, dnnl_aBcd8b}},
                      RoundTrip{{1, 8, 4, 4}, {dnnl_aBcd8b}},
                      RoundTrip{{3, 32, 2, 2}, {dnnl_aBcd16b, dnnl_aBcd8b}},
                      RoundTrip{{2, 3, 4, 5}, {dnnl_abcd}},  // channels do not divide: plain
                      RoundTrip{{2, 16, 7}, {dnnl_aBc16b, dnnl_aBc8b}},
                      RoundTrip{{1, 16, 2, 3, 4}, {dnnl_aBcde16b, dnnl_aBcde8b}},
                      RoundTrip{{4, 10}, {dnnl_ab}}));

TEST(MkldnnTransform, PlainDataThroughToPlainIsACopy) {
  core::Initialize();
  TestTensor t = Random({2, 5}, TIDE_FP32, -1, 1, 3);
  core::LoDTensor back = Transform(ToLoD(t), TIDE_LAYOUT_ONEDNN, TIDE_LAYOUT_ANY);
  EXPECT_EQ(FromLoD(back).data, t.data);
}

}  // namespace
}  // namespace tide::test::mkldnn
