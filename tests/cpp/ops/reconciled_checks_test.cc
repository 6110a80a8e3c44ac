// reconciled_checks_test.cc: the input checks the CPU and CUDA kernels of an op had each their
// own way (issue 29), now one rule in the op's tide/ops/ header that both kernels call. Each test
// is a check the CPU kernel lacked (it read past a buffer, divided by zero or named the wrong
// thing) or worded apart from the CUDA kernel's; the CUDA side is tests/cpp/cuda's
// reconciled_checks_test.cc.
#include <string>
#include <vector>

#include "one_op_program.h"
#include "op_tester.h"

namespace tide::test {
namespace {

using core::GradVarName;

TestTensor F(std::vector<int64_t> dims, unsigned seed = 1) {
  return Random(std::move(dims), TIDE_FP32, -1, 1, seed);
}

// softmax_with_cross_entropy: Logits with no classes on the class axis have no softmax (the CPU
// kernel read Logits' first class of each row).
TEST(ReconciledChecks, SoftmaxWithCrossEntropyNeedsClasses) {
  OneOpProgram op("softmax_with_cross_entropy");
  op.In("Logits", "x", F({2, 0})).In("Label", "l", F({2, 0})).Attr("soft_label", true);
  op.Out("Softmax", "sm").Out("Loss", "loss");
  ExpectError([&] { op.Run(); }, {"softmax_with_cross_entropy", "Logits [2, 0]", "no classes"});
}

// cross_entropy2_grad: a Label that is not int64 is named (the CPU kernel's error was the
// generic "tensor holds int32, read as int64").
TEST(ReconciledChecks, CrossEntropy2GradNamesAnInt32Label) {
  OneOpProgram op("cross_entropy2_grad");
  op.In("Label", "l", Values({2, 1}, {0, 1}, TIDE_INT32))
      .In("MatchX", "m", F({2, 1}))
      .In("XShape", "xs", F({0, 2, 3}))
      .In(GradVarName("Y"), "dy", F({2, 1}))
      .Out(GradVarName("X"), "dx");
  ExpectError([&] { op.Run(); }, {"cross_entropy2_grad", "Label ('l') must be int64", "int32"});
}

// mul_grad and matmul_grad: Out@GRAD must hold Out's values (the CPU kernels read it as m x n).
TEST(ReconciledChecks, MulGradChecksOutGrad) {
  OneOpProgram op("mul_grad");
  op.In("X", "x", F({2, 3})).In("Y", "y", F({3, 4})).In(GradVarName("Out"), "d", F({2, 5}));
  op.Out(GradVarName("X"), "dx").Out(GradVarName("Y"), "dy");
  ExpectError([&] { op.Run(); }, {"mul_grad", "Out@GRAD [2, 5]", "2 x 4 values"});
}

TEST(ReconciledChecks, MatmulGradChecksOutGrad) {
  OneOpProgram op("matmul_grad");
  op.In("X", "x", F({2, 3})).In("Y", "y", F({3, 4})).In(GradVarName("Out"), "d", F({2, 5}));
  op.Out(GradVarName("X"), "dx").Out(GradVarName("Y"), "dy");
  ExpectError([&] { op.Run(); }, {"matmul_grad", "Out@GRAD [2, 5]", "does not match Out [2, 4]"});
}

// reduce_max_grad: Out, which the grad compares X with, has Out's dims.
TEST(ReconciledChecks, ReduceMaxGradChecksOut) {
  OneOpProgram op("reduce_max_grad");
  op.In("X", "x", F({2, 3})).In("Out", "o", F({5})).In(GradVarName("Out"), "d", F({2}));
  op.Attr("dim", std::vector<int32_t>{1}).Out(GradVarName("X"), "dx");
  ExpectError([&] { op.Run(); }, {"reduce_max_grad", "Out has dims [5], expected [2]"});
}

// mean_grad and squared_l2_norm_grad: Out@GRAD's first value is the gradient; an empty one has
// none.
TEST(ReconciledChecks, ScalarReductionGradsNeedOutGrad) {
  for (const char* type : {"mean_grad", "squared_l2_norm_grad"}) {
    OneOpProgram op(type);
    op.In("X", "x", F({3})).In(GradVarName("Out"), "d", F({0})).Out(GradVarName("X"), "dx");
    ExpectError([&] { op.Run(); }, {type, "Out@GRAD is empty"});
  }
}

// softmax_grad, sqrt_grad and clip_grad: Out@GRAD holds as many values as what they pair it
// with (the CPU kernels read past it).
TEST(ReconciledChecks, ElementwiseGradsCheckOutGrad) {
  OneOpProgram sm("softmax_grad");
  sm.In("Out", "o", F({2, 3})).In(GradVarName("Out"), "d", F({2, 4})).Out(GradVarName("X"), "dx");
  ExpectError([&] { sm.Run(); }, {"softmax_grad", "Out@GRAD [2, 4]", "does not match Out [2, 3]"});
  OneOpProgram sq("sqrt_grad");
  sq.In("Out", "o", F({2, 3})).In(GradVarName("Out"), "d", F({7})).Out(GradVarName("X"), "dx");
  ExpectError([&] { sq.Run(); }, {"sqrt_grad", "Out@GRAD [7]", "does not match Out [2, 3]"});
  OneOpProgram cl("clip_grad");
  cl.In("X", "x", F({2, 3})).In(GradVarName("Out"), "d", F({7})).Out(GradVarName("X"), "dx");
  cl.Attr("min", -0.5f).Attr("max", 0.5f);
  ExpectError([&] { cl.Run(); }, {"clip_grad", "Out@GRAD [7]", "does not match X [2, 3]"});
}

// batch_norm_grad: Scale, and the statistics it reads, hold C values (the CPU kernel read them
// for every channel).
TEST(ReconciledChecks, BatchNormGradChecksScaleAndStatistics) {
  auto op = [](TestTensor scale, TestTensor mean) {
    OneOpProgram g("batch_norm_grad");
    g.In("X", "x", F({2, 3, 2, 2}))
        .In("Scale", "s", std::move(scale))
        .In("Bias", "b", F({3}))
        .In("Mean", "m", std::move(mean))
        .In("Variance", "v", Random({3}, TIDE_FP32, 0.5, 1))
        .In("SavedMean", "sm", F({3}))
        .In("SavedVariance", "sv", F({3}))
        .In(GradVarName("Y"), "dy", F({2, 3, 2, 2}))
        .Out(GradVarName("X"), "dx")
        .Attr("use_global_stats", true);
    return g;
  };
  ExpectError([&] { op(F({5}), F({3})).Run(); }, {"batch_norm_grad", "Scale must be [3]", "[5]"});
  ExpectError([&] { op(F({3}), F({2})).Run(); },
              {"batch_norm_grad", "Mean / Variance must hold C = 3 values", "got 2 / 3"});
}

// layer_norm_grad: Scale as the forward checks it (the CPU kernel read it for every feature).
TEST(ReconciledChecks, LayerNormGradChecksScale) {
  OneOpProgram op("layer_norm_grad");
  op.In("X", "x", F({2, 6}))
      .In("Scale", "s", F({4}))
      .In("Bias", "b", F({6}))
      .In(GradVarName("Y"), "dy", F({2, 6}))
      .Out(GradVarName("X"), "dx")
      .Attr("begin_norm_axis", int32_t(1));
  ExpectError([&] { op.Run(); }, {"layer_norm_grad", "Scale ('s') has 4 elements, expected 6"});
}

// label_smooth: X has a last dim to smooth over.
TEST(ReconciledChecks, LabelSmoothNeedsRankOne) {
  OneOpProgram op("label_smooth");
  op.In("X", "x", Values({}, {1})).Out("Out", "o").Attr("epsilon", 0.1f);
  ExpectError([&] { op.Run(); }, {"label_smooth", "X must have rank >= 1"});
}

// gather_grad and gather_nd_grad: Out@GRAD has Out's dims, and gather_nd's Index rows fit X.
TEST(ReconciledChecks, GatherGradsCheckTheirInputs) {
  OneOpProgram g("gather_grad");
  g.In("X", "x", F({4, 3}))
      .In("Index", "i", Values({2}, {0, 3}, TIDE_INT64))
      .In(GradVarName("Out"), "d", F({3, 3}))
      .Out(GradVarName("X"), "dx");
  ExpectError([&] { g.Run(); }, {"gather_grad", "Out@GRAD has dims [3, 3], expected [2, 3]"});
  OneOpProgram nd("gather_nd_grad");
  nd.In("X", "x", F({2, 3}))
      .In("Index", "i", Values({1, 3}, {0, 1, 2}, TIDE_INT64))
      .In(GradVarName("Out"), "d", F({1}))
      .Out(GradVarName("X"), "dx");
  ExpectError([&] { nd.Run(); }, {"gather_nd_grad", "Index's last dim (3) exceeds X's rank"});
  OneOpProgram nd2("gather_nd_grad");
  nd2.In("X", "x", F({2, 3}))
      .In("Index", "i", Values({1, 1}, {1}, TIDE_INT64))
      .In(GradVarName("Out"), "d", F({1, 2}))
      .Out(GradVarName("X"), "dx");
  ExpectError([&] { nd2.Run(); }, {"gather_nd_grad", "Out@GRAD has dims [1, 2], expected [1, 3]"});
}

// squeeze2_grad: worded as every grad that reshapes Out@GRAD (reshape2_grad's, the CUDA
// kernel's).
TEST(ReconciledChecks, SqueezeGradWordsTheReshapeRule) {
  OneOpProgram op("squeeze2_grad");
  op.In("XShape", "xs", F({0, 2, 1, 3}))
      .In(GradVarName("Out"), "d", F({5}))
      .Out(GradVarName("X"), "dx")
      .Attr("axes", std::vector<int32_t>{1});
  ExpectError([&] { op.Run(); },
              {"squeeze2_grad", "Out@GRAD [5] does not have X's 6 elements (X [2, 1, 3])"});
}

// scale: ScaleTensor's errors name it, as tide/ops/int_inputs.hpp's NumberInput does for every
// kernel.
TEST(ReconciledChecks, ScaleNamesItsScaleTensor) {
  OneOpProgram op("scale");
  op.In("X", "x", F({2})).In("ScaleTensor", "st", Values({1}, {1}, TIDE_BOOL)).Out("Out", "o");
  ExpectError([&] { op.Run(); }, {"scale", "ScaleTensor ('st') must be float32", "bool"});
}

}  // namespace
}  // namespace tide::test
