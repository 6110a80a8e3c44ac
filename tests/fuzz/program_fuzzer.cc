// program_fuzzer.cc: a ProgramDesc from the fuzzer's bytes is parsed, prepared and run (block 0)
// on the CPU plugins. Any Tide error is a fine answer; a crash, sanitizer report, leak or hang is
// a finding. Programs are kept to small shapes (every dim and shape-like attribute small) so a
// run stays fast; what they do with those shapes is up to the fuzzer.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/executor/executor.h"
#include "core/framework/scope.h"
#include "core/ir/program_desc.h"
#include "core/platform/data_type.h"
#include "core/platform/enforce.h"
#include "fuzz_util.h"

namespace {

using namespace tide::core;  // NOLINT

constexpr int64_t kMaxDim = 64;
constexpr int64_t kMaxNumel = 4096;

bool SmallShape(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > kMaxDim) return false;
    n *= d > 0 ? d : 1;
    if (n > kMaxNumel) return false;
  }
  return true;
}

// Integer attributes (shapes, sizes, repeat counts) bounded too: they size outputs.
bool SmallAttrs(const OpDesc& op) {
  for (const auto& [name, value] : op.attrs()) {
    (void)name;
    bool ok = std::visit(
        [](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
            return v <= 4 * kMaxNumel;
          } else if constexpr (std::is_same_v<T, std::vector<int32_t>> ||
                               std::is_same_v<T, std::vector<int64_t>>) {
            return v.size() <= 9 && SmallShape(std::vector<int64_t>(v.begin(), v.end()));
          } else {
            return true;
          }
        },
        value);
    if (!ok) return false;
  }
  return true;
}

bool Small(const ProgramDesc& program) {
  for (size_t b = 0; b < program.Size(); ++b) {
    const BlockDesc& block = program.Block(b);
    for (const VarDesc* v : block.AllVars())
      if (!SmallShape(v->shape())) return false;
    for (const OpDesc* op : block.AllOps())  // a while loop may rightly never end: not a finding
      if (op->type() == "while" || !SmallAttrs(*op)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tide::fuzz::InitCoreOnce();
  static Executor* exe = new Executor(Place("cpu", 0));
  ProgramDesc program;
  try {
    program = ProgramDesc::Parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const Error&) {
    return 0;
  }
  if (program.Size() == 0 || program.Size() > 8 || !Small(program)) return -1;  // not in the corpus
  try {
    Scope scope;
    std::unique_ptr<PreparedBlock> prepared = exe->Prepare(program, 0);
    exe->Run(*prepared, &scope);
    exe->Run(*prepared, &scope);  // a second run takes the prepared fast paths
  } catch (const Error&) {
  }
  return 0;
}
