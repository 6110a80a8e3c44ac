// activation_softmax_test.cc: the oneDNN relu / tanh / sigmoid kernels, relu_grad and softmax
// against the plain kernels, on 4-D feature maps (fed plain and blocked) and 2-D fc outputs.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

const std::vector<std::vector<int64_t>> kShapes = {
    {2, 16, 4, 4}, {1, 8, 3, 5}, {2, 3, 4, 4}, {3, 7}, {5}};

class MkldnnActivation : public ::testing::TestWithParam<const char*> {};

TEST_P(MkldnnActivation, ForwardMatchesPlain) {
  for (const auto& dims : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    OneOp op = OneOp(GetParam())
                   .Input("X", "x", Random(dims, TIDE_FP32, -3, 3, 41))
                   .Output("Out", "out")
                   // relu of plain data runs the plain kernel (eltwise_kernels.cc's speed rule)
                   .DeclinesFedPlain(std::string(GetParam()) == "relu");
    op.CheckForward(1e-5, 1e-6);
    if (dims.size() == 4 && dims[1] % 8 == 0)
      EXPECT_EQ(op.last().layouts.at("out"), TIDE_LAYOUT_ONEDNN) << "Out keeps X's blocked format";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, MkldnnActivation, ::testing::Values("relu", "tanh", "sigmoid"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

TEST(MkldnnActivation, ReluGradMatchesPlain) {
  for (const auto& dims : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    OneOp("relu")
        .Input("X", "x", Random(dims, TIDE_FP32, -3, 3, 42))
        .Output("Out", "out")
        .DeclinesFedPlain()
        .CheckGrad({"x"}, "out", Random(dims, TIDE_FP32, -1, 1, 43), 1e-6, 1e-7);
  }
}

struct SoftmaxCase {
  std::vector<int64_t> dims;
  int32_t axis;
};

TEST(MkldnnSoftmax, ForwardMatchesPlain) {
  const SoftmaxCase cases[] = {
      {{4, 10}, -1},       {{4, 10}, 0},      {{2, 3, 4}, 1}, {{2, 16, 3, 3}, 1},
      {{2, 16, 3, 3}, -1}, {{1, 8, 2, 5}, 2}, {{7}, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.dims) + " axis " + std::to_string(c.axis));
    OneOp("softmax")
        .Input("X", "x", Random(c.dims, TIDE_FP32, -4, 4, 44))
        .Output("Out", "out")
        .Attr("axis", c.axis)
        .CheckForward(1e-5, 1e-7);
  }
}

}  // namespace
}  // namespace tide::test::mkldnn
