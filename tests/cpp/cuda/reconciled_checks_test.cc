// reconciled_checks_test.cc: the input reading the CUDA kernels did apart from the CPU kernels'
// (issue 29), now one rule in the op's tide/ops/ header that both call: each test runs the op on
// the "GPU" place (TIDE_CUDA_TEST_PLACE=cpu:0 puts the CPU kernel there, which reads its inputs
// through the same header) and expects the CPU kernel's behaviour. On a GPU each failed before:
// the CUDA kernel skipped a check, ignored an input or refused valid operands. The CPU side is
// tests/cpp/ops's reconciled_checks_test.cc.
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

using core::GradVarName;

class GpuReconciledTest : public ::testing::Test {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  static TestTensor F(std::vector<int64_t> dims, unsigned seed = 1, double lo = -1, double hi = 1) {
    return Random(std::move(dims), TIDE_FP32, lo, hi, seed);
  }
};

// lookup_table_grad: W is [V, D] (the CUDA kernel read W's dims 0 and 1 of any W).
TEST_F(GpuReconciledTest, LookupTableGradChecksW) {
  OpCase c("lookup_table_grad");
  c.In("W", "w", F({12}))
      .In("Ids", "ids", Values({3, 1}, {1, 2, 3}, TIDE_INT64))
      .In(GradVarName("Out"), "d", F({3, 4}))
      .Out(GradVarName("W"), "dw");
  ExpectError([&] { c.Run(Gpu()); }, {"lookup_table_grad", "W must be 2-D [V, D]", "[12]"});
}

// clip and clip_grad: Paddle's Min / Max inputs over the attributes (the CUDA clip refused them,
// its clip_grad used the attributes).
TEST_F(GpuReconciledTest, ClipTakesMinAndMaxInputs) {
  TIDE_REQUIRE_OP("clip");
  OpCase c("clip");
  c.In("X", "x", F({4, 5}, 1, -2, 2))
      .In("Min", "lo", Values({1}, {-0.5}))
      .In("Max", "hi", Values({1}, {0.75}))
      .Out("Out", "out")
      .Attr("min", -2.0f)
      .Attr("max", 2.0f);  // overridden by the inputs
  ExpectGpuMatchesCpu(c);
  ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
}

// batch_norm: trainable_statistics keeps the batch's statistics when is_test (the CUDA kernel
// used the running ones), and MomentumTensor gives the momentum (the CUDA kernel refused it).
TEST_F(GpuReconciledTest, BatchNormReadsTrainableStatisticsAndMomentumTensor) {
  auto bn = [&](bool trainable, bool momentum_tensor) {
    OpCase c("batch_norm");
    c.In("X", "x", F({4, 3, 2, 2}, 1, -2, 3))
        .In("Scale", "scale", F({3}, 2, 0.5, 1.5))
        .In("Bias", "bias", F({3}, 3))
        .In("Mean", "mean", F({3}, 4, -0.5, 0.5))
        .In("Variance", "var", F({3}, 5, 0.5, 2))
        .Out("Y", "y")
        .Out("MeanOut", "mean")
        .Out("VarianceOut", "var")
        .Out("SavedMean", "saved_mean")
        .Out("SavedVariance", "saved_var")
        .Attr("is_test", trainable)
        .Attr("trainable_statistics", trainable)
        .Attr("momentum", 0.8f)
        .Attr("epsilon", 1e-5f);
    if (momentum_tensor) c.In("MomentumTensor", "m", Values({1}, {0.25}));
    return c;
  };
  ExpectGpuMatchesCpu(bn(true, false));
  ExpectGpuMatchesCpu(bn(false, true));
}

// dropout: Paddle's Seed input fixes the mask (the CUDA kernel drew a fresh seed each run).
TEST_F(GpuReconciledTest, DropoutSeedInputRepeatsTheMask) {
  OpCase c("dropout");
  c.In("X", "x", F({64, 8}))
      .In("Seed", "seed", Values({1}, {7}, TIDE_INT32))
      .Out("Out", "out")
      .Out("Mask", "mask")
      .Attr("dropout_prob", 0.5f)
      .Attr("is_test", false);
  const auto first = c.Run(Gpu()), second = c.Run(Gpu());
  EXPECT_EQ(first.at("mask").data, second.at("mask").data);
  EXPECT_EQ(first.at("out").data, second.at("out").data);
}

// elementwise ops: with axis -1, X and Y that Fluid's rule does not fit but numpy's does are
// valid (the CPU kernel broadcasts them both ways); the CUDA kernel declines them (the core runs
// the CPU kernel) instead of calling them invalid. Strict placement makes the decline an error.
TEST_F(GpuReconciledTest, ElementwiseDeclinesNumpyBroadcast) {
  TIDE_REQUIRE_REAL_GPU();
  OpCase c("elementwise_add");
  c.In("X", "x", F({3, 1})).In("Y", "y", F({1, 4}, 2)).Out("Out", "out");
  ExpectError([&] { c.Run(Gpu()); }, {"elementwise_add", "both ways"});
}

}  // namespace
}  // namespace tide::test::cuda
