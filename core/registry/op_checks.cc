// op_checks.cc: argument and attribute checks of an OpDesc against its OpProto.
#include "core/registry/op_checks.h"

#include <limits>
#include <set>

#include "core/platform/enforce.h"
#include "core/platform/status.h"
#include "core/registry/param_errors.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// Attributes any op may carry: set by the framework (roles, placement), not declared by ops;
// out_threshold is the range Paddle's quantization observed of an op's output (the int8 rewrite
// of a quantized model reads it: python/tide/contrib/quantization/qdq.py).
const std::set<std::string>& FrameworkAttrs() {
  static const std::set<std::string> names = {"op_role",      "op_role_var", "op_namescope",
                                              "op_callstack", "op_device",   "library",
                                              "out_threshold"};
  return names;
}

// A kernel library's request (a registered library's attribute), or a bool "use_<library>"
// hint for a library that is not loaded (Fluid programs carry them on many ops): any op may
// carry one; without the library it asks for nothing.
bool IsLibraryHint(const std::string& name, const Attribute& value) {
  if (Registry::Global().IsLibraryAttr(name)) return true;
  return name.rfind("use_", 0) == 0 && std::holds_alternative<bool>(value);
}

void CheckSide(const OpInfo& info, const VariableNameMap& given,
               const google::protobuf::RepeatedPtrField<proto::OpProto::Var>& declared,
               const char* side) {
  for (const auto& kv : given) {
    const proto::OpProto::Var* decl = nullptr;
    for (const auto& d : declared)
      if (d.name() == kv.first) decl = &d;
    if (!decl) TIDE_FAIL(TIDE_INVALID_ARGUMENT, UndeclaredParamError(info, kv.first, side));
    if (!decl->duplicable() && kv.second.size() > 1)
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "op '", info.type, "' ", side, " '", kv.first,
                "' takes one variable, got ", kv.second.size());
    for (const auto& name : kv.second)
      TIDE_ENFORCE(!name.empty(), "op '", info.type, "' ", side, " '", kv.first,
                   "' has an empty variable name");
  }
  for (const auto& d : declared) {
    if (d.dispensable()) continue;
    auto it = given.find(d.name());
    if (it == given.end() || it->second.empty())
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "op '", info.type, "' needs ", side, " '", d.name(),
                "', which is not set");
  }
}

}  // namespace

void CheckArguments(const OpInfo& info, const OpDesc& op) {
  CheckSide(info, op.inputs(), info.proto.inputs(), "input");
  CheckSide(info, op.outputs(), info.proto.outputs(), "output");
}

void CheckAndFillAttrs(const OpInfo& info, AttributeMap* attrs) {
  for (const auto& kv : *attrs) {
    if (!info.FindAttr(kv.first) && !FrameworkAttrs().count(kv.first) &&
        !IsLibraryHint(kv.first, kv.second)) {
      std::string names;
      for (const auto& a : info.attrs) names += (names.empty() ? "" : ", ") + a.name;
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "op '", info.type, "' has no attribute '", kv.first,
                "' (its attributes are: ", names.empty() ? "none" : names, ")");
    }
  }
  for (const auto& spec : info.attrs) {
    auto it = attrs->find(spec.name);
    if (it == attrs->end()) {
      if (!spec.has_default)
        TIDE_FAIL(TIDE_INVALID_ARGUMENT, "op '", info.type, "' needs attribute '", spec.name, "' (",
                  AttrTypeName(spec.type), "), which is not set");
      it = attrs->emplace(spec.name, spec.default_value).first;
    } else {
      Attribute converted;
      if (!ConvertAttr(it->second, spec.type, &converted)) {
        const TideAttrType have = AttrTypeOf(it->second);
        const bool too_big = (spec.type == TIDE_ATTR_FLOAT && have == TIDE_ATTR_FLOAT64) ||
                             (spec.type == TIDE_ATTR_FLOATS && have == TIDE_ATTR_FLOAT64S);
        TIDE_FAIL(TIDE_INVALID_ARGUMENT, "op '", info.type, "' attribute '", spec.name,
                  "' must be ", AttrTypeName(spec.type), ", got ", AttrTypeName(have), " ",
                  AttrToString(it->second),
                  too_big ? StrCat(": beyond float's range (+-", std::numeric_limits<float>::max(),
                                   "), where it would become inf")
                          : "");
      }
      it->second = std::move(converted);
    }
    if (spec.check) {
      AttributeMap one{{spec.name, it->second}};
      AttrViews view(one);
      ThrowIfStatus(spec.check(view.Find(spec.name.c_str()), spec.check_data),
                    StrCat("op '", info.type, "' attribute '", spec.name, "'"), info.plugin_file);
    }
  }
}

}  // namespace tide::core
