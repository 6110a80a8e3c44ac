// dependencies_test.cc: plugins register after the plugins they require, whatever their file
// order; a missing or cyclic requirement fails that plugin alone.
#include "tests/plugin_loading/plugin_test_util.h"

namespace tide_test {
namespace {

// libdeps_1_b.so (b_plugin, requires a_plugin) sorts before libdeps_2_a.so (a_plugin). Both
// register the float32 kernel of test_deps_order.op, b with priority 1: that only succeeds
// when a's kernel is already there, i.e. when a registered first (the other way round, a's
// priority-0 kernel would clash with b's).
TEST(Dependencies, RequiredPluginRegistersFirst) {
  auto records = LoadCase("deps_order");
  const PluginRecord* b = Find(records, CaseFile("deps_order", "deps_1_b"));
  const PluginRecord* a = Find(records, CaseFile("deps_order", "deps_2_a"));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(a->loaded) << a->error;
  EXPECT_TRUE(b->loaded) << b->error;
  EXPECT_EQ(b->requires, std::vector<std::string>{"a_plugin"});
  EXPECT_TRUE(a->requires.empty());
  const tide::core::KernelEntry* k =
      Registry::Global().FindKernel("test_deps_order.op", CpuKey(TIDE_FP32));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->plugin_file, b->path);  // b overrode a's kernel: a came first
  const tide::core::OpInfo* op = Registry::Global().FindOp("test_deps_order.op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->plugin_file, a->path);
}

TEST(Dependencies, MissingRequirementFails) {
  auto records = LoadCase("depmiss");
  const PluginRecord* r = Find(records, CaseFile("depmiss", "needs_ghost"));
  ExpectFailed(r, "requires plugin");
  EXPECT_CONTAINS(r->error, "'ghost_plugin'");
  EXPECT_EQ(Registry::Global().FindOp("test_depmiss.ghost_op"), nullptr);
  ExpectGoodLoaded(records, "depmiss");
}

TEST(Dependencies, CycleFailsBoth) {
  auto records = LoadCase("depcycle");
  const PluginRecord* x = Find(records, CaseFile("depcycle", "cycle_x"));
  const PluginRecord* y = Find(records, CaseFile("depcycle", "cycle_y"));
  ExpectFailed(x, "requires plugin(s) 'cycle_y'");
  ExpectFailed(y, "requires plugin(s) 'cycle_x'");
  EXPECT_CONTAINS(x->error, "cycle");
  EXPECT_EQ(Registry::Global().FindOp("test_depcycle.x_op"), nullptr);
  EXPECT_EQ(Registry::Global().FindOp("test_depcycle.y_op"), nullptr);
  ExpectGoodLoaded(records, "depcycle");
}

}  // namespace
}  // namespace tide_test
