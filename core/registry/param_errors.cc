// param_errors.cc: see param_errors.h.
#include "core/registry/param_errors.h"

#include "core/platform/enforce.h"

namespace tide::core {

std::string UndeclaredParamError(const OpInfo& info, const std::string& param,
                                 const std::string& side) {
  const auto& declared = side == "input" ? info.proto.inputs() : info.proto.outputs();
  std::string names;
  for (const auto& d : declared) {
    if (d.name() == param) return "";
    names += (names.empty() ? "" : ", ") + d.name();
  }
  return StrCat("op '", info.type, "' has no ", side, " parameter '", param, "' (its ", side,
                "s are: ", names.empty() ? "none" : names, ")");
}

}  // namespace tide::core
