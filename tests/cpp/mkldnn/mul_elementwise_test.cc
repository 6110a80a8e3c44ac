// mul_elementwise_test.cc: mul under use_mkldnn (the plain kernel runs) and the oneDNN
// elementwise_add, against the plain kernels: fc shapes (a 4-D conv output flattened at
// x_num_col_dims = 1, fed blocked), x_num_col_dims / y_num_col_dims > 1, and Fluid's broadcast
// for the add (fc bias,
// per-channel bias on feature maps, trailing 1s, a scalar, a middle axis, size-1 dims inside Y's
// range against a float64 sum), and the add's grad.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct MulCase {
  const char* name;
  std::vector<int64_t> x, y;
  int32_t xc, yc;
  std::vector<int64_t> out;
};

std::ostream& operator<<(std::ostream& os, const MulCase& c) { return os << c.name; }

const MulCase kMulCases[] = {
    {"fc", {4, 20}, {20, 10}, 1, 1, {4, 10}},
    {"fc_after_conv", {2, 16, 3, 3}, {144, 10}, 1, 1, {2, 10}},
    {"fc_after_conv_c3", {2, 3, 2, 2}, {12, 5}, 1, 1, {2, 5}},
    {"x_num_col_dims2", {2, 3, 4}, {4, 5}, 2, 1, {2, 3, 5}},
    {"y_num_col_dims2", {3, 20}, {4, 5, 6}, 1, 2, {3, 6}},
    {"single_row", {1, 7}, {7, 1}, 1, 1, {1, 1}},
};

OneOp MulOp(const MulCase& k) {
  return OneOp("mul")
      .Input("X", "x", Random(k.x, TIDE_FP32, -1, 1, 51))
      .Input("Y", "y", Random(k.y, TIDE_FP32, -1, 1, 52))
      .Output("Out", "out")
      .Attr("x_num_col_dims", k.xc)
      .Attr("y_num_col_dims", k.yc);
}

// mul has no oneDNN kernel: oneDNN's matmul primitive was slower than the plain kernel's call of
// oneDNN's sgemm at every measured fc shape (devices/mkldnn/README.md). Under use_mkldnn the plain
// kernel runs, a blocked X (a conv or pool output) converted by the core, with the same results.
class MkldnnMul : public ::testing::TestWithParam<MulCase> {};

TEST_P(MkldnnMul, RunsThePlainKernelWithGrads) {
  const MulCase& k = GetParam();
  OneOp op = MulOp(k);
  const TestTensor dout = Random(k.out, TIDE_FP32, -1, 1, 53);
  std::map<std::string, TestTensor> want = op.Reference().RunGrad({"x", "y"}, "out", dout);
  const TestTensor want_out = op.Reference().Run().at("out");
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Net net = op.MakeNet();
    net.Backward("out", dout);
    Result got = net.Run({"out", "x@GRAD", "y@GRAD"}, /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanPlain(got, "mul"));
    EXPECT_TRUE(RanPlain(got, "mul_grad"));
    EXPECT_TRUE(Close(got.values.at("out"), want_out, 1e-5, 1e-5));
    EXPECT_TRUE(Close(got.values.at("x@GRAD"), want.at("x"), 1e-5, 1e-5));
    EXPECT_TRUE(Close(got.values.at("y@GRAD"), want.at("y"), 1e-5, 1e-5));
  }
  EXPECT_EQ(op.Reference().Run().at("out").dims, k.out);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MkldnnMul, ::testing::ValuesIn(kMulCases),
                         [](const ::testing::TestParamInfo<MulCase>& i) {
                           return std::string(i.param.name);
                         });

struct AddCase {
  const char* name;
  std::vector<int64_t> x, y;
  int32_t axis;
};

std::ostream& operator<<(std::ostream& os, const AddCase& c) { return os << c.name; }

const AddCase kAddCases[] = {
    {"same_4d", {2, 16, 4, 4}, {2, 16, 4, 4}, -1},  // a residual add
    {"same_2d", {3, 5}, {3, 5}, -1},
    {"fc_bias", {4, 10}, {10}, 1},
    {"fc_bias_axis_minus1", {4, 10}, {10}, -1},
    {"channel_bias", {2, 16, 3, 3}, {16}, 1},
    {"channel_bias_trailing_ones", {2, 8, 3, 3}, {8, 1, 1}, 1},
    {"scalar", {2, 16, 2, 2}, {1}, -1},
    {"middle_axis", {2, 3, 4, 5}, {3, 4}, 1},
    {"trailing_dims", {2, 3, 4, 5}, {4, 5}, -1},
    // axis = -1 aligns Y's full dims before its trailing 1s drop: Y [3, 1] lies on X's dim 1.
    {"trailing_one_axis_minus1", {2, 3, 3}, {3, 1}, -1},
    {"trailing_one_axis_minus1_4d", {2, 8, 3, 3}, {8, 3, 1}, -1},
};

class MkldnnAdd : public ::testing::TestWithParam<AddCase> {};

OneOp AddOp(const AddCase& k) {
  return OneOp("elementwise_add")
      .Input("X", "x", Random(k.x, TIDE_FP32, -1, 1, 54))
      .Input("Y", "y", Random(k.y, TIDE_FP32, -1, 1, 55))
      .Output("Out", "out")
      .Attr("axis", k.axis);
}

TEST_P(MkldnnAdd, ForwardMatchesPlain) {
  const AddCase& k = GetParam();
  // Plain operands run the plain kernel (its speed rule).
  OneOp op = AddOp(k).DeclinesFedPlain();
  op.CheckForward(1e-6, 1e-6);
  if (k.x.size() == 4 && k.x[1] % 8 == 0)
    EXPECT_EQ(op.last().layouts.at("out"), TIDE_LAYOUT_ONEDNN) << "Out keeps X's blocked format";
}

// Paddle 2.x's numpy broadcast (axis -1, both ways) is valid: the oneDNN kernel declines it to the
// plain kernel, fed blocked too (it called the operands invalid: tide/ops/elementwise.hpp's rule,
// as the CUDA kernel's, issue 29).
TEST(MkldnnAddNumpy, BothWaysBroadcastRunsThePlainKernel) {
  OneOp op = OneOp("elementwise_add")
                 .Input("X", "x", Random({2, 16, 4, 1}, TIDE_FP32, -1, 1, 56))
                 .Input("Y", "y", Random({1, 16, 1, 3}, TIDE_FP32, -1, 1, 57), false)
                 .Output("Out", "out")
                 .Attr("axis", int32_t(-1))
                 .DeclinesFedPlain()
                 .MayDecline(true, true);
  op.CheckForward(1e-6, 1e-6);
  EXPECT_EQ(op.Reference().Run().at("out").dims, (std::vector<int64_t>{2, 16, 4, 3}));
}

// The grad's oneDNN kernel takes equal dims (X@GRAD and Y@GRAD share Out@GRAD's bytes in its
// format), and a one-dim Y of blocked Out@GRAD (Y@GRAD sums it, from channels-last data for a
// channel bias); a one-dim Y of plain Out@GRAD (the plain kernel is faster there) and other
// broadcasts run the plain kernel. Both against the plain kernels, fed plain and blocked.
TEST_P(MkldnnAdd, GradMatchesPlain) {
  const AddCase& k = GetParam();
  const OneOp op = AddOp(k);
  const TestTensor dout = Random(k.x, TIDE_FP32, -1, 1, 58);
  std::map<std::string, TestTensor> want = op.Reference().RunGrad({"x", "y"}, "out", dout);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Net net = op.MakeNet();
    net.Backward("out", dout);
    Result got = net.Run({"x@GRAD", "y@GRAD"}, /*mkldnn=*/true, feed);
    const bool onednn = k.x == k.y || (k.y.size() == 1 && FedBlocked(feed, k.x.size()));
    EXPECT_TRUE(onednn ? RanMkldnn(got, "elementwise_add_grad")
                       : RanPlain(got, "elementwise_add_grad"));
    EXPECT_TRUE(Close(got.values.at("x@GRAD"), want.at("x"), 1e-5, 1e-5));
    EXPECT_TRUE(Close(got.values.at("y@GRAD"), want.at("y"), 1e-5, 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(Broadcasts, MkldnnAdd, ::testing::ValuesIn(kAddCases),
                         [](const ::testing::TestParamInfo<AddCase>& i) {
                           return std::string(i.param.name);
                         });

// The forward's speed rule on plain operands: a broadcast Y over 65536 elements or more keeps
// oneDNN's kernel (its threads win there); equal dims of any size run the plain one.
TEST(MkldnnAdd, PlainOperandsRunTheFasterKernel) {
  const TestTensor x = Random({2, 16, 48, 48}, TIDE_FP32, -1, 1, 59);  // 73728 elements
  const TestTensor bias = Random({16}, TIDE_FP32, -1, 1, 60);
  for (bool broadcast : {true, false}) {
    SCOPED_TRACE(broadcast ? "channel bias" : "equal dims");
    const TestTensor y = broadcast ? bias : Random(x.dims, TIDE_FP32, -1, 1, 61);
    Net net;
    net.Feed("x", x).Feed("y", y).Op("elementwise_add", {{"X", {"x"}}, {"Y", {"y"}}},
                                     {{"Out", {"out"}}}, {{"axis", 1}});
    Result want = net.Run({"out"}, /*mkldnn=*/false);
    Result got = net.Run({"out"}, /*mkldnn=*/true, InputLayout::kPlain);
    EXPECT_TRUE(broadcast ? RanMkldnn(got, "elementwise_add") : RanPlain(got, "elementwise_add"));
    EXPECT_TRUE(Close(got.values.at("out"), want.values.at("out"), 1e-6, 1e-6));
  }
}

// Y with a size-1 dim inside its aligned range, repeated over X's dim there, against a float64
// sum: X [2, 3, 4] + Y [2, 1, 4] and X [2, 3, 4, 5] + Y [1, 3, 1, 5], fed plain (the plain
// kernel runs) and blocked (oneDNN's).
TEST(MkldnnAdd, SizeOneDimsInsideYMatchFloat64Reference) {
  const std::pair<std::vector<int64_t>, std::vector<int64_t>> cases[] = {
      {{2, 3, 4}, {2, 1, 4}}, {{2, 3, 4, 5}, {1, 3, 1, 5}}};
  for (const auto& [xd, yd] : cases) {
    SCOPED_TRACE(::testing::PrintToString(yd));
    const TestTensor x = Random(xd, TIDE_FP32, -1, 1, 56), y = Random(yd, TIDE_FP32, -1, 1, 57);
    TestTensor want = x;
    for (int64_t e = 0; e < x.numel(); ++e) {
      int64_t rest = e, j = 0, stride = 1;  // Y's element: X's index with Y's 1s pinned to 0
      for (size_t d = xd.size(); d-- > 0;) {
        const int64_t i = rest % xd[d];
        rest /= xd[d];
        j += (yd[d] == 1 ? 0 : i) * stride;
        stride *= yd[d];
      }
      want.data[e] = x.data[e] + y.data[j];
    }
    for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
      SCOPED_TRACE(FeedName(feed));
      Net net;
      net.Feed("x", x).Feed("y", y).Op("elementwise_add", {{"X", {"x"}}, {"Y", {"y"}}},
                                       {{"Out", {"out"}}}, {{"axis", -1}});
      Result got = net.Run({"out"}, /*mkldnn=*/true, feed);
      EXPECT_TRUE(feed == InputLayout::kBlocked ? RanMkldnn(got, "elementwise_add")
                                                : RanPlain(got, "elementwise_add"));
      EXPECT_TRUE(Close(got.values.at("out"), want, 1e-6, 1e-7));
    }
  }
}

}  // namespace
}  // namespace tide::test::mkldnn
