// Tests that a truncated plugin file is refused from its ELF headers, naming the file, instead of
// SIGBUS inside dlopen (the dynamic loader maps segments past the end of a truncated file), and
// that loading a directory without plugins says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/host/loader.h"
#include "core/platform/enforce.h"

namespace tide::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The first plugin of the build's plugin directory (TIDE_PLUGIN_PATH, set by ctest).
std::string SomePlugin() {
  const char* env = std::getenv("TIDE_PLUGIN_PATH");
  if (!env) return "";
  std::string dir = std::string(env).substr(0, std::string(env).find(':'));
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.path().extension() == ".so") return f.path().string();
  return "";
}

class TruncatedPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tide_truncated_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A copy of `src`'s first `keep` bytes.
  std::string Truncated(const std::string& src, size_t keep, const std::string& name) {
    std::ifstream in(src, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(std::min(keep, bytes.size())));
    return path;
  }
  fs::path dir_;
};

TEST_F(TruncatedPluginTest, TruncatedFilesAreRefusedNamingTheFile) {
  std::string src = SomePlugin();
  if (src.empty()) GTEST_SKIP() << "no plugin on TIDE_PLUGIN_PATH";
  const size_t size = fs::file_size(src);
  struct Case {
    size_t keep;
    const char* why;
  };
  for (const Case& c :
       {Case{40, "shorter than an ELF header"}, Case{100, "program headers end at byte"},
        Case{4096, "truncated or corrupt shared object"},
        Case{size / 2, "truncated or corrupt shared object"},
        Case{size - 1, "section headers end at byte"}}) {
    std::string path = Truncated(src, c.keep, "libcut_" + std::to_string(c.keep) + ".so");
    try {
      PluginManager::Global().Load(path);
      ADD_FAILURE() << "a " << c.keep << "-byte prefix of " << src << " loaded";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(path));
      EXPECT_THAT(e.what(), HasSubstr(c.why));
    }
  }
}

TEST_F(TruncatedPluginTest, ADirectoryWithoutPluginsSaysSo) {
  try {
    PluginManager::Global().Load(dir_.string());
    ADD_FAILURE() << "loading an empty directory succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir_.string()));
    EXPECT_THAT(e.what(), HasSubstr("holds no plugin file"));
  }
}

}  // namespace
}  // namespace tide::core
