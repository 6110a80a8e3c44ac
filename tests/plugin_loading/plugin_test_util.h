// plugin_test_util.h: loader-test helpers: loads each case's directory of test plugins once per
// process (one LoadAll batch) and finds its load records and registry entries.
#pragma once

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/host/loader.h"
#include "core/platform/place.h"
#include "core/registry/registry.h"

namespace tide_test {

using tide::core::PluginManager;
using tide::core::PluginRecord;
using tide::core::Registry;

#define EXPECT_CONTAINS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << (text) << "' lacks '" << (part) << "'"

inline std::string CaseDir(const std::string& c) {
  return std::string(TIDE_TEST_PLUGIN_DIR) + "/" + c;
}
inline std::string CaseFile(const std::string& c, const std::string& stem) {
  return CaseDir(c) + "/lib" + stem + ".so";
}

// Loads <case>/ plus `extra` entries in one batch, the first time a test asks; returns the
// records of every entry under <case>/.
inline std::vector<PluginRecord> LoadCase(const std::string& c,
                                          std::vector<std::string> extra = {}) {
  static std::mutex mu;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (done.insert(c).second) {
      extra.insert(extra.begin(), CaseDir(c));
      PluginManager::Global().LoadAll(extra);
    }
  }
  std::vector<PluginRecord> out;
  std::string prefix = CaseDir(c) + "/";
  for (auto& r : PluginManager::Global().Records())
    if (r.path.compare(0, prefix.size(), prefix) == 0) out.push_back(r);
  return out;
}

// The record whose path is `path`, or nullptr.
inline const PluginRecord* Find(const std::vector<PluginRecord>& records, const std::string& path) {
  for (const auto& r : records)
    if (r.path == path) return &r;
  return nullptr;
}

inline tide::core::OpKernelType CpuKey(TideDataType dtype) {
  return tide::core::OpKernelType{tide::core::PlaceKindId("cpu"), dtype, TIDE_LAYOUT_ANY,
                                  tide::core::LibraryId("plain")};
}

// A failed record: not loaded, nothing registered, and an error naming `reason`.
inline void ExpectFailed(const PluginRecord* r, const std::string& reason) {
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->loaded) << r->path;
  EXPECT_CONTAINS(r->error, reason);
  EXPECT_TRUE(r->ops.empty() && r->kernels.empty() && r->devices.empty()) << r->path;
}

// Plugin <case>_good (lib<case>_good.so, op test_<case>.good_op, one float32 cpu kernel) loaded
// beside the failures of its batch, and what it registered is in the registry.
inline void ExpectGoodLoaded(const std::vector<PluginRecord>& records, const std::string& c) {
  const PluginRecord* g = Find(records, CaseFile(c, c + "_good"));
  ASSERT_NE(g, nullptr) << "no record for " << CaseFile(c, c + "_good");
  EXPECT_TRUE(g->loaded) << g->error;
  EXPECT_EQ(g->error, "");
  EXPECT_EQ(g->name, c + "_good");
  EXPECT_EQ(g->version, "1.2.3");
  EXPECT_EQ(g->abi_major, uint32_t(TIDE_ABI_MAJOR));
  std::string op = "test_" + c + ".good_op";
  EXPECT_EQ(g->ops, std::vector<std::string>{op});
  EXPECT_EQ(g->kernels, std::vector<std::string>{op + " {cpu, float32, ANY, plain}"});
  const tide::core::OpInfo* info = Registry::Global().FindOp(op);
  ASSERT_NE(info, nullptr) << op;
  EXPECT_EQ(info->plugin_file, g->path);
  const tide::core::KernelEntry* k = Registry::Global().FindKernel(op, CpuKey(TIDE_FP32));
  ASSERT_NE(k, nullptr) << op;
  EXPECT_EQ(k->plugin_file, g->path);
}

}  // namespace tide_test
