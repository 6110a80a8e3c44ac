// manager_api_test.cc: PluginManager::Load of one file (throws for a broken one, returns the
// record for a good one) and RecordsJson (valid JSON holding every record, checked by python3).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/platform/enforce.h"
#include "tests/plugin_loading/plugin_test_util.h"

namespace tide_test {
namespace {

void ExpectLoadThrows(const std::string& path, const std::string& reason) {
  try {
    PluginManager::Global().Load(path);
    ADD_FAILURE() << "Load(" << path << ") did not throw";
  } catch (const tide::core::Error& e) {
    EXPECT_CONTAINS(e.what(), path);
    EXPECT_CONTAINS(e.what(), reason);
  }
  std::vector<PluginRecord> records = PluginManager::Global().Records();
  ExpectFailed(Find(records, path), reason);  // the failure is also recorded
}

TEST(PluginManagerLoad, BrokenFileThrowsWithPathAndReason) {
  ExpectLoadThrows(CaseFile("load", "load_nosym"), "missing entry symbol");
}

TEST(PluginManagerLoad, MissingFileThrowsWithPathAndReason) {
  ExpectLoadThrows(CaseDir("load") + "/libabsent.so", "no such file");
}

TEST(PluginManagerLoad, GoodFileReturnsItsRecord) {
  std::string path = CaseFile("load", "load_good");
  PluginRecord r = PluginManager::Global().Load(path);
  EXPECT_TRUE(r.loaded) << r.error;
  EXPECT_EQ(r.path, path);
  EXPECT_EQ(r.name, "load_good");
  EXPECT_EQ(r.ops, std::vector<std::string>{"test_load.good_op"});
  const tide::core::OpInfo* info = Registry::Global().FindOp("test_load.good_op");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->plugin_file, path);
  EXPECT_NE(Registry::Global().FindKernel("test_load.good_op", CpuKey(TIDE_FP32)), nullptr);
  // Loading it again returns the record; the file is not loaded twice.
  EXPECT_TRUE(PluginManager::Global().Load(path).loaded);
  int n = 0;
  for (const auto& rec : PluginManager::Global().Records()) n += rec.path == path;
  EXPECT_EQ(n, 1);
}

// Reads the JSON file argv[1]; checks the top-level and per-plugin keys; prints each plugin's
// file, name, status, error and ops, fields split by \x1f, plugins ended by \x1e.
const char* kJsonReader = R"PY(
import json, sys
d = json.load(open(sys.argv[1]))
assert d["abi"] == sys.argv[2], d["abi"]
assert isinstance(d["search_path"], list)
for p in d["plugins"]:
    for key in ("name", "version", "file", "abi", "status", "error", "description", "requires",
                "load_ms", "ops", "kernels", "devices"):
        assert key in p, key
    assert isinstance(p["load_ms"], (int, float))
    sys.stdout.write("\x1f".join([p["file"], p["name"], p["status"], p["error"],
                                  ",".join(p["ops"])]) + "\x1e")
)PY";

std::vector<std::vector<std::string>> ParsedByPython(const std::string& json) {
  std::string dir = ::testing::TempDir();
  std::string json_file = dir + "/tide_records.json", script = dir + "/tide_records_reader.py";
  std::ofstream(json_file) << json;
  std::ofstream(script) << kJsonReader;
  std::string abi = std::to_string(TIDE_ABI_MAJOR) + "." + std::to_string(TIDE_ABI_MINOR);
  std::string cmd = "python3 '" + script + "' '" + json_file + "' " + abi;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  if (!p) return {};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd << " rejected:\n" << json;
  std::vector<std::vector<std::string>> plugins;
  std::stringstream all(out);
  for (std::string rec; std::getline(all, rec, '\x1e');) {
    std::vector<std::string> fields;
    std::stringstream fs(rec);
    for (std::string f; std::getline(fs, f, '\x1f');) fields.push_back(f);
    while (fields.size() < 5) fields.push_back("");  // getline drops a trailing empty field
    plugins.push_back(fields);
  }
  return plugins;
}

TEST(RecordsJson, IsValidJsonHoldingEveryRecord) {
  // A missing file whose name needs escaping (quote, backslash, tab) beside a good plugin, a
  // text file and an ABI mismatch.
  std::string odd = CaseDir("json") + "/lib\"odd\\name\t.so";
  LoadCase("json", {odd});
  std::vector<PluginRecord> records = PluginManager::Global().Records();
  auto parsed = ParsedByPython(PluginManager::Global().RecordsJson());
  ASSERT_EQ(parsed.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const PluginRecord& r = records[i];
    std::string ops;
    for (const auto& op : r.ops) ops += (ops.empty() ? "" : ",") + op;
    EXPECT_EQ(parsed[i], (std::vector<std::string>{r.path, r.name, r.loaded ? "loaded" : "failed",
                                                   r.error, ops}));
  }
  auto recs = LoadCase("json");
  ExpectFailed(Find(recs, odd), "no such file");
  ExpectFailed(Find(recs, CaseDir("json") + "/libjunk.so"), "not a shared object");
  ExpectFailed(Find(recs, CaseFile("json", "json_abi")), "major");
  ExpectGoodLoaded(recs, "json");
}

}  // namespace
}  // namespace tide_test
