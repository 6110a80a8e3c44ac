// tensor_file_fuzzer.cc: the tensor-file reader of the pserver's checkpoints (the tide.io record
// format, plus the round). The input is written to a file and loaded into a scope with variables
// "w" and "b"; any Tide error is fine, a crash, sanitizer report or huge allocation is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "checkpoint.h"
#include "core/framework/scope.h"
#include "core/plugin/c_handles.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tide::fuzz::InitCoreOnce();
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/tide_tensor_file_fuzzer." + std::to_string(getpid());
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  tide::core::Scope scope;
  scope.Var("w");
  scope.Var("b");
  try {
    tide_zmq::LoadCheckpoint(path, tide::Scope(tide::core::Wrap(&scope)), {"w", "b"},
                             tide::Place("cpu", 0));
  } catch (const tide::Error&) {
  } catch (const tide::core::Error&) {
  }
  return 0;
}
