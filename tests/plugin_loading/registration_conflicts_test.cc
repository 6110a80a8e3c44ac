// registration_conflicts_test.cc: failed registrations are all-or-nothing, duplicate ops, kernel
// keys and plugin names fail naming the first file, same schemas and priority overrides load.
#include "tests/plugin_loading/plugin_test_util.h"

namespace tide_test {
namespace {

TEST(RegistrationConflicts, InvalidOpNameFailsAndKeepsNothing) {
  auto records = LoadCase("regerr");
  const PluginRecord* r = Find(records, CaseFile("regerr", "regerr_badname"));
  ExpectFailed(r, "registration failed");
  EXPECT_CONTAINS(r->error, "invalid op type 'bad op name!'");
  // The op and kernel it staged before the bad one are not kept.
  EXPECT_EQ(Registry::Global().FindOp("test_regerr.badname_op"), nullptr);
  EXPECT_TRUE(Registry::Global().Kernels("test_regerr.badname_op").empty());
  ExpectGoodLoaded(records, "regerr");
}

TEST(RegistrationConflicts, FailedCheckInCallbackFailsAndKeepsNothing) {
  auto records = LoadCase("regerr");
  const PluginRecord* r = Find(records, CaseFile("regerr", "regerr_check"));
  ExpectFailed(r, "regerr_check refuses to register: tide_test_no_such_flag is not 'yes'");
  EXPECT_EQ(Registry::Global().FindOp("test_regerr.check_op"), nullptr);
  EXPECT_TRUE(Registry::Global().Kernels("test_regerr.check_op").empty());
  ExpectGoodLoaded(records, "regerr");
}

TEST(RegistrationErrors, AttributeValueStructSizeIsChecked) {
  auto records = LoadCase("regerr");
  const PluginRecord* r = Find(records, CaseFile("regerr", "regerr_attrsize"));
  ExpectFailed(r, "struct_size");
  EXPECT_CONTAINS(r->error, "TideAttrValue");
  EXPECT_EQ(Registry::Global().FindOp("test_regerr.attrsize_op"), nullptr);
}

TEST(RegistrationConflicts, DifferentSchemaUnderOneNameFailsNamingFirstFile) {
  auto records = LoadCase("dupop");
  const PluginRecord* first = Find(records, CaseFile("dupop", "a_first"));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->loaded) << first->error;
  const PluginRecord* r = Find(records, CaseFile("dupop", "b_different"));
  ExpectFailed(r, "op 'test_dupop.op' is already registered by " + first->path);
  EXPECT_CONTAINS(r->error, "different schema");
  const tide::core::OpInfo* info = Registry::Global().FindOp("test_dupop.op");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->plugin_file, first->path);
  EXPECT_EQ(info->proto.inputs_size(), 1);  // the first schema's
}

TEST(RegistrationConflicts, SameSchemaTwiceIsANoOp) {
  auto records = LoadCase("dupop");
  const PluginRecord* first = Find(records, CaseFile("dupop", "a_first"));
  const PluginRecord* same = Find(records, CaseFile("dupop", "c_same"));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(same, nullptr);
  EXPECT_TRUE(first->loaded) << first->error;
  EXPECT_TRUE(same->loaded) << same->error;
  EXPECT_EQ(same->ops, std::vector<std::string>{"test_dupop.op"});
  const tide::core::OpInfo* op = Registry::Global().FindOp("test_dupop.op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->plugin_file, first->path);  // the first registration stays
  // ... and the second plugin hears that its shape inference and gradient are not the ones used.
  ASSERT_EQ(same->warnings.size(), 1u);
  EXPECT_CONTAINS(same->warnings[0], "op 'test_dupop.op' is also defined by " + first->path);
  EXPECT_CONTAINS(same->warnings[0], "this plugin's are not");
}

TEST(RegistrationConflicts, DuplicateKernelKeyFailsNamingFirstFile) {
  auto records = LoadCase("dupkern");
  const PluginRecord* orig = Find(records, CaseFile("dupkern", "a_orig"));
  ASSERT_NE(orig, nullptr);
  EXPECT_TRUE(orig->loaded) << orig->error;
  const PluginRecord* r = Find(records, CaseFile("dupkern", "b_dup"));
  ExpectFailed(r, "kernel test_dupkern.op {cpu, float32, ANY, plain} is already registered by " +
                      orig->path);
  // Its float64 kernel, a new key, went with it: the commit is all-or-nothing.
  EXPECT_EQ(Registry::Global().FindKernel("test_dupkern.op", CpuKey(TIDE_FP64)), nullptr);
}

TEST(RegistrationConflicts, HigherPriorityKernelOverrides) {
  auto records = LoadCase("dupkern");
  const PluginRecord* r = Find(records, CaseFile("dupkern", "c_override"));
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->loaded) << r->error;
  EXPECT_EQ(r->kernels, std::vector<std::string>{"test_dupkern.op {cpu, float32, ANY, plain}"});
  const tide::core::KernelEntry* k =
      Registry::Global().FindKernel("test_dupkern.op", CpuKey(TIDE_FP32));
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->plugin_file, r->path);
  EXPECT_EQ(k->priority, 5);
  EXPECT_EQ(Registry::Global().Kernels("test_dupkern.op").size(), 1u);
}

TEST(RegistrationConflicts, DuplicatePluginNameFailsAlreadyLoaded) {
  auto records = LoadCase("dupname");
  const PluginRecord* first = Find(records, CaseFile("dupname", "a_dupname"));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->loaded) << first->error;
  EXPECT_EQ(first->name, "dupname_plugin");
  const PluginRecord* r = Find(records, CaseFile("dupname", "b_dupname"));
  ExpectFailed(r, "a plugin named 'dupname_plugin' is already loaded from " + first->path);
  EXPECT_NE(Registry::Global().FindOp("test_dupname.first_op"), nullptr);
  EXPECT_EQ(Registry::Global().FindOp("test_dupname.second_op"), nullptr);
}

TEST(RegistrationConflicts, AFailedPluginDoesNotTakeItsName) {
  auto records = LoadCase("dupname_failed");
  const PluginRecord* failed = Find(records, CaseFile("dupname_failed", "a_fails"));
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->loaded);
  const PluginRecord* second = Find(records, CaseFile("dupname_failed", "b_loads"));
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->loaded) << second->error;
  EXPECT_NE(Registry::Global().FindOp("test_dupname_failed.second_op"), nullptr);
  EXPECT_EQ(Registry::Global().FindOp("test_dupname_failed.first_op"), nullptr);
}

}  // namespace
}  // namespace tide_test
