// model_fuzzer.cc: the saved-model loader (a `__model__` file is a serialised ProgramDesc): bytes
// that parse must serialise and parse again to the same program, and list without crashing.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/ir/program_desc.h"
#include "core/platform/enforce.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tide::core::ProgramDesc;
  ProgramDesc p;
  try {
    p = ProgramDesc::Parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const tide::core::Error&) {
    return 0;
  }
  std::string once = p.Serialize();
  (void)p.ToString();
  ProgramDesc again = ProgramDesc::Parse(once);  // what we wrote must read back
  if (again.Serialize() != once) std::abort();
  return 0;
}
