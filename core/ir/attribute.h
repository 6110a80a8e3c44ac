// attribute.h: an op attribute value (one of the AttrType forms), its protobuf form, and a C
// view of it for plugins (TideAttrValue).
#pragma once

#include <tide/plugin_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <tide/plugin/attr_type.hpp>
#include <variant>
#include <vector>

#include "framework.pb.h"

namespace tide::core {

// A sub-block of the program, by index (BLOCK / BLOCKS attributes).
struct BlockIndex {
  int32_t idx = -1;
  bool operator==(const BlockIndex& o) const { return idx == o.idx; }
};

// The alternative index equals the AttrType value (INT = 0 ... FLOAT64S = 12), except the last,
// double, which is FLOAT64 (15: PaddlePaddle's numbering, 13 and 14 being its VAR and VARS).
using Attribute =
    std::variant<int32_t, float, std::string, std::vector<int32_t>, std::vector<float>,
                 std::vector<std::string>, bool, std::vector<bool>, BlockIndex, int64_t,
                 std::vector<BlockIndex>, std::vector<int64_t>, std::vector<double>, double>;
using AttributeMap = std::map<std::string, Attribute>;

inline TideAttrType AttrTypeOf(const Attribute& a) {
  return a.index() == 13 ? TIDE_ATTR_FLOAT64 : static_cast<TideAttrType>(a.index());
}
using tide::AttrTypeName;  // the SDK's (tide/plugin/attr_type.hpp): one list of names
// Whether an op with `attrs` runs a sub-block (a block or a list of blocks among them).
inline bool HasBlockAttr(const AttributeMap& attrs) {
  for (const auto& [name, a] : attrs)
    if (std::holds_alternative<BlockIndex>(a) || std::holds_alternative<std::vector<BlockIndex>>(a))
      return true;
  return false;
}
std::string AttrToString(const Attribute& a);

void AttrToProto(const std::string& name, const Attribute& a, proto::OpDesc::Attr* out);
// Throws when the proto's fields do not match its type.
Attribute AttrFromProto(const proto::OpDesc::Attr& p);
// Copies a plugin's C value (e.g. a default or a grad op's attribute).
Attribute AttrFromC(const TideAttrValue& v);

// A converted `a` into `want` as Fluid's attribute checker converts it (integers widen, become
// floats or bools; float64 -> float; [] -> any list); false where not (float -> int, e.g., or a
// float64 beyond float's range).
bool ConvertAttr(const Attribute& a, TideAttrType want, Attribute* out);
// A double a float attribute can take: finite ones within float's range (1e40 would become inf
// silently), and inf and NaN as given.
bool FitsFloat(double v);

// The attributes of one op as C values, for plugins. Built once per op instance; the views
// point into `attrs`, which must outlive this object and not change.
// a == b, inline: kernels look attributes and parameters up by their (short) names on every run,
// and a call to strcmp per candidate was a visible share of a tiny op's time.
inline bool SameName(const std::string& a, const char* b) {
  const char* p = a.c_str();
  while (*p != '\0' && *p == *b) ++p, ++b;
  return *p == *b;
}

class AttrViews {
 public:
  AttrViews() = default;
  explicit AttrViews(const AttributeMap& attrs);
  AttrViews(const AttrViews&) = delete;
  AttrViews& operator=(const AttrViews&) = delete;
  // nullptr when absent. A linear scan: ops have a handful of attributes, and it avoids hashing.
  const TideAttrValue* Find(const char* name) const;

 private:
  struct Entry {
    const std::string* name;
    TideAttrValue value;
    std::vector<int32_t> ints;  // backing for bools / block lists
    std::vector<const char*> strings;
  };
  std::vector<Entry> entries_;
};

}  // namespace tide::core
