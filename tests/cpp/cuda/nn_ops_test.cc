// nn_ops_test.cc: every ops_nn kernel of the CUDA plugin against the same op on the CPU, outputs
// and grads, float32 and float64: conv2d through cuDNN, pool2d and batch_norm in all their modes,
// losses, metrics, dropout, lookup_table (dense and SelectedRows grads) and the shape ops.
#include <cmath>
#include <set>

#include "core/framework/selected_rows.h"
#include "core/framework/tensor_util.h"
#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

class GpuNnTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  TideDataType t() const { return GetParam(); }
  TestTensor R(std::vector<int64_t> dims, double lo = -1, double hi = 1, unsigned seed = 1) const {
    return Random(std::move(dims), t(), lo, hi, seed);
  }
  // Convolutions and long reductions sum hundreds of float32 terms in another order.
  Tolerance Loose() const {
    return t() == TIDE_FP32 ? Tolerance{1e-4, 1e-4} : Tolerance{1e-9, 1e-10};
  }
};

// ---------------------------------------------------------------------------------------------
// conv2d / depthwise_conv2d
TEST_P(GpuNnTest, ConvolutionsAndGradsMatchCpu) {
  struct Case {
    const char* op;
    std::vector<int64_t> x, f;
    std::vector<int32_t> strides, pads, dils;
    int32_t groups;
  };
  const Case cases[] = {
      {"conv2d", {2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"conv2d", {2, 3, 8, 9}, {5, 3, 3, 2}, {2, 1}, {1, 2}, {1, 1}, 1},
      {"conv2d", {1, 4, 9, 9}, {6, 2, 3, 3}, {1, 2}, {2, 1}, {2, 1}, 2},
      {"conv2d", {2, 6, 5, 5}, {4, 6, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"conv2d", {8, 1, 28, 28}, {20, 1, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1},  // LeNet's first
      {"depthwise_conv2d", {2, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4},
  };
  unsigned seed = 1;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.op) + " X " + DimsStr(k.x) + " F " + DimsStr(k.f));
    OpCase c(k.op);
    c.In("Input", "x", R(k.x, -1, 1, seed++))
        .In("Filter", "f", R(k.f, -1, 1, seed++))
        .Out("Output", "out")
        .Attr("strides", k.strides)
        .Attr("paddings", k.pads)
        .Attr("dilations", k.dils)
        .Attr("groups", k.groups);
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, {"x", "f"}, {"out"}, Loose());
    ExpectGpuGradsMatchCpu(c, {"f"}, {"out"}, Loose());  // only the filter's grad
  }
}

// ---------------------------------------------------------------------------------------------
// pool2d
TEST_P(GpuNnTest, PoolingAndGradsMatchCpu) {
  struct Case {
    const char* type;
    std::vector<int64_t> x;
    std::vector<int32_t> k, s, p;
    bool global, exclusive, adaptive, ceil;
  };
  const Case cases[] = {
      {"max", {2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, true, false, false},
      {"avg", {2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, true, false, false},
      {"max", {2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false, true, false, false},  // overlapping
      {"avg", {2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false, true, false, false},
      {"avg", {2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false, false, false, false},  // / kh * kw
      {"max", {1, 2, 7, 8}, {3, 3}, {2, 2}, {0, 0}, false, true, false, true},    // ceil_mode
      {"avg", {1, 2, 7, 8}, {3, 3}, {2, 2}, {1, 0}, false, true, false, true},
      {"max", {2, 3, 5, 6}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},  // global
      {"avg", {2, 3, 5, 6}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},
      {"max", {1, 2, 12, 12}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},  // scatter path
      {"max", {1, 2, 10, 7}, {3, 2}, {1, 1}, {0, 0}, false, true, true, false},   // adaptive
      {"avg", {1, 2, 10, 7}, {3, 2}, {1, 1}, {0, 0}, false, true, true, false},
  };
  unsigned seed = 10;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.type) + " X " + DimsStr(k.x) + (k.global ? " global" : "") +
                 (k.adaptive ? " adaptive" : "") + (k.ceil ? " ceil" : "") +
                 (k.exclusive ? "" : " inclusive"));
    OpCase c("pool2d");
    c.In("X", "x", R(k.x, -1, 1, seed++))
        .Out("Out", "out")
        .Attr("pooling_type", std::string(k.type))
        .Attr("ksize", k.k)
        .Attr("strides", k.s)
        .Attr("paddings", k.p)
        .Attr("global_pooling", k.global)
        .Attr("exclusive", k.exclusive)
        .Attr("adaptive", k.adaptive)
        .Attr("ceil_mode", k.ceil);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
}

// ---------------------------------------------------------------------------------------------
// batch_norm: training (running statistics updated in place) and test, NCHW and NHWC.
TEST_P(GpuNnTest, BatchNormAndGradsMatchCpu) {
  struct Case {
    std::vector<int64_t> x;
    const char* layout;
    bool is_test, global;
  };
  const Case cases[] = {
      {{4, 3, 5, 5}, "NCHW", false, false}, {{4, 5, 5, 3}, "NHWC", false, false},
      {{6, 7}, "NCHW", false, false},       {{4, 3, 5, 5}, "NCHW", true, false},
      {{4, 3, 5, 5}, "NCHW", false, true},  {{64, 16, 14, 14}, "NCHW", false, false}};
  unsigned seed = 20;
  for (const Case& k : cases) {
    SCOPED_TRACE(DimsStr(k.x) + " " + k.layout + (k.is_test ? " test" : "") +
                 (k.global ? " global stats" : ""));
    const int64_t ch = std::string(k.layout) == "NHWC" ? k.x.back() : k.x[1];
    OpCase c("batch_norm");
    c.In("X", "x", R(k.x, -2, 3, seed++))
        .In("Scale", "scale", R({ch}, 0.5, 1.5, seed++))
        .In("Bias", "bias", R({ch}, -1, 1, seed++))
        .In("Mean", "mean", R({ch}, -0.5, 0.5, seed++))
        .In("Variance", "var", R({ch}, 0.5, 2, seed++))
        .Out("Y", "y")
        .Out("MeanOut", "mean")
        .Out("VarianceOut", "var")
        .Out("SavedMean", "saved_mean")
        .Out("SavedVariance", "saved_var")
        .Attr("is_test", k.is_test)
        .Attr("use_global_stats", k.global)
        .Attr("momentum", 0.8f)
        .Attr("epsilon", 1e-5f)
        .Attr("data_layout", std::string(k.layout));
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, {"x", "scale", "bias"}, {"y"}, Loose());
  }
}

// ---------------------------------------------------------------------------------------------
// Losses and metrics.
TEST_P(GpuNnTest, SoftmaxWithCrossEntropyMatchesCpu) {
  // Hard labels with an ignored row, soft labels, and the class axis in the middle.
  TestTensor hard = Values({4, 1}, {2, 0, -100, 4}, TIDE_INT64);
  OpCase h("softmax_with_cross_entropy");
  h.In("Logits", "x", R({4, 5}, -4, 4))
      .In("Label", "label", hard)
      .Out("Softmax", "sm")
      .Out("Loss", "loss");
  ExpectGpuMatchesCpu(h);
  ExpectGpuGradsMatchCpu(h, {"x"}, {"loss"});

  TestTensor soft = R({3, 6}, 0, 1, 5);
  for (int i = 0; i < 3; ++i) {  // rows that sum to 1
    double s = 0;
    for (int j = 0; j < 6; ++j) s += soft.data[i * 6 + j];
    for (int j = 0; j < 6; ++j) soft.data[i * 6 + j] /= s;
  }
  OpCase sf("softmax_with_cross_entropy");
  sf.In("Logits", "x", R({3, 6}, -4, 4, 6))
      .In("Label", "label", soft)
      .Out("Softmax", "sm")
      .Out("Loss", "loss")
      .Attr("soft_label", true);
  ExpectGpuMatchesCpu(sf);
  ExpectGpuGradsMatchCpu(sf, {"x"}, {"loss"});

  OpCase ax("softmax_with_cross_entropy");
  ax.In("Logits", "x", R({2, 5, 3}, -4, 4, 7))
      .In("Label", "label", Values({2, 1, 3}, {0, 4, 2, 1, 3, 3}, TIDE_INT64))
      .Out("Softmax", "sm")
      .Out("Loss", "loss")
      .Attr("axis", int32_t(1));
  ExpectGpuMatchesCpu(ax);
  ExpectGpuGradsMatchCpu(ax, {"x"}, {"loss"});

  OpCase big("softmax_with_cross_entropy");  // many classes: a block per row
  std::vector<double> labels;
  for (int i = 0; i < 16; ++i) labels.push_back((i * 389) % 3000);
  big.In("Logits", "x", R({16, 3000}, -4, 4, 8))
      .In("Label", "label", Values({16, 1}, labels, TIDE_INT64))
      .Out("Softmax", "sm")
      .Out("Loss", "loss");
  ExpectGpuMatchesCpu(big, Loose());
}

TEST_P(GpuNnTest, CrossEntropyMatchesCpu) {
  TestTensor probs = R({4, 5}, 0.05, 1, 3);
  probs.data[3 * 5 + 1] = 0;  // log(0): the guard
  OpCase h("cross_entropy");
  h.In("X", "x", probs)
      .In("Label", "label", Values({4, 1}, {2, -100, 0, 1}, TIDE_INT64))
      .Out("Y", "y");
  ExpectGpuMatchesCpu(h);
  ExpectGpuGradsMatchCpu(h, {"x"}, {"y"});
  OpCase s("cross_entropy");
  s.In("X", "x", R({3, 4}, 0.05, 1, 4))
      .In("Label", "label", R({3, 4}, 0, 1, 5))
      .Out("Y", "y")
      .Attr("soft_label", true);
  ExpectGpuMatchesCpu(s);
  ExpectGpuGradsMatchCpu(s, {"x"}, {"y"});
}

TEST_P(GpuNnTest, TopKAndAccuracyMatchCpu) {
  // Ties keep the lower index first.
  TestTensor x = Values({3, 6}, {1, 5, 5, 2, 5, 0, -1, -2, -3, -4, -5, -6, 3, 3, 3, 3, 3, 3}, t());
  for (int32_t k : {1, 3, 6}) {
    OpCase c("top_k");
    c.In("X", "x", x).Out("Out", "out").Out("Indices", "idx").Attr("k", k);
    ExpectGpuMatchesCpu(c);
  }
  OpCase r("top_k");
  r.In("X", "x", R({7, 300}, -1, 1, 9))
      .Out("Out", "out")
      .Out("Indices", "idx")
      .Attr("k", int32_t(5));
  ExpectGpuMatchesCpu(r);
  ExpectGpuGradsMatchCpu(r, {"x"}, {"out"});

  TestTensor idx = Values({4, 2}, {1, 0, 2, 3, 4, 1, 0, 2}, TIDE_INT64);
  OpCase acc("accuracy");
  acc.In("Out", "out", R({4, 2}))
      .In("Indices", "idx", idx)
      .In("Label", "label", Values({4, 1}, {0, 1, 1, 3}, TIDE_INT64))
      .Out("Accuracy", "acc")
      .Out("Correct", "correct")
      .Out("Total", "total");
  ExpectGpuMatchesCpu(acc, {0, 0});
}

// ---------------------------------------------------------------------------------------------
// dropout: the generator differs from the CPU's, so training is checked on its own terms.
TEST_P(GpuNnTest, DropoutMasksAndGrads) {
  for (const char* impl : {"downgrade_in_infer", "upscale_in_train"}) {
    SCOPED_TRACE(impl);
    OpCase test("dropout");
    test.In("X", "x", R({6, 7}))
        .Out("Out", "out")
        .Out("Mask", "mask")
        .Attr("is_test", true)
        .Attr("dropout_prob", 0.3f)
        .Attr("dropout_implementation", std::string(impl));
    ExpectGpuMatchesCpu(test);

    const float p = 0.3f;
    OpCase train("dropout");
    TestTensor x = R({100, 100}, 0.5, 1.5);
    train.In("X", "x", x)
        .Out("Out", "out")
        .Out("Mask", "mask")
        .Attr("dropout_prob", p)
        .Attr("fix_seed", true)
        .Attr("seed", int32_t(3))
        .Attr("dropout_implementation", std::string(impl));
    auto a = train.Run(Gpu()), b = train.Run(Gpu());
    EXPECT_EQ(a["mask"].data, b["mask"].data) << "fix_seed must repeat the mask";
    const double keep = std::string(impl) == "upscale_in_train" ? 1.0 / (1.0 - p) : 1.0;
    int64_t dropped = 0;
    for (size_t i = 0; i < x.data.size(); ++i) {
      const double m = a["mask"].data[i];
      ASSERT_TRUE(m == 0 || std::fabs(m - keep) < 1e-6) << "mask " << m;
      dropped += m == 0;
      ASSERT_NEAR(a["out"].data[i], x.data[i] * m, 1e-6 * std::fabs(x.data[i] * m) + 1e-12);
    }
    EXPECT_NEAR(double(dropped) / x.data.size(), p, 0.02);
  }
  // The grad is dOut * Mask on either place (fed the same mask).
  OpCase g("dropout_grad");
  TestTensor mask = Values({2, 3}, {0, 2, 2, 0, 2, 0}, t());
  g.In("Mask", "mask", mask)
      .In(core::GradVarName("Out"), "dout", R({2, 3}))
      .Out(core::GradVarName("X"), "dx")
      .Attr("dropout_implementation", std::string("upscale_in_train"));
  ExpectGpuMatchesCpu(g);
}

// ---------------------------------------------------------------------------------------------
// lookup_table
TEST_P(GpuNnTest, LookupTableAndDenseGradMatchCpu) {
  TestTensor ids = Values({6, 1}, {3, 0, 3, 7, 2, 3}, TIDE_INT64);  // repeats, padding 7
  for (int64_t padding : {int64_t(-1), int64_t(7)}) {
    OpCase c("lookup_table");
    c.In("W", "w", R({9, 5})).In("Ids", "ids", ids).Out("Out", "out").Attr("padding_idx", padding);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"w"}, {"out"});
  }
}

// The sparse grad is a SelectedRows: compared field by field (rows, height, value).
TEST_P(GpuNnTest, LookupTableSparseGradMatchesCpu) {
  TIDE_REQUIRE_OP("lookup_table");
  OpCase c("lookup_table");
  c.In("W", "w", R({9, 4}))
      .In("Ids", "ids", Values({5}, {1, 8, 1, 4, 0}, TIDE_INT64))
      .Out("Out", "out")
      .Attr("is_sparse", true)
      .Attr("padding_idx", int64_t(4));
  core::OpDesc fwd;
  core::ProgramDesc prog = c.Build(&fwd);
  core::BlockDesc* block = prog.MutableBlock(0);
  TestTensor dout = R({5, 4}, -1, 1, 77);
  core::VarDesc* dv = block->Var(core::GradVarName("out"));
  dv->set_dtype(t());
  dv->set_shape(dout.dims);
  for (const core::OpDesc& g : core::MakeGradOps(fwd, {})) AppendChecked(block, g);
  block->Var(core::GradVarName("w"))->set_persistable(true);  // kept in the outer scope
  auto run = [&](const core::Place& place) {
    std::map<std::string, core::LoDTensor> feeds;
    for (const auto& [var, tt] : c.feeds()) feeds[var] = ToLoD(tt);
    feeds[core::GradVarName("out")] = ToLoD(dout);
    core::Scope scope;
    core::Executor exe(place);
    exe.Run(prog, &scope, feeds, {});
    const auto& sr = scope.FindVar(core::GradVarName("w"))->Get<core::SelectedRows>();
    core::LoDTensor value;
    core::TensorCopySync(sr.value(), Cpu(), &value);
    return std::make_tuple(sr.rows(), sr.height(), FromLoD(value));
  };
  auto [cpu_rows, cpu_height, cpu_value] = run(Cpu());
  auto [gpu_rows, gpu_height, gpu_value] = run(Gpu());
  EXPECT_EQ(gpu_rows, cpu_rows);
  EXPECT_EQ(gpu_height, cpu_height);
  ExpectClose(gpu_value, cpu_value, GpuTol(t()), "W@GRAD value");
}

// ---------------------------------------------------------------------------------------------
// Shape ops.
TEST_P(GpuNnTest, ConcatSplitAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("concat");
  for (int32_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    std::vector<int64_t> a{2, 3, 4}, b{2, 3, 4};
    const int ax = axis < 0 ? axis + 3 : axis;
    b[ax] = 2;
    OpCase c("concat");
    c.In("X", "a", R(a, -1, 1, 1))
        .In("X", "b", R(b, -1, 1, 2))
        .In("X", "c", R(a, -1, 1, 3))
        .Out("Out", "out")
        .Attr("axis", axis);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"a", "b", "c"}, {"out"});
    ExpectGpuGradsMatchCpu(c, {"b"}, {"out"});  // the other grads unwanted

    OpCase s("split");
    std::vector<int64_t> x{4, 6, 6};
    s.In("X", "x", R(x, -1, 1, 4))
        .Out("Out", "p0")
        .Out("Out", "p1")
        .Out("Out", "p2")
        .Attr("axis", axis)
        .Attr("sections", std::vector<int32_t>{1, -1, 3});
    ExpectGpuMatchesCpu(s);
    ExpectGpuGradsMatchCpu(s, {"x"}, {"p0", "p1", "p2"});
  }
}

TEST_P(GpuNnTest, TransposeReshapeFlattenAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("transpose2");
  for (const char* type : {"transpose", "transpose2"}) {
    for (std::vector<int32_t> perm : {std::vector<int32_t>{1, 0, 2}, {2, 0, 1}, {0, 1, 2}}) {
      OpCase c(type);
      c.In("X", "x", R({3, 4, 5})).Out("Out", "out").Attr("axis", perm);
      if (std::string(type) == "transpose2") c.Out("XShape", "xshape", false);
      ExpectGpuMatchesCpu(c);
      ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
    }
  }
  OpCase t4("transpose");
  t4.In("X", "x", R({2, 3, 4, 5})).Out("Out", "out").Attr("axis", std::vector<int32_t>{0, 2, 3, 1});
  ExpectGpuMatchesCpu(t4);
  for (const char* type : {"reshape", "reshape2"}) {
    OpCase c(type);
    c.In("X", "x", R({2, 3, 4})).Out("Out", "out").Attr("shape", std::vector<int32_t>{0, -1, 2});
    if (std::string(type) == "reshape2") c.Out("XShape", "xshape", false);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
  OpCase shaped("reshape");  // a Shape tensor (fed to the host, moved to the device) wins
  shaped.In("X", "x", R({2, 6}))
      .In("Shape", "shape", Values({3}, {0, 3, -1}, TIDE_INT32))
      .Out("Out", "out")
      .Attr("shape", std::vector<int32_t>{12});
  ExpectGpuMatchesCpu(shaped);
  for (const char* type : {"flatten", "flatten2"})
    for (int32_t axis : {0, 1, 2, 3}) {
      OpCase c(type);
      c.In("X", "x", R({2, 3, 4})).Out("Out", "out").Attr("axis", axis);
      if (std::string(type) == "flatten2") c.Out("XShape", "xshape", false);
      ExpectGpuMatchesCpu(c);
      ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
    }
}

TEST_P(GpuNnTest, LrnAndGradMatchCpu) {
  TIDE_REQUIRE_OP("lrn");
  for (int32_t n : {1, 3, 5}) {
    OpCase c("lrn");
    c.In("X", "x", R({2, 7, 3, 4}))
        .Out("Out", "out")
        .Out("MidOut", "mid")
        .Attr("n", n)
        .Attr("k", 1.5f)
        .Attr("alpha", 0.1f)
        .Attr("beta", 0.75f);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuNnTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
