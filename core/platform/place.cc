// place.cc: the place-kind name table.
#include "core/platform/place.h"

#include "core/platform/enforce.h"
#include "core/platform/name_table.h"

namespace tide::core {
namespace {
NameTable& Kinds() {
  static auto* table = new NameTable;  // never destroyed: ids must outlive every static
  return *table;
}
}  // namespace

int32_t PlaceKindId(const std::string& name) { return Kinds().Intern(name); }
const std::string& PlaceKindName(int32_t id) { return Kinds().Name(id); }

std::string Place::ToString() const { return kind_name() + ":" + std::to_string(device); }

Place ParsePlace(const std::string& text) {
  auto colon = text.find(':');
  std::string kind = text.substr(0, colon);
  TIDE_ENFORCE(!kind.empty(), "bad place '", text, "': expected 'kind' or 'kind:index'");
  int32_t device = 0;
  if (colon != std::string::npos) {
    try {
      size_t used = 0;
      device = std::stoi(text.substr(colon + 1), &used);
      TIDE_ENFORCE(used == text.size() - colon - 1 && device >= 0, "");
    } catch (const std::exception&) {
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "bad place '", text, "': the index must be an integer >= 0");
    }
  }
  return Place(kind, device);
}

}  // namespace tide::core
