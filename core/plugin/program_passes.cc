// program_passes.cc: see program_passes.h.
#include "core/plugin/program_passes.h"

#include <glog/logging.h>

#include <cstdlib>
#include <memory>

#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// Whether `name` is on the comma-separated list of --disable_program_passes ('*': every pass).
bool Disabled(const std::string& name) {
  const std::string& list = FLAGS_disable_program_passes;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    if (item == "*" || item == name) return true;
    start = end + 1;
  }
  return false;
}

bool Applies(const ProgramPassEntry& pass, int32_t place_kind) {
  if (Disabled(pass.name)) return false;
  return place_kind < 0 || pass.place_kind < 0 || pass.place_kind == place_kind;
}

// Fluid's op_role bits for backward (1) and optimizer (2) ops (core/passes/backward.h's OpRole,
// a layer above this one).
constexpr int32_t kTrainingRoles = 1 | 2;

}  // namespace

bool HasProgramPasses(int32_t place_kind) {
  for (const ProgramPassEntry* pass : Registry::Global().ProgramPasses())
    if (Applies(*pass, place_kind)) return true;
  return false;
}

std::vector<std::string> RunProgramPasses(std::string* program, int32_t place_kind,
                                          const std::vector<std::string>& keep) {
  std::vector<const char*> keep_ptrs;
  for (const std::string& name : keep) keep_ptrs.push_back(name.c_str());
  std::vector<std::string> changed;
  for (const ProgramPassEntry* pass : Registry::Global().ProgramPasses()) {
    if (!Applies(*pass, place_kind)) continue;
    char* out = nullptr;
    size_t out_len = 0;
    // The result buffer is Buffer_Alloc's (malloc): freed here whatever the pass answered.
    std::unique_ptr<char, void (*)(void*)> owned(nullptr, &std::free);
    const std::string what = StrCat("program pass '", pass->name, "'");
    CallPlugin(
        [&] {
          TideStatus* s = pass->run(program->data(), program->size(), keep_ptrs.data(),
                                    keep_ptrs.size(), &out, &out_len, pass->user_data);
          owned.reset(out);
          return s;
        },
        what, pass->plugin_file);
    if (!out) continue;  // unchanged
    std::string result(out, out_len);
    try {
      ProgramDesc::Parse(result);  // validates (blocks, sub-block references)
    } catch (const Error& e) {
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, what, " (", pass->plugin_file,
                ") returned a program Tide cannot load: ", e.what());
    }
    VLOG(1) << what << " (" << pass->plugin_file << ") rewrote the program";
    *program = std::move(result);
    changed.push_back(pass->name);
  }
  return changed;
}

bool IsInferenceProgram(const ProgramDesc& program) {
  for (size_t b = 0; b < program.Size(); ++b)
    for (const OpDesc* op : program.Block(b).AllOps()) {
      const std::string& type = op->type();
      if (type.size() > 5 && type.compare(type.size() - 5, 5, "_grad") == 0) return false;
      auto it = op->attrs().find("op_role");
      if (it != op->attrs().end())
        if (const auto* role = std::get_if<int32_t>(&it->second))
          if (*role & kTrainingRoles) return false;
    }
  return true;
}

}  // namespace tide::core
