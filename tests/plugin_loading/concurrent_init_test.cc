// concurrent_init_test.cc: Initialize() called from several threads returns, in every one, only
// once discovery has registered the plugins (ctest points TIDE_PLUGIN_PATH at one whose
// registration takes 300 ms).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/registry/registry.h"

namespace {

TEST(ConcurrentInitialize, EveryCallerSeesThePlugins) {
  std::atomic<int> missing{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&missing, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * i));  // while thread 0 loads
      tide::core::Initialize();
      if (!tide::core::Registry::Global().FindOp("test_slow.good_op")) ++missing;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(missing.load(), 0) << "Initialize() returned before the plugins were registered";
  ASSERT_EQ(tide::core::PluginManager::Global().Records().size(), 1u);
  EXPECT_TRUE(tide::core::PluginManager::Global().Records()[0].loaded);
}

}  // namespace
