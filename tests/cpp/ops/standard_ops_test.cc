// standard_ops_test.cc: the SDK's standard op semantics (tide/ops/) used directly, as a vendor's
// kernel would, with a context of its own that has Attr<T>(): shapes and error messages.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <tide/ops/batch_norm.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/conv.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/ops/loss.hpp>
#include <tide/ops/matmul.hpp>
#include <tide/ops/metric.hpp>
#include <tide/ops/pool.hpp>
#include <tide/ops/reshape.hpp>
#include <tide/ops/split_concat.hpp>
#include <tide/ops/transpose.hpp>
#include <type_traits>
#include <vector>

namespace tide::test {
namespace {

using tide::Dims;

// Any type with op_type() and Attr<T>(name) will do; this one holds ints, bools and int lists.
struct FakeContext {
  std::string op = "pool2d";
  std::map<std::string, int32_t> ints;
  std::map<std::string, bool> bools;
  std::map<std::string, std::vector<int32_t>> lists;
  std::string pooling_type = "avg";

  const char* op_type() const { return op.c_str(); }
  template <typename T>
  T Attr(const char* name) const {
    if constexpr (std::is_same_v<T, int32_t>)
      return ints.at(name);
    else if constexpr (std::is_same_v<T, bool>)
      return bools.at(name);
    else if constexpr (std::is_same_v<T, std::vector<int32_t>>)
      return lists.at(name);
    else
      return pooling_type;  // the only string attribute read here
  }
};

FakeContext PoolContext(std::vector<int32_t> ksize, std::vector<int32_t> strides,
                        std::vector<int32_t> pads, bool ceil_mode = false, bool global = false,
                        bool adaptive = false) {
  FakeContext c;
  c.lists = {{"ksize", ksize}, {"strides", strides}, {"paddings", pads}};
  c.bools = {{"exclusive", true},
             {"adaptive", adaptive},
             {"global_pooling", global},
             {"ceil_mode", ceil_mode}};
  return c;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tide::Error& e) {
    return e.what();
  }
  return "";
}

TEST(StandardOps, PoolGeometry) {
  const Dims x{2, 3, 5, 5};
  EXPECT_EQ(tide::ops::GetPoolGeom(PoolContext({2, 2}, {2, 2}, {0, 0}), "pool2d", x).out_dims(),
            (Dims{2, 3, 2, 2}));
  EXPECT_EQ(
      tide::ops::GetPoolGeom(PoolContext({2, 2}, {2, 2}, {0, 0}, true), "pool2d", x).out_dims(),
      (Dims{2, 3, 3, 3}));
  EXPECT_EQ(tide::ops::GetPoolGeom(PoolContext({3, 3}, {1, 1}, {0, 0}, false, true), "pool2d", x)
                .out_dims(),
            (Dims{2, 3, 1, 1}));
  const auto g =
      tide::ops::GetPoolGeom(PoolContext({2, 3}, {1, 1}, {0, 0}, false, false, true), "pool2d", x);
  EXPECT_EQ(g.out_dims(), (Dims{2, 3, 2, 3}));
  const tide::ops::PoolWindow w = tide::ops::GetPoolWindow(g, 1, 1);  // rows [2, 5), cols [1, 4)
  EXPECT_EQ(std::vector<int64_t>({w.y0, w.y1, w.x0, w.x1, w.size}),
            std::vector<int64_t>({2, 5, 1, 4, 9}));
  EXPECT_EQ(tide::ops::PoolOutSize(-1, 2, 0, 2, false), -1);  // unknown at compile time
  EXPECT_EQ(ErrorOf([&] {
              tide::ops::GetPoolGeom(PoolContext({2}, {1, 1}, {0, 0}), "pool2d", x);
            }),
            "op 'pool2d': attribute 'ksize' needs 2 values (h, w), got 1");
}

TEST(StandardOps, ConvGeometryAndGroups) {
  FakeContext c;
  c.op = "conv2d";
  c.lists = {{"strides", {1, 1}}, {"paddings", {1, 1}}, {"dilations", {1, 1}}};
  c.ints = {{"groups", 2}};
  EXPECT_EQ(tide::ops::GetConvGeom(c, "conv2d", {1, 4, 6, 6}, {6, 2, 3, 3}).out_dims(),
            (Dims{1, 6, 6, 6}));
  EXPECT_NE(ErrorOf([&] {
              tide::ops::GetConvGeom(c, "conv2d", {1, 4, 6, 6}, {6, 4, 3, 3});
            }).find("has 4 channels but Filter [6, 4, 3, 3] expects C/groups = 4"),
            std::string::npos);
}

TEST(StandardOps, Broadcast) {
  // axis = -1 aligns Y's full dims before its trailing 1s drop: Y [3, 1] lies on X's dim 1.
  const tide::ops::Broadcast b = tide::ops::GetBroadcast("elementwise_add", {2, 3, 4}, {3, 1}, -1);
  EXPECT_EQ(std::vector<int64_t>({b.pre, b.n, b.post, b.axis}), std::vector<int64_t>({2, 3, 4, 1}));
  EXPECT_EQ(tide::ops::BroadcastYDims("elementwise_add", {2, 3, 4}, {3, 1}, -1), (Dims{1, 3, 1}));
  EXPECT_EQ(tide::ops::BroadcastYDims("elementwise_add", {2, 3, 4}, {1}, -1), (Dims{1, 1, 1}));
  EXPECT_EQ(ErrorOf([] {
              tide::ops::GetBroadcast("elementwise_add", {2, 3}, {4}, -1);
            }),
            "op 'elementwise_add': cannot broadcast Y [4] onto X [2, 3] at axis 1 (dim 1: 3 vs 4)");
}

// Fluid's rule with the default axis aligns Y's full dims, trailing 1s too, as GetBroadcast does:
// Y [8, 3, 1] lies on X [2, 8, 3, 3]'s dims 1 to 3, so the numpy path (both ways) is not taken
// (ops_math's copy of the rule aligned Y without its trailing 1s and took it, and the oneDNN and
// CUDA kernels, which decline the numpy path, would have declined Fluid operands).
TEST(StandardOps, ElementwiseTakesFluidsRuleWhereItFits) {
  EXPECT_TRUE(tide::ops::FluidRuleFits({2, 8, 3, 3}, {8, 3, 1}, -1));
  EXPECT_FALSE(tide::ops::NumpyPath({2, 8, 3, 3}, {8, 3, 1}, -1));
  EXPECT_NO_THROW(tide::ops::GetBroadcast("elementwise_add", {2, 8, 3, 3}, {8, 3, 1}, -1, true));
  EXPECT_FALSE(tide::ops::FluidRuleFits({3, 1}, {1, 4}, -1));
  EXPECT_TRUE(tide::ops::NumpyPath({3, 1}, {1, 4}, -1));
  EXPECT_EQ(tide::ops::GetNumpyBroadcast("elementwise_add", {3, 1}, {1, 4}).out,
            (tide::Dims{3, 4}));
}

TEST(StandardOps, MatmulAndMul) {
  const tide::ops::MatmulShape s = tide::ops::GetMatmulShape({5, 2, 3}, {3}, false, false);
  EXPECT_EQ(s.out, (Dims{5, 2}));
  EXPECT_EQ(std::vector<int64_t>({s.batch, s.m, s.n, s.k}), std::vector<int64_t>({5, 2, 1, 3}));
  EXPECT_EQ(tide::ops::MulOutDims("mul", {2, 3, 4}, {12, 5}, 1, 1), (Dims{2, 5}));
  EXPECT_EQ(tide::ops::MulOutDims("mul", {-1, 12}, {12, 5}, 1, 1), (Dims{-1, 5}));
}

TEST(StandardOps, SplitAndConcat) {
  int axis = 0;
  EXPECT_EQ(tide::ops::SplitDims("split", {4, 10}, -1, 0, {3, -1, 2}, 3, &axis),
            (std::vector<Dims>{{4, 3}, {4, 5}, {4, 2}}));
  EXPECT_EQ(axis, 1);
  EXPECT_EQ(tide::ops::ConcatDims("concat", {{2, 3}, {2, -1}, {2, 4}}, 1, &axis), (Dims{2, -1}));
  EXPECT_EQ(ErrorOf([&] {
              tide::ops::SplitDims("split", {4, 10}, 1, 3, {}, 3, &axis);
            }),
            "op 'split': X [4, 10] has 10 entries on axis 1, not divisible by num = 3");
}

TEST(StandardOps, ReshapeAndFlatten) {
  using tide::ops::ReshapeDims;
  EXPECT_EQ(ReshapeDims("reshape", {0, -1}, {2, 3, 4}), (Dims{2, 12}));
  EXPECT_EQ(ReshapeDims("reshape", {4, 6}, {2, 3, 4}), (Dims{4, 6}));
  // Compile time: an unknown batch copied by 0 cancels, so the -1 is still inferred...
  EXPECT_EQ(ReshapeDims("reshape", {0, -1}, {-1, 3, 4}), (Dims{-1, 12}));
  // ...but an unknown dim that is not copied leaves it unknown.
  EXPECT_EQ(ReshapeDims("reshape", {3, -1}, {-1, 3, 4}), (Dims{3, -1}));
  EXPECT_EQ(ErrorOf([] {
              ReshapeDims("reshape", {-1, -1}, {2, 3});
            }),
            "op 'reshape': shape [-1, -1] has more than one -1");
  EXPECT_EQ(ErrorOf([] {
              ReshapeDims("reshape", {5, -1}, {2, 3});
            }),
            "op 'reshape': cannot reshape X [2, 3] to [5, -1]: 6 elements do not divide into 5");
  EXPECT_EQ(ErrorOf([] {
              ReshapeDims("reshape2", {4, 2}, {2, 3});
            }),
            "op 'reshape2': cannot reshape X [2, 3] (6 elements) to [4, 2]");
  EXPECT_EQ(ErrorOf([] {
              ReshapeDims("reshape", {0, 0, 0}, {2, 3});
            }),
            "op 'reshape': shape [0, 0, 0] copies dim 2 (0) but X [2, 3] has rank 2");

  EXPECT_EQ(tide::ops::FlattenDims("flatten", {2, 3, 4}, 1), (Dims{2, 12}));
  EXPECT_EQ(tide::ops::FlattenDims("flatten", {2, 3, 4}, 0), (Dims{1, 24}));
  EXPECT_EQ(tide::ops::FlattenDims("flatten", {-1, 3, 4}, 1), (Dims{-1, 12}));
  EXPECT_EQ(ErrorOf([] {
              tide::ops::FlattenDims("flatten2", {2, 3}, 3);
            }),
            "op 'flatten2': axis 3 must be in [0, 2] for X [2, 3]");
  EXPECT_EQ(tide::ops::XShapeDims({2, 3}), (Dims{0, 2, 3}));
  EXPECT_EQ(tide::ops::DimsProductOrUnknown({2, -1, 4}, 0, 1), 2);
  EXPECT_EQ(tide::ops::DimsProductOrUnknown({2, -1, 4}), -1);
}

TEST(StandardOps, TransposePermutation) {
  auto perm = tide::ops::CheckedPerm("transpose", {2, 0, 1}, {4, 5, 6});
  EXPECT_EQ(perm, (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(tide::ops::Permuted({4, 5, 6}, perm), (Dims{6, 4, 5}));
  // The inverse permutation takes the permuted dims back.
  EXPECT_EQ(tide::ops::Permuted({6, 4, 5}, tide::ops::InversePerm(perm)), (Dims{4, 5, 6}));
  EXPECT_EQ(ErrorOf([] {
              tide::ops::CheckedPerm("transpose", {0, 0}, {4, 5});
            }),
            "op 'transpose': axis must be a permutation of [0, 2), got entry 0 at 1");
  EXPECT_EQ(ErrorOf([] {
              tide::ops::CheckedPerm("transpose2", {1, 0}, {4, 5, 6});
            }),
            "op 'transpose2': axis has 2 entries but X [4, 5, 6] has rank 3");
}

TEST(StandardOps, LossLabels) {
  int axis = 0;
  auto v = tide::ops::GetClassView("softmax_with_cross_entropy", {2, 5, 3}, -2, &axis);
  EXPECT_EQ(axis, 1);
  EXPECT_EQ(v.pre, 2);
  EXPECT_EQ(v.k, 5);
  EXPECT_EQ(v.post, 3);
  EXPECT_EQ(tide::ops::GetClassView("swce", {-1, 10}, -1, &axis).pre, -1);
  // Hard labels: 1 on the class axis; an unknown batch passes at compile time.
  tide::ops::CheckSoftmaxLabel("swce", {-1, 10}, {-1, 1}, 1, false);
  tide::ops::CheckSoftmaxLabel("swce", {4, 10}, {4, 10}, 1, true);
  EXPECT_EQ(ErrorOf([] {
              tide::ops::CheckSoftmaxLabel("swce", {4, 10}, {4, 10}, 1, false);
            }),
            "op 'swce': Label [4, 10] does not fit Logits [4, 10]: hard labels have Logits' dims "
            "with 1 on the class axis");
  tide::ops::CheckCrossEntropyLabel("cross_entropy", {4, 10}, {4, 1}, false);
  EXPECT_EQ(ErrorOf([] {
              tide::ops::CheckCrossEntropyLabel("cross_entropy", {4, 10}, {4, 1}, true);
            }),
            "op 'cross_entropy': Label [4, 1] does not fit X [4, 10]: soft labels have X's dims");
  EXPECT_EQ(ErrorOf([] { tide::ops::CheckCrossEntropyLabel("cross_entropy", {10}, {1}, false); }),
            "op 'cross_entropy': X must have rank >= 2 ([N, D]), got [10]");
}

TEST(StandardOps, MetricChecks) {
  auto v = tide::ops::GetTopKGradView("top_k_grad", {2, 3, 7}, {2, 3, 2}, {2, 3, 2});
  EXPECT_EQ(v.rows, 6);
  EXPECT_EQ(v.d, 7);
  EXPECT_EQ(v.k, 2);
  EXPECT_EQ(ErrorOf([] {
              tide::ops::GetTopKGradView("top_k_grad", {6, 7}, {6, 2}, {6, 3});
            }),
            "op 'top_k_grad': Out@GRAD [6, 3] and Indices [6, 2] must hold 2 values per row of X "
            "[6, 7]");
  EXPECT_EQ(ErrorOf([] {
              tide::ops::GetTopKGradView("top_k_grad", {}, {6, 2}, {6, 2});
            }),
            "op 'top_k_grad': X [] and Indices [6, 2] must have rank >= 1");
  EXPECT_EQ(tide::ops::CheckAccuracyInputs("accuracy", {8, 3}, {8, 1}),
            (std::pair<int64_t, int64_t>{8, 3}));
  EXPECT_EQ(ErrorOf([] {
              tide::ops::CheckAccuracyInputs("accuracy", {8, 3}, {7, 1});
            }),
            "op 'accuracy': Indices [8, 3] and Label [7, 1] must be [N, k] and [N, 1]");
}

TEST(StandardOps, BatchNormView) {
  auto nchw = tide::ops::GetBnView("batch_norm", {8, 3, 5, 7}, "NCHW");
  EXPECT_EQ(nchw.outer, 8);
  EXPECT_EQ(nchw.c, 3);
  EXPECT_EQ(nchw.inner, 35);
  auto nhwc = tide::ops::GetBnView("batch_norm", {8, 5, 7, 3}, "NHWC");
  EXPECT_EQ(nhwc.outer, 280);
  EXPECT_EQ(nhwc.c, 3);
  EXPECT_EQ(nhwc.inner, 1);
  EXPECT_EQ(tide::ops::GetBnView("batch_norm", {-1, 3, 5, 7}, "NHWC").outer, -1);
  EXPECT_EQ(ErrorOf([] { tide::ops::GetBnView("batch_norm", {8}, "NCHW"); }),
            "op 'batch_norm': X must have rank 2 to 5, got [8]");
}

}  // namespace
}  // namespace tide::test
