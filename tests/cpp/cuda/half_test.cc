// half_test.cc: the float16 kernels (elementwise ops, activations and their grads, scale, sum,
// fills, casts): float32 data cast to float16 on the GPU, the op, cast back, against the float32
// op on the CPU within half precision. The CPU has no float16 kernels, so these need a real GPU.
#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

// op(inputs) in float16 on the GPU vs float32 on the CPU. `inputs`: param -> var; outputs: one.
void ExpectHalfMatches(const std::string& type, const std::map<std::string, std::string>& inputs,
                       const std::string& out_param, const std::map<std::string, TestTensor>& feeds,
                       const core::AttributeMap& attrs = {}) {
  SCOPED_TRACE(type);
  core::VariableNameMap in32, in16;
  std::vector<core::OpDesc> gpu_ops;
  for (const auto& [param, var] : inputs) {
    in32[param].push_back(var);
    in16[param].push_back(var + "_h");
    gpu_ops.push_back(CastOp(var, var + "_h", TIDE_FP32, TIDE_FP16));
  }
  gpu_ops.push_back(core::OpDesc(type, in16, {{out_param, {"out_h"}}}, attrs));
  gpu_ops.push_back(CastOp("out_h", "out", TIDE_FP16, TIDE_FP32));
  auto gpu = RunOps(Gpu(), gpu_ops, feeds, {"out"});
  auto cpu =
      RunOps(Cpu(), {core::OpDesc(type, in32, {{out_param, {"out"}}}, attrs)}, feeds, {"out"});
  ExpectClose(gpu["out"], cpu["out"], {5e-3, 5e-3}, type + " in float16");
}

TEST(GpuHalf, ElementwiseOpsMatchFloat32) {
  TIDE_REQUIRE_REAL_GPU();
  for (const char* op : {"elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div",
                         "elementwise_max", "elementwise_min"})
    ExpectHalfMatches(
        op, {{"X", "x"}, {"Y", "y"}}, "Out",
        {{"x", Random({4, 8}, TIDE_FP32, -2, 2, 1)}, {"y", Random({8}, TIDE_FP32, 0.5, 2, 2)}});
}

TEST(GpuHalf, ActivationsAndGradsMatchFloat32) {
  TIDE_REQUIRE_REAL_GPU();
  for (const char* op : {"relu", "sigmoid", "tanh", "square"})
    ExpectHalfMatches(op, {{"X", "x"}}, "Out", {{"x", Random({5, 7}, TIDE_FP32, -2, 2, 3)}});
  // Grads read Out (relu, sigmoid, tanh) or X (square), and Out@GRAD.
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"})
    ExpectHalfMatches(op, {{"Out", "o"}, {dout, "g"}}, dx,
                      {{"o", Random({5, 7}, TIDE_FP32, 0.05, 0.95, 4)},
                       {"g", Random({5, 7}, TIDE_FP32, -1, 1, 5)}});
  ExpectHalfMatches(
      "square_grad", {{"X", "x"}, {dout, "g"}}, dx,
      {{"x", Random({5, 7}, TIDE_FP32, -2, 2, 6)}, {"g", Random({5, 7}, TIDE_FP32, -1, 1, 7)}});
}

TEST(GpuHalf, ScaleSumAssignMatchFloat32) {
  TIDE_REQUIRE_REAL_GPU();
  ExpectHalfMatches("scale", {{"X", "x"}}, "Out", {{"x", Random({9}, TIDE_FP32, -2, 2, 8)}},
                    {{"scale", 1.5f}, {"bias", 0.25f}});
  ExpectHalfMatches("assign", {{"X", "x"}}, "Out", {{"x", Random({9}, TIDE_FP32, -2, 2, 9)}});
  // sum takes a list: built by hand.
  std::vector<core::OpDesc> ops = {
      CastOp("a", "a_h", TIDE_FP32, TIDE_FP16), CastOp("b", "b_h", TIDE_FP32, TIDE_FP16),
      core::OpDesc("sum", {{"X", {"a_h", "b_h"}}}, {{"Out", {"s_h"}}}, {}),
      CastOp("s_h", "s", TIDE_FP16, TIDE_FP32)};
  std::map<std::string, TestTensor> feeds{{"a", Random({6}, TIDE_FP32, -1, 1, 10)},
                                          {"b", Random({6}, TIDE_FP32, -1, 1, 11)}};
  auto got = RunOps(Gpu(), ops, feeds, {"s"});
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(got["s"].data[i], feeds["a"].data[i] + feeds["b"].data[i], 5e-3);
}

TEST(GpuHalf, FillConstantAndCastsRoundTrip) {
  TIDE_REQUIRE_REAL_GPU();
  std::vector<core::OpDesc> ops = {core::OpDesc("fill_constant", {}, {{"Out", {"f_h"}}},
                                                {{"shape", std::vector<int64_t>{2, 3}},
                                                 {"value", 0.375f},
                                                 {"dtype", int32_t(TIDE_FP16)}}),
                                   CastOp("f_h", "f", TIDE_FP16, TIDE_FP64)};
  auto got = RunOps(Gpu(), ops, {}, {"f"});
  ASSERT_EQ(got["f"].data.size(), 6u);
  for (double v : got["f"].data) EXPECT_EQ(v, 0.375);  // exact in float16
}

}  // namespace
}  // namespace tide::test::cuda
