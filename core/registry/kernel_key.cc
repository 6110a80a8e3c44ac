// kernel_key.cc: the library name table and kernel-key formatting.
#include "core/registry/kernel_key.h"

#include "core/platform/name_table.h"
#include "core/platform/place.h"

namespace tide::core {
namespace {
NameTable& Libraries() {
  static auto* table = [] {
    auto* t = new NameTable;  // never destroyed; "plain" first so its id is 0
    t->Intern(kPlainLibrary);
    return t;
  }();
  return *table;
}
}  // namespace

int32_t LibraryId(const std::string& name) { return Libraries().Intern(name); }
const std::string& LibraryName(int32_t id) { return Libraries().Name(id); }

std::string OpKernelType::ToString() const {
  return "{" + PlaceKindName(place_kind) + ", " + DataTypeName(dtype) + ", " + LayoutName(layout) +
         ", " + LibraryName(library) + "}";
}

}  // namespace tide::core
