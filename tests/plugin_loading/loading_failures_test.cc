// loading_failures_test.cc: plugins that cannot be opened or identified (missing file, not a
// shared object, no entry symbol, ABI major mismatch, exceptions) fail alone, with the reason.
#include "tests/plugin_loading/plugin_test_util.h"

namespace tide_test {
namespace {

TEST(LoadingFailures, NoSuchFile) {
  std::string missing = CaseDir("noent") + "/libmissing.so";
  auto records = LoadCase("noent", {missing});
  const PluginRecord* r = Find(records, missing);
  ExpectFailed(r, "no such file");
  EXPECT_EQ(r->name, "");
  ExpectGoodLoaded(records, "noent");
}

TEST(LoadingFailures, NotASharedObject) {
  auto records = LoadCase("notso");
  const PluginRecord* r = Find(records, CaseDir("notso") + "/libjunk.so");
  ExpectFailed(r, "not a shared object");
  ExpectGoodLoaded(records, "notso");
}

TEST(LoadingFailures, MissingEntrySymbol) {
  auto records = LoadCase("nosym");
  const PluginRecord* r = Find(records, CaseFile("nosym", "nosym"));
  ExpectFailed(r, "missing entry symbol");
  EXPECT_CONTAINS(r->error, "tide_plugin_info");
  ExpectGoodLoaded(records, "nosym");
}

TEST(LoadingFailures, AbiMajorMismatch) {
  auto records = LoadCase("abi");
  const PluginRecord* r = Find(records, CaseFile("abi", "abi_major"));
  std::string theirs = std::to_string(TIDE_ABI_MAJOR + 1) + ".0";
  std::string ours = std::to_string(TIDE_ABI_MAJOR) + "." + std::to_string(TIDE_ABI_MINOR);
  ExpectFailed(r, theirs);
  EXPECT_CONTAINS(r->error, ours);
  EXPECT_CONTAINS(r->error, "major");
  EXPECT_CONTAINS(r->error, "abi_major");  // the plugin's name
  EXPECT_CONTAINS(r->error, r->path);      // and its file (DESIGN: file, plugin, both versions)
  EXPECT_EQ(r->name, "abi_major");
  EXPECT_EQ(r->abi_major, uint32_t(TIDE_ABI_MAJOR + 1));
  // Refused before registration: the op its tide_plugin_register adds never arrives.
  EXPECT_EQ(Registry::Global().FindOp("test_abi.raw_op"), nullptr);
  ExpectGoodLoaded(records, "abi");
}

TEST(LoadingFailures, PluginNeedingANewerMinorIsRefusedNamingBothVersions) {
  auto records = LoadCase("abi");
  const PluginRecord* r = Find(records, CaseFile("abi", "abi_needs_newer"));
  ExpectFailed(r, "needs plugin ABI " + std::to_string(TIDE_ABI_MAJOR) + "." +
                      std::to_string(TIDE_ABI_MINOR + 1) + " or newer");
  EXPECT_CONTAINS(r->error, "this Tide speaks " + std::to_string(TIDE_ABI_MAJOR) + "." +
                                std::to_string(TIDE_ABI_MINOR));
  EXPECT_CONTAINS(r->error, r->path);
  EXPECT_EQ(Registry::Global().FindOp("test_abi.needs_newer_op"), nullptr);
  // A newer plugin that accepts this minor loads, and so does an older one (no min_abi_minor).
  for (const char* ok : {"abi_newer_checked", "abi_older"}) {
    const PluginRecord* p = Find(records, CaseFile("abi", ok));
    ASSERT_NE(p, nullptr) << ok;
    EXPECT_TRUE(p->loaded) << ok << ": " << p->error;
  }
  EXPECT_NE(Registry::Global().FindOp("test_abi.newer_checked_op"), nullptr);
  EXPECT_NE(Registry::Global().FindOp("test_abi.older_op"), nullptr);
}

// A plugin built against another layout of the unreleased ABI's tables would call the wrong host
// entries: it is refused before any of its functions but the layout revision runs.
TEST(LoadingFailures, PluginOfAnotherAbiLayoutIsRefusedNamingBothLayouts) {
  auto records = LoadCase("layout");
  const std::string ours =
      ", this core has " + std::to_string(TIDE_ABI_LAYOUT) + " (the tables of the unreleased ABI ";
  const PluginRecord* one = Find(records, CaseFile("layout", "layout_1"));
  ASSERT_NE(one, nullptr);
  ExpectFailed(one, "plugin file " + one->path + " was built against ABI layout 1" + ours);
  EXPECT_CONTAINS(one->error, "rebuild the plugin against this SDK");
  EXPECT_EQ(one->name, "");  // tide_plugin_info was never called
  const PluginRecord* none = Find(records, CaseFile("layout", "layout_none"));
  ExpectFailed(none,
               "was built against ABI layout 1 (it exports no layout revision: built "
               "before revisions existed)" +
                   ours);
  EXPECT_CONTAINS(none->error, none->path);
  EXPECT_EQ(Registry::Global().FindOp("test_layout.one_op"), nullptr);
  EXPECT_EQ(Registry::Global().FindOp("test_layout.none_op"), nullptr);
  ExpectGoodLoaded(records, "layout");  // plugin.hpp's TIDE_PLUGIN exports this core's layout
}

TEST(LoadingFailures, ExceptionInRegistrationCallbackBecomesStatus) {
  auto records = LoadCase("throw");
  const PluginRecord* r = Find(records, CaseFile("throw", "throw_callback"));
  ExpectFailed(r, "registration failed");
  EXPECT_CONTAINS(r->error, "throw_callback: a std::runtime_error from a registration callback");
  EXPECT_EQ(Registry::Global().FindOp("test_throw.callback_op"), nullptr);
  EXPECT_TRUE(Registry::Global().Kernels("test_throw.callback_op").empty());
  ExpectGoodLoaded(records, "throw");
}

TEST(LoadingFailures, ExceptionEscapingRawRegisterIsCaught) {
  auto records = LoadCase("throw");
  const PluginRecord* r = Find(records, CaseFile("throw", "throw_raw"));
  ExpectFailed(r, "a C++ exception escaped tide_plugin_register");
  EXPECT_CONTAINS(r->error, "raw_throw: thrown out of tide_plugin_register");
  EXPECT_EQ(r->name, "throw_raw");
  EXPECT_EQ(Registry::Global().FindOp("test_throw.raw_op"), nullptr);  // staged, then dropped
  ExpectGoodLoaded(records, "throw");
}

TEST(LoadingFailures, ExceptionEscapingRawInfoIsCaught) {
  auto records = LoadCase("throw");
  const PluginRecord* r = Find(records, CaseFile("throw", "throw_info"));
  ExpectFailed(r, "tide_plugin_info threw");
  EXPECT_CONTAINS(r->error, "raw_info_throw: thrown out of tide_plugin_info");
  ExpectGoodLoaded(records, "throw");
}

}  // namespace
}  // namespace tide_test
