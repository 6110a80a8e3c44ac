// nn_network_test.cc: small networks of ops_nn (and ops_math) ops, differentiated by the core's
// append_backward: every parameter gradient against finite differences of the whole loss. Checks
// the grad makers together (grad-op inputs, zero-filled unused outputs, in-place running stats).
#include "core/passes/backward.h"
#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

struct Net {
  core::ProgramDesc prog;
  std::map<std::string, TestTensor> feeds;

  void Feed(const std::string& name, TestTensor t) {
    core::VarDesc* v = prog.MutableBlock(0)->Var(name);
    v->set_dtype(t.dtype);
    v->set_shape(t.dims);
    feeds[name] = std::move(t);
  }
  void Op(const std::string& type, core::VariableNameMap in, core::VariableNameMap out,
          core::AttributeMap attrs = {}) {
    core::Initialize();  // plugins loaded (idempotent)
    AppendChecked(prog.MutableBlock(0),
                  core::OpDesc(type, std::move(in), std::move(out), std::move(attrs)));
  }
  double Loss(const std::map<std::string, TestTensor>& f) const {
    return RunProgram(prog, f, {"loss"})["loss"].data.at(0);
  }
  // Appends the backward pass; checks d loss / d p for each parameter against central differences.
  void CheckParamGrads(const std::vector<std::string>& params, double rtol, double atol,
                       double delta) {
    core::ProgramDesc fwd = prog;
    core::ProgramDesc full = prog;
    auto pairs = core::AppendBackward(&full, "loss", params, {});
    ASSERT_EQ(pairs.size(), params.size());
    std::vector<std::string> fetch{"loss"};
    for (const auto& [p, g] : pairs) fetch.push_back(g);
    auto got = RunProgram(full, feeds, fetch);
    Net probe{fwd, feeds};
    EXPECT_NEAR(got["loss"].data[0], probe.Loss(feeds), 1e-12)
        << "the backward pass changed the loss";
    for (const auto& [p, g] : pairs) {
      const TestTensor& analytic = got[g];
      ASSERT_EQ(analytic.dims, feeds[p].dims) << g;
      double norm = 0;
      for (size_t i = 0; i < analytic.data.size(); ++i) {
        auto shifted = [&](double s) {
          auto f = feeds;
          f[p].data[i] += s;
          return probe.Loss(f);
        };
        double numeric = (shifted(delta) - shifted(-delta)) / (2 * delta);
        ASSERT_NEAR(analytic.data[i], numeric, atol + rtol * std::fabs(numeric))
            << g << "[" << i << "]";
        norm += std::fabs(numeric);
      }
      EXPECT_GT(norm, 1e-6) << g << " is all zeros: the check would prove nothing";
    }
  }
};

TEST(NnNetwork, ConvBatchNormPoolDropoutFcBackward) {
  const auto dt = TIDE_FP64;
  Net n;
  n.Feed("x", Random({2, 2, 6, 6}, dt, -1, 1, 1));
  n.Feed("filter", Random({3, 2, 3, 3}, dt, -0.5, 0.5, 2));
  n.Feed("scale", Random({3}, dt, 0.5, 1.5, 3));
  n.Feed("bias", Random({3}, dt, -0.2, 0.2, 4));
  n.Feed("mean", Random({3}, dt, -0.1, 0.1, 5));
  n.Feed("var", Random({3}, dt, 0.8, 1.2, 6));
  n.Feed("w", Random({27, 4}, dt, -0.5, 0.5, 7));
  n.Feed("label", Ints({2, 1}, {3, 1}));
  n.Op("conv2d", {{"Input", {"x"}}, {"Filter", {"filter"}}}, {{"Output", {"c"}}},
       {{"paddings", std::vector<int32_t>{1, 1}}});
  n.Op("batch_norm",
       {{"X", {"c"}},
        {"Scale", {"scale"}},
        {"Bias", {"bias"}},
        {"Mean", {"mean"}},
        {"Variance", {"var"}}},
       {{"Y", {"bn"}},
        {"MeanOut", {"mean"}},
        {"VarianceOut", {"var"}},
        {"SavedMean", {"sm"}},
        {"SavedVariance", {"sv"}}});
  n.Op("relu", {{"X", {"bn"}}}, {{"Out", {"r"}}});
  n.Op("pool2d", {{"X", {"r"}}}, {{"Out", {"p"}}},
       {{"ksize", std::vector<int32_t>{2, 2}}, {"strides", std::vector<int32_t>{2, 2}}});
  n.Op("dropout", {{"X", {"p"}}}, {{"Out", {"d"}}, {"Mask", {"mask"}}},
       {{"dropout_prob", 0.3f},
        {"fix_seed", true},
        {"seed", int32_t(3)},
        {"dropout_implementation", std::string("upscale_in_train")}});
  n.Op("flatten2", {{"X", {"d"}}}, {{"Out", {"f"}}, {"XShape", {"fx"}}});
  n.Op("mul", {{"X", {"f"}}, {"Y", {"w"}}}, {{"Out", {"logits"}}});
  n.Op("softmax_with_cross_entropy", {{"Logits", {"logits"}}, {"Label", {"label"}}},
       {{"Softmax", {"s"}}, {"Loss", {"l"}}});
  n.Op("mean", {{"X", {"l"}}}, {{"Out", {"loss"}}});
  n.CheckParamGrads({"filter", "scale", "bias", "w"}, 1e-5, 1e-7, 1e-6);
}

TEST(NnNetwork, EmbeddingSplitConcatTransposeLrnCrossEntropyBackward) {
  const auto dt = TIDE_FP64;
  Net n;
  n.Feed("ids", Ints({6, 1}, {4, 0, 2, 4, 9, 7}));
  n.Feed("emb_w", Random({10, 6}, dt, -1, 1, 8));
  n.Feed("label", Ints({6, 1}, {0, 3, 1, 2, 2, 3}));
  n.Op("lookup_table", {{"W", {"emb_w"}}, {"Ids", {"ids"}}}, {{"Out", {"emb"}}},
       {{"padding_idx", int64_t(0)}});
  // b is never used: backward zero-fills its gradient for split's grad (a concat).
  n.Op("split", {{"X", {"emb"}}}, {{"Out", {"a", "b", "c"}}},
       {{"axis", int32_t(1)}, {"num", int32_t(3)}});
  n.Op("concat", {{"X", {"c", "a"}}}, {{"Out", {"cat"}}}, {{"axis", int32_t(1)}});
  n.Op("transpose2", {{"X", {"cat"}}}, {{"Out", {"t"}}, {"XShape", {"tx"}}},
       {{"axis", std::vector<int32_t>{1, 0}}});
  n.Op("reshape2", {{"X", {"t"}}}, {{"Out", {"r4"}}, {"XShape", {"rx"}}},
       {{"shape", std::vector<int32_t>{6, 4, 1, 1}}});
  n.Op("lrn", {{"X", {"r4"}}}, {{"Out", {"lrn"}}, {"MidOut", {"mid"}}},
       {{"n", int32_t(3)}, {"k", 1.0f}, {"alpha", 0.5f}, {"beta", 0.75f}});
  n.Op("flatten", {{"X", {"lrn"}}}, {{"Out", {"flat"}}});
  n.Op("softmax", {{"X", {"flat"}}}, {{"Out", {"prob"}}});
  n.Op("top_k", {{"X", {"prob"}}}, {{"Out", {"topv"}}, {"Indices", {"topi"}}}, {{"k", int32_t(2)}});
  n.Op("accuracy", {{"Out", {"topv"}}, {"Indices", {"topi"}}, {"Label", {"label"}}},
       {{"Accuracy", {"acc"}}, {"Correct", {"correct"}}, {"Total", {"total"}}});
  n.Op("cross_entropy", {{"X", {"prob"}}, {"Label", {"label"}}}, {{"Y", {"xe"}}});
  n.Op("mean", {{"X", {"xe"}}}, {{"Out", {"loss"}}});
  n.CheckParamGrads({"emb_w"}, 1e-5, 1e-7, 1e-6);
  // The padding row and unused rows get no gradient; neither do the columns of part b.
  core::ProgramDesc full = n.prog;
  core::AppendBackward(&full, "loss", {"emb_w"}, {});
  auto got = RunProgram(full, n.feeds, {"emb_w@GRAD", "total"});
  for (int row : {0, 1, 3, 5, 6, 8})
    for (int j = 0; j < 6; ++j) EXPECT_EQ(got["emb_w@GRAD"].data[row * 6 + j], 0.0) << row;
  for (int row : {2, 4, 7, 9})
    for (int j = 2; j < 4; ++j) EXPECT_EQ(got["emb_w@GRAD"].data[row * 6 + j], 0.0) << row;
  ExpectNear(got["total"], {6}, 0, 0);
}

}  // namespace
}  // namespace tide::test::nn
