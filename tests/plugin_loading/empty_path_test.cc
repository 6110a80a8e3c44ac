// empty_path_test.cc: with an empty plugin path the core on its own registers only its own ops
// (feed, fetch, delete_var), and no kernel or device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/registry/registry.h"

namespace {

TEST(EmptyPluginPath, CoreAloneRegistersOnlyItsOwnOps) {
  setenv("TIDE_PLUGIN_PATH", "", 1);        // ctest sets both too; this keeps a direct run honest
  setenv("TIDE_PLUGIN_PATH_ONLY", "1", 1);  // else the default directory is searched
  unsetenv("FLAGS_plugin_path");
  tide::core::Initialize();
  auto& pm = tide::core::PluginManager::Global();
  EXPECT_TRUE(pm.SearchPath().empty());
  EXPECT_TRUE(pm.Records().empty());
  const auto& reg = tide::core::Registry::Global();
  // device_compiled_group: the node of a group of ops a device compiled (issue 33).
  EXPECT_EQ(reg.OpTypes(),
            (std::vector<std::string>{"delete_var", "device_compiled_group", "feed", "fetch"}));
  EXPECT_EQ(reg.NumKernels(), 0u);
  EXPECT_EQ(reg.NumDevices(), 0u);
}

}  // namespace
