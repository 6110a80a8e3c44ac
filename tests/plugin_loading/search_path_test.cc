// search_path_test.cc: the plugin search path's rules. $TIDE_PLUGIN_PATH adds its entries before
// the install's default directory (a vendor directory must not drop Tide's own plugins);
// TIDE_PLUGIN_PATH_ONLY=1 makes $TIDE_PLUGIN_PATH the whole path (empty: none); --plugin_path
// replaces both. Only SearchPath() is asked: nothing is loaded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/host/loader.h"
#include "core/platform/flags.h"

namespace {

using Path = std::vector<std::string>;

class SearchPath : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TIDE_PLUGIN_PATH");
    unsetenv("TIDE_PLUGIN_PATH_ONLY");
    FLAGS_plugin_path = "";
  }
  void TearDown() override { SetUp(); }
  Path Get() const { return tide::core::PluginManager::Global().SearchPath(); }
  const std::string dflt = tide::core::DefaultPluginDir();
};

TEST_F(SearchPath, DefaultIsBesideTheCoreLibrary) {
  ASSERT_FALSE(dflt.empty());
  EXPECT_NE(dflt.find("/tide/plugins"), std::string::npos) << dflt;
  EXPECT_EQ(Get(), Path{dflt});
}

TEST_F(SearchPath, EnvironmentAddsToTheDefault) {
  setenv("TIDE_PLUGIN_PATH", "/vendor/a:/vendor/b.so", 1);
  EXPECT_EQ(Get(), (Path{"/vendor/a", "/vendor/b.so", dflt}));
  setenv("TIDE_PLUGIN_PATH", "", 1);  // empty adds nothing
  EXPECT_EQ(Get(), Path{dflt});
  setenv("TIDE_PLUGIN_PATH", ("/vendor/a:" + dflt).c_str(), 1);  // the default is listed once
  EXPECT_EQ(Get(), (Path{"/vendor/a", dflt}));
  setenv("TIDE_PLUGIN_PATH_ONLY", "0", 1);  // a false value keeps the default
  setenv("TIDE_PLUGIN_PATH", "/vendor/a", 1);
  EXPECT_EQ(Get(), (Path{"/vendor/a", dflt}));
}

TEST_F(SearchPath, OnlyFlagMakesTheEnvironmentTheWholePath) {
  setenv("TIDE_PLUGIN_PATH_ONLY", "1", 1);
  setenv("TIDE_PLUGIN_PATH", "/vendor/a", 1);
  EXPECT_EQ(Get(), Path{"/vendor/a"});
  setenv("TIDE_PLUGIN_PATH", "", 1);
  EXPECT_TRUE(Get().empty());
  unsetenv("TIDE_PLUGIN_PATH");
  EXPECT_TRUE(Get().empty());
}

TEST_F(SearchPath, CommandLineFlagReplacesEverything) {
  setenv("TIDE_PLUGIN_PATH", "/vendor/a", 1);
  FLAGS_plugin_path = "/only/this";
  EXPECT_EQ(Get(), Path{"/only/this"});
}

}  // namespace
